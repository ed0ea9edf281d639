package dev.writeonce.shim;

import static dev.writeonce.shim.Keys.commonDirectory;
import static dev.writeonce.shim.Keys.isAtOrUnder;
import static dev.writeonce.shim.Keys.parentOf;

import dev.writeonce.core.work.WorkerPool;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

/**
 * The completions FileOutputCommitter v1's job commit queues instead of waiting for, and the rules
 * that make every caller see them as done: one per bucket per JVM ({@link BucketState}).
 *
 * <p><b>Rounds.</b> The job commit lists its job attempt directory ({@code _temporary/<n>}), then
 * renames every file of every committed task in it into place. That listing starts a round: the
 * files it shows ({@link #startRound}). A rename of a file of the round onto its predicted key
 * queues the completion and returns; a rename of anything else completes at once. The rename that
 * moves the round's last file waits for every completion the round queued and fails with the first
 * that failed ({@link #moved}): the job commit's merge itself reaches the barrier that reports,
 * whatever it does afterwards (FileOutputCommitter may skip its cleanup, ignore its failure, and
 * write no {@code _SUCCESS}, by the job's own settings, which the file system never sees).
 *
 * <p><b>Batches.</b> Queued completions are grouped by their root, the directory above both the
 * temporary file and its destination (the job's output). A call waits for a batch first when it
 * could observe its completions or depends on them ({@link #barrier}): a call on a queued
 * destination, under one, or on a directory above one (a status of such a directory does not wait:
 * it is a directory either way); a call on a queued file's temporary path or a directory above it;
 * a create under the root outside temporary directories ({@code _SUCCESS}); {@code close}. Records
 * of completed files are deleted in bulk, in the background as soon as they fill a request and by
 * the barrier for the rest, and no barrier returns while such a delete is under way: until it is
 * done, a delete of the temporary tree would take a moved file's old record for a pending file.
 *
 * <p><b>A failed completion belongs to the job commit that queued it.</b> The round's last rename
 * reports it, and the batch stays failed until that job is aborted: every create under the root
 * outside temporary directories and every {@link #awaitUnder} fails with it, however often. A
 * delete or rename of the temporary tree that held the failed file is refused with it until the
 * failure has been reported to the committing side, so that no cleanup aborts the failed file's
 * upload before the job knows; after that, the delete is the job's abort, which ends the batch.
 * Reads never report it: they wait, and see the store as it is.
 *
 * <p>Locks: each batch and round is guarded by its own monitor, the maps by this object's; no store
 * request and no wait runs under either.
 */
final class CompletionQueue {

  /** A completion to queue. */
  @FunctionalInterface
  interface Completion {
    void run() throws IOException;
  }

  /** Deletes the records of completed files, in bulk: the records of the instance that queued. */
  @FunctionalInterface
  interface RecordDeletes {
    void delete(List<String> recordKeys) throws IOException;
  }

  /** Tells the cache of a destination whose completion is queued, and whether it landed. */
  interface Landing {
    void promised(String destinationKey);

    void ended(String destinationKey, boolean landed);
  }

  /** Completions one root queues before the renaming thread waits for them. */
  static final int MAX_QUEUED = 10_000;

  /**
   * A queued completion: the file's record ({@code source}), the keys to delete once it went
   * through (the record, and its twin at the attempt's path when the task commit left one), where
   * the file goes, and whose it is.
   */
  private record Queued(
      String source,
      List<String> recordKeys,
      String destination,
      Future<?> future,
      RecordDeletes records,
      Object owner) {}

  /** The completions of one root. */
  private final class Batch {
    final String root;
    final List<Queued> running = new ArrayList<>();
    final Set<String> destinations = new HashSet<>();
    final Set<String> aboveDestinations = new HashSet<>();
    final Set<String> sources = new HashSet<>();

    /** Directories above the sources, up to their temporary root (out/_temporary). */
    final Set<String> aboveSources = new HashSet<>();

    /** Directories above the temporary root: only a delete or rename of them reaches a record. */
    final Set<String> aroundSources = new HashSet<>();

    final List<Queued> completed = new ArrayList<>();

    /** The record keys of the completed entries, deleted in the background once they fill one. */
    int completedRecordKeys;

    /** Deletes of completed entries' records under way; each caller waits for all of them. */
    final List<Future<?>> deletingRecords = new ArrayList<>();

    final Set<String> failedSources = new HashSet<>();
    IOException failure;
    boolean told;
    boolean ended;

    Batch(String root) {
      this.root = root;
    }

    /**
     * Whether a call on the key could observe or disturb a queued completion or a record still to
     * delete; {@code structural} for a delete or rename, which reach every record below the key.
     */
    boolean watches(String key, boolean structural) {
      if (destinations.contains(key)
          || aboveDestinations.contains(key)
          || sources.contains(key)
          || aboveSources.contains(key)
          || (structural && aroundSources.contains(key))) {
        return true;
      }
      for (String parent = parentOf(key); parent != null; parent = parentOf(parent)) {
        if (destinations.contains(parent)) {
          return true;
        }
      }
      return false;
    }

    boolean holdsFailedSource(String key) {
      for (String source : failedSources) {
        if (isAtOrUnder(source, key)) {
          return true;
        }
      }
      return false;
    }
  }

  private final WorkerPool pool;
  private final Landing landing;
  private final String bucket;
  private final Map<String, Batch> batches = new LinkedHashMap<>();
  private final Map<String, MergeRound> rounds = new HashMap<>();
  private final int recordsPerDelete;

  /**
   * @param recordsPerDelete records of completed files deleted in one request as soon as that many
   *     wait, so that the deletes run beside the merge rather than all at its barrier (S3's
   *     DeleteObjects takes 1,000 keys)
   */
  CompletionQueue(WorkerPool pool, Landing landing, String bucket, int recordsPerDelete) {
    this.pool = pool;
    this.landing = landing;
    this.bucket = bucket;
    this.recordsPerDelete = recordsPerDelete;
  }

  // ---- rounds -------------------------------------------------------------------------------

  /**
   * A job commit listed its job attempt directory: these files are the ones it will move, in a
   * round started at {@code startedNanos} (the cache's clock). A round of the same job attempt
   * still under way ends there.
   */
  void startRound(String jobAttemptKey, Collection<String> files, long startedNanos) {
    MergeRound before;
    synchronized (this) {
      before = rounds.put(jobAttemptKey, new MergeRound(jobAttemptKey, files, startedNanos));
    }
    if (before != null) {
      before.end();
    }
  }

  private synchronized MergeRound roundOf(String sourceKey) {
    return Layouts.jobAttemptOf(sourceKey).map(rounds::get).orElse(null);
  }

  /** The round under way in the job attempt directory a temporary key lies in, if any. */
  Optional<MergeRound> roundAround(String temporaryKey) {
    return Optional.ofNullable(roundOf(temporaryKey));
  }

  /** Whether a rename of this temporary file may queue its completion: it is a round's. */
  boolean inRound(String sourceKey) {
    MergeRound round = roundOf(sourceKey);
    return round != null && round.holds(sourceKey);
  }

  /**
   * A rename moved these files out of their job attempt directory. When they were the last of its
   * round, this waits for every completion the round queued and fails with the first that failed:
   * the job commit's merge reports its own failures.
   */
  void moved(String jobAttemptKey, Collection<String> sourceKeys, ShimStatistics counters)
      throws IOException {
    MergeRound round;
    synchronized (this) {
      round = rounds.get(jobAttemptKey);
    }
    if (round == null) {
      return;
    }
    Optional<List<String>> roots = round.moved(sourceKeys);
    if (roots.isEmpty()) {
      return;
    }
    synchronized (this) {
      rounds.remove(jobAttemptKey, round);
    }
    round.end();
    for (String root : roots.get()) {
      Batch batch = batch(root);
      if (batch != null) {
        await(batch, Report.COMMITTING_SIDE, counters);
      }
    }
  }

  /** Rounds under way now; for tests. */
  synchronized int rounds() {
    return rounds.size();
  }

  // ---- queueing -----------------------------------------------------------------------------

  /**
   * Queues the completion of a round's file renamed from {@code sourceKey} (its record) to {@code
   * destinationKey}. Fails at once, naming the first failure, when a completion of the same batch
   * has failed: the job commit stops there, as it would have without the queue.
   */
  void queue(
      String sourceKey,
      List<String> recordKeys,
      String destinationKey,
      Completion completion,
      RecordDeletes records,
      Object owner,
      ShimStatistics counters)
      throws IOException {
    String root = commonDirectory(sourceKey, destinationKey);
    MergeRound round = roundOf(sourceKey);
    if (round != null) {
      round.queuedUnder(root);
    }
    while (true) {
      Batch batch;
      synchronized (this) {
        batch = batches.computeIfAbsent(root, Batch::new);
      }
      boolean full;
      synchronized (batch) {
        if (batch.ended) {
          continue; // a barrier retired it meanwhile
        }
        if (batch.failure != null) {
          batch.told = true;
          throw reported(batch);
        }
        batch.destinations.add(destinationKey);
        addParents(destinationKey, batch.aboveDestinations);
        batch.sources.add(sourceKey);
        addSourceParents(sourceKey, batch);
        landing.promised(destinationKey);
        // The task reads its entry under the batch's monitor, which this thread holds until the
        // entry is set.
        Queued[] entry = new Queued[1];
        Future<?> future =
            pool.pool()
                .submit(
                    () -> {
                      Queued own;
                      synchronized (batch) {
                        own = entry[0];
                      }
                      return complete(batch, own, completion);
                    });
        entry[0] = new Queued(sourceKey, recordKeys, destinationKey, future, records, owner);
        batch.running.add(entry[0]);
        full = batch.running.size() >= MAX_QUEUED;
      }
      counters.completionsQueued.incrementAndGet();
      if (full) {
        await(
            batch,
            Report.COMMITTING_SIDE,
            counters); // keeps memory bounded in a commit of many files
      }
      return;
    }
  }

  private Void complete(Batch batch, Queued entry, Completion completion) throws IOException {
    try {
      completion.run();
      landing.ended(entry.destination(), true);
      synchronized (batch) {
        batch.completed.add(entry);
        batch.completedRecordKeys += entry.recordKeys().size();
        if (batch.completedRecordKeys >= recordsPerDelete) {
          startDeletingCompletedRecords(batch);
        }
      }
      return null;
    } catch (IOException | RuntimeException e) {
      landing.ended(entry.destination(), false);
      synchronized (batch) {
        batch.failedSources.add(entry.source());
        IOException failure = failureOf(entry, e);
        if (batch.failure == null) {
          batch.failure = failure;
        } else {
          batch.failure.addSuppressed(failure);
        }
      }
      throw e;
    }
  }

  private IOException failureOf(Queued entry, Exception e) {
    return new IOException(
        "completing the upload of s3a://"
            + bucket
            + "/"
            + entry.source()
            + " into s3a://"
            + bucket
            + "/"
            + entry.destination()
            + " failed after its rename had returned: "
            + e.getMessage()
            + ". Files of the same commit completed meanwhile are in place; this one's upload"
            + " stays pending under its record until the job is aborted, which deletes the"
            + " temporary directory and aborts it",
        e);
  }

  // ---- barriers -----------------------------------------------------------------------------

  /** Who a barrier reports a failure to. */
  private enum Report {
    /** A read: waits, reports nothing. */
    NOBODY,
    /** The committing side: the failure is reported, every time, and counts as told. */
    COMMITTING_SIDE
  }

  /**
   * Waits for the completions a call could observe or depends on, and reports a failure where the
   * call belongs to the committing side; see the class comment.
   *
   * @param key the key the call names
   * @param temporary whether the key lies under a temporary directory
   */
  void barrier(Operation.Kind kind, String key, boolean temporary, ShimStatistics counters)
      throws IOException {
    for (Batch batch : batches()) {
      boolean watched;
      boolean covered;
      synchronized (batch) {
        watched =
            batch.watches(key, kind == Operation.Kind.DELETE || kind == Operation.Kind.RENAME);
        covered = isAtOrUnder(key, batch.root);
        if (kind == Operation.Kind.STATUS
            && batch.failure == null
            && batch.aboveDestinations.contains(key)
            && !batch.destinations.contains(key)) {
          counters.directoriesOfQueued.incrementAndGet();
          continue; // a directory either way: the status is answered without waiting
        }
      }
      switch (kind) {
        case STATUS, READ -> {
          if (watched) {
            await(batch, Report.NOBODY, counters);
          }
        }
        case CREATE, MKDIRS -> {
          if (watched || (!temporary && covered)) {
            await(batch, !temporary && covered ? Report.COMMITTING_SIDE : Report.NOBODY, counters);
          }
        }
        case DELETE, RENAME -> {
          if (watched) {
            await(batch, Report.NOBODY, counters);
          }
          synchronized (batch) {
            if (batch.failure != null && !batch.told && batch.holdsFailedSource(key)) {
              batch.told = true;
              throw reported(batch);
            }
          }
        }
        case AWAIT -> {
          if (covered || isAtOrUnder(batch.root, key)) {
            await(batch, Report.COMMITTING_SIDE, counters);
          }
        }
        case CLOSE -> await(batch, Report.NOBODY, counters);
      }
    }
  }

  /**
   * After a delete or mkdirs of a temporary directory succeeded: a failed batch whose failure the
   * committing side was told ends once the temporary tree that held its files is gone (the job's
   * abort) or set up again (a new job); a delete also ends the rounds of the job attempt
   * directories it removed, whose files are gone with them.
   */
  void temporaryTreeChanged(String key, boolean deleted) {
    if (deleted) {
      List<MergeRound> ended = new ArrayList<>();
      synchronized (this) {
        rounds
            .entrySet()
            .removeIf(
                round -> Keys.isAtOrUnder(round.getKey(), key) && ended.add(round.getValue()));
      }
      ended.forEach(MergeRound::end);
    }
    for (Batch batch : batches()) {
      synchronized (batch) {
        if (batch.failure == null
            || !batch.told
            || !batch.running.isEmpty()
            || !batch.aboveSources.contains(key)
                && !batch.aroundSources.contains(key)
                && !batch.sources.contains(key)) {
          continue;
        }
        batch.ended = true;
      }
      synchronized (this) {
        batches.remove(batch.root, batch);
      }
    }
  }

  /**
   * Waits for what one instance queued, as it closes; its failure, if the committing side was never
   * told, is reported here rather than lost.
   */
  void awaitOwnedBy(Object owner, ShimStatistics counters) throws IOException {
    IOException first = null;
    for (Batch batch : batches()) {
      boolean owns;
      synchronized (batch) {
        owns =
            batch.running.stream().anyMatch(q -> q.owner() == owner)
                || batch.completed.stream().anyMatch(q -> q.owner() == owner);
      }
      if (!owns) {
        continue;
      }
      try {
        await(batch, Report.NOBODY, counters);
        synchronized (batch) {
          if (batch.failure != null && !batch.told) {
            batch.told = true;
            throw reported(batch);
          }
        }
      } catch (IOException e) {
        first = first == null ? e : first;
      }
    }
    if (first != null) {
      throw first;
    }
  }

  /** Whether any batch is queued, failed or unfinished; for tests. */
  synchronized boolean idle() {
    return batches.isEmpty();
  }

  private synchronized List<Batch> batches() {
    return new ArrayList<>(batches.values());
  }

  private synchronized Batch batch(String root) {
    return batches.get(root);
  }

  private void await(Batch batch, Report report, ShimStatistics counters) throws IOException {
    List<Queued> waiting;
    synchronized (batch) {
      waiting = new ArrayList<>(batch.running);
    }
    if (!waiting.isEmpty()) {
      counters.barriers.incrementAndGet();
    }
    long started = System.nanoTime();
    try {
      for (Queued queued : waiting) {
        try {
          queued.future().get();
        } catch (InterruptedException e) {
          throw interrupted(batch, e);
        } catch (ExecutionException e) {
          // recorded by the completion itself
        }
      }
    } finally {
      counters.barrierWaitNanos.addAndGet(System.nanoTime() - started);
    }
    synchronized (batch) {
      batch.running.removeAll(new HashSet<>(waiting)); // a list of 10,000 is searched once
    }
    deleteCompletedRecords(batch);
    synchronized (batch) {
      if (batch.failure == null) {
        if (batch.running.isEmpty()
            && batch.completed.isEmpty()
            && batch.deletingRecords.isEmpty()) {
          batch.ended = true;
          synchronized (this) {
            batches.remove(batch.root, batch);
          }
        }
        return;
      }
      if (batch.running.isEmpty()) {
        // Nothing left to wait for: only the failure and the temporary tree stay watched.
        batch.destinations.clear();
        batch.aboveDestinations.clear();
      }
      if (report == Report.COMMITTING_SIDE) {
        batch.told = true;
        throw reported(batch);
      }
    }
  }

  /**
   * Deletes the records of the batch's completed entries, and waits for the deletes other callers
   * have under way: until then, a record of a file already completed or moved is still in the
   * store, where a delete of its temporary tree would take it for a pending file and abort the
   * upload that its new record names. A delete that failed leaves its entries for the next caller,
   * which tries them again.
   */
  private void deleteCompletedRecords(Batch batch) throws IOException {
    while (true) {
      Future<?> own = null;
      List<Future<?>> all;
      synchronized (batch) {
        if (!batch.completed.isEmpty()) {
          own = startDeletingCompletedRecords(batch);
        }
        all = new ArrayList<>(batch.deletingRecords);
      }
      IOException ownFailure = null;
      for (Future<?> deleting : all) {
        try {
          deleting.get();
        } catch (InterruptedException e) {
          throw interrupted(batch, e);
        } catch (ExecutionException e) {
          if (deleting == own) {
            ownFailure =
                e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
          }
        }
      }
      synchronized (batch) {
        batch.deletingRecords.removeAll(all);
        if (ownFailure == null && batch.completed.isEmpty()) {
          return;
        }
      }
      if (ownFailure != null) {
        throw ownFailure;
      }
      // another caller's delete failed and left its entries, or more completed: delete them here
    }
  }

  /**
   * Hands the deletes of the batch's completed entries' records to the pool, whose futures every
   * waiter can wait for; registered before the caller leaves the batch's monitor, which it holds,
   * so that no caller finds the entries neither completed nor having their records deleted.
   */
  private Future<?> startDeletingCompletedRecords(Batch batch) {
    List<Queued> completed = new ArrayList<>(batch.completed);
    batch.completed.clear();
    batch.completedRecordKeys = 0;
    Future<?> deleting =
        pool.pool()
            .submit(
                () -> {
                  deleteRecords(batch, completed);
                  synchronized (batch) {
                    completed.forEach(q -> batch.sources.remove(q.source()));
                  }
                  return null;
                });
    batch.deletingRecords.add(deleting);
    return deleting;
  }

  private InterruptedIOException interrupted(Batch batch, InterruptedException e) {
    Thread.currentThread().interrupt();
    InterruptedIOException interrupted =
        new InterruptedIOException(
            "interrupted waiting for the completions queued under s3a://"
                + bucket
                + "/"
                + batch.root);
    interrupted.initCause(e);
    return interrupted;
  }

  /** Deletes the records of completed files, per instance that queued them; kept on failure. */
  private void deleteRecords(Batch batch, List<Queued> completed) throws IOException {
    if (completed.isEmpty()) {
      return;
    }
    Map<RecordDeletes, List<String>> byInstance = new LinkedHashMap<>();
    for (Queued queued : completed) {
      byInstance
          .computeIfAbsent(queued.records(), r -> new ArrayList<>())
          .addAll(queued.recordKeys());
    }
    try {
      for (Map.Entry<RecordDeletes, List<String>> entry : byInstance.entrySet()) {
        entry.getKey().delete(entry.getValue());
      }
    } catch (IOException | RuntimeException e) {
      synchronized (batch) {
        batch.completed.addAll(completed); // the next barrier tries again
        completed.forEach(q -> batch.completedRecordKeys += q.recordKeys().size());
      }
      throw e;
    }
  }

  private static IOException reported(Batch batch) {
    IOException report = new IOException(batch.failure.getMessage(), batch.failure.getCause());
    for (Throwable more : batch.failure.getSuppressed()) {
      report.addSuppressed(more);
    }
    return report;
  }

  /**
   * Notes the directories above a source: those within its temporary root, where any call could
   * observe the record, and those above it, where only a delete or rename could.
   */
  private static void addSourceParents(String sourceKey, Batch batch) {
    String root = Layouts.temporaryRootOf(sourceKey).orElse("");
    for (String parent = parentOf(sourceKey); parent != null; parent = parentOf(parent)) {
      if (!root.isEmpty() && isAtOrUnder(parent, root)) {
        batch.aboveSources.add(parent);
      } else {
        batch.aroundSources.add(parent);
      }
    }
  }

  private static void addParents(String key, Set<String> into) {
    for (String parent = parentOf(key); parent != null; parent = parentOf(parent)) {
      into.add(parent);
    }
  }
}
