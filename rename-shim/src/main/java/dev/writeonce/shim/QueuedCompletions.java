package dev.writeonce.shim;

import dev.writeonce.core.engine.WorkerPool;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

/**
 * The shim's barrier: completions that renames into place queue instead of waiting for, and the one
 * place that decides which later calls wait for them.
 *
 * <p>FileOutputCommitter's job commit renames file after file, each a round trip the next one waits
 * for. A rename of one pending file from its temporary tree onto its predicted key queues the
 * completion on the shim's pool and returns; the file's record stays until a barrier, which deletes
 * the records of completed files in bulk. Completions are grouped by their <em>root</em>, the
 * directory above both the temporary file and its destination (the job's output directory). A call
 * waits for a root's completions first when it could observe them or depends on them:
 *
 * <ul>
 *   <li>any call on a queued destination, on a file under one, or on a directory above one (a
 *       status of such a directory does not wait: it is a directory either way);
 *   <li>any call on a queued file's temporary path or a directory above it (the temporary tree's
 *       delete or rename);
 *   <li>a create or mkdirs under the root, outside temporary directories (FileOutputCommitter's
 *       {@code _SUCCESS});
 *   <li>{@code close}.
 * </ul>
 *
 * A completion that failed is reported by the first barrier that waits for it, as an {@link
 * IOException} naming the file; creates under the root keep failing with it until the temporary
 * tree is deleted or set up again, so a commit that swallows its cleanup's failure cannot mark the
 * job successful. The failed file's record stays, so deleting the temporary tree aborts its upload.
 *
 * <p>The barrier holds across the shim's instances in one JVM for the same bucket: with Hadoop's
 * file system cache disabled ({@code fs.s3a.impl.disable.cache}), FileOutputCommitter merges
 * through one instance and deletes the temporary tree through another, and that delete must wait
 * for the first instance's completions rather than abort their uploads.
 */
final class QueuedCompletions {

  /** A completion to queue. */
  @FunctionalInterface
  interface Completion {
    void run() throws IOException;
  }

  /** Deletes records of completed files, in bulk. */
  @FunctionalInterface
  interface RecordDeletes {
    void delete(List<String> keys) throws IOException;
  }

  /** The queued completions of one root, and what they make a call wait for. */
  private static final class Batch {
    final String root;
    final List<Future<?>> running = new ArrayList<>();
    final Set<String> destinations = new HashSet<>();
    final Set<String> aboveDestinations = new HashSet<>();
    final Set<String> sources = new HashSet<>();
    final Set<String> aboveSources = new HashSet<>();
    final List<String> completedRecords = new ArrayList<>();
    IOException failure;
    boolean reported;
    boolean ended;

    Batch(String root) {
      this.root = root;
    }

    boolean watches(String key) {
      if (destinations.contains(key)
          || aboveDestinations.contains(key)
          || sources.contains(key)
          || aboveSources.contains(key)) {
        return true;
      }
      for (String parent = parentOf(key); parent != null; parent = parentOf(parent)) {
        if (destinations.contains(parent)) {
          return true;
        }
      }
      return false;
    }

    boolean covers(String key) {
      return root.isEmpty() || key.equals(root) || key.startsWith(root + "/");
    }
  }

  /** Completions one root queues before the renaming thread waits for them. */
  static final int MAX_QUEUED = 10_000;

  private final WorkerPool pool;
  private final RecordDeletes recordDeletes;
  private final java.util.function.Consumer<String> landed;
  private final ShimStatistics counters;
  private final String bucket;
  private final Map<String, Batch> batches = new ConcurrentHashMap<>();

  /** The open instances of each bucket in this JVM, held weakly: an instance never closed goes. */
  private static final Map<String, Set<QueuedCompletions>> OPEN = new ConcurrentHashMap<>();

  /**
   * @param landed told each destination once its completion went through, so that listings sent
   *     before it are not trusted for it
   */
  QueuedCompletions(
      WorkerPool pool,
      RecordDeletes recordDeletes,
      java.util.function.Consumer<String> landed,
      ShimStatistics counters,
      String bucket) {
    this.pool = pool;
    this.recordDeletes = recordDeletes;
    this.landed = landed;
    this.counters = counters;
    this.bucket = bucket;
    OPEN.computeIfAbsent(
            bucket,
            b -> Collections.synchronizedSet(Collections.newSetFromMap(new WeakHashMap<>())))
        .add(this);
  }

  /** This instance and the other open ones of its bucket, whose completions it waits for too. */
  private List<QueuedCompletions> sharingTheBucket() {
    Set<QueuedCompletions> open = OPEN.get(bucket);
    if (open == null) {
      return List.of(this);
    }
    synchronized (open) {
      List<QueuedCompletions> all = new ArrayList<>(open);
      if (!open.contains(this)) {
        all.add(this);
      }
      return all;
    }
  }

  /** After {@link #awaitAll} at the file system's close: other instances stop waiting for it. */
  void close() {
    Set<QueuedCompletions> open = OPEN.get(bucket);
    if (open != null) {
      open.remove(this);
    }
  }

  /**
   * Queues the completion of a file renamed from {@code sourceKey} (its record) to {@code
   * destinationKey}; the record is deleted by the barrier once the completion succeeded.
   */
  void queue(String sourceKey, String destinationKey, Completion completion) throws IOException {
    String root = commonDirectory(sourceKey, destinationKey);
    while (true) {
      Batch batch = batches.computeIfAbsent(root, Batch::new);
      boolean full;
      synchronized (batch) {
        if (batch.ended) {
          continue; // a barrier retired it meanwhile
        }
        batch.destinations.add(destinationKey);
        addParents(destinationKey, batch.aboveDestinations);
        batch.sources.add(sourceKey);
        addParents(sourceKey, batch.aboveSources);
        batch.running.add(
            pool.pool().submit(() -> complete(batch, sourceKey, destinationKey, completion)));
        full = batch.running.size() >= MAX_QUEUED;
      }
      counters.completionsQueued.incrementAndGet();
      if (full) {
        await(batch, false); // keeps memory bounded in a commit of very many files
      }
      return;
    }
  }

  private Void complete(Batch batch, String sourceKey, String destinationKey, Completion completion)
      throws IOException {
    try {
      completion.run();
      for (QueuedCompletions instance : sharingTheBucket()) {
        instance.landed.accept(destinationKey);
      }
      synchronized (batch) {
        batch.completedRecords.add(sourceKey);
      }
      return null;
    } catch (IOException | RuntimeException e) {
      synchronized (batch) {
        if (batch.failure == null) {
          batch.failure =
              new IOException(
                  "completing the upload of s3a://"
                      + bucket
                      + "/"
                      + sourceKey
                      + " into s3a://"
                      + bucket
                      + "/"
                      + destinationKey
                      + " failed after its rename had returned: "
                      + e.getMessage()
                      + ". Files of the same commit completed meanwhile are in place; this one's"
                      + " upload stays pending under its record, and deleting the temporary"
                      + " directory aborts it",
                  e);
          batch.reported = false;
        }
      }
      throw e;
    }
  }

  /**
   * Whether a status of this key may say "directory" without waiting: a directory above a queued
   * destination is one whether or not the completion has run.
   */
  boolean directoryOfQueued(String key) {
    for (QueuedCompletions instance : sharingTheBucket()) {
      for (Batch batch : instance.batches.values()) {
        synchronized (batch) {
          if (batch.failure == null
              && batch.aboveDestinations.contains(key)
              && !batch.destinations.contains(key)) {
            return true;
          }
        }
      }
    }
    return false;
  }

  /** Before a status, listing or open of a key, and a delete or rename of one. */
  void beforeUse(String key) throws IOException {
    for (QueuedCompletions instance : sharingTheBucket()) {
      for (Batch batch : instance.batches.values()) {
        if (watches(batch, key)) {
          instance.await(batch, false);
        }
      }
    }
  }

  /** Before a rename: its source and its destination are both used. */
  void beforeRename(String sourceKey, String destinationKey) throws IOException {
    beforeUse(sourceKey);
    beforeUse(destinationKey);
  }

  /**
   * Before a create or mkdirs: waits for the roots it lies under, and keeps reporting their failure
   * while it is a create outside temporary directories.
   */
  void beforeCreate(String key, boolean temporary) throws IOException {
    for (QueuedCompletions instance : sharingTheBucket()) {
      for (Batch batch : instance.batches.values()) {
        if (watches(batch, key) || (!temporary && batch.covers(key))) {
          instance.await(batch, !temporary);
        }
      }
    }
  }

  /**
   * After a delete, or a mkdirs of a temporary directory (a new job's setup): a root whose failure
   * was reported ends once the temporary tree that held its files is gone or set up again.
   */
  void afterTemporaryTreeChanged(String key) {
    for (QueuedCompletions instance : sharingTheBucket()) {
      for (Batch batch : instance.batches.values()) {
        synchronized (batch) {
          if (batch.failure != null && batch.reported && batch.aboveSources.contains(key)) {
            batch.ended = true;
            instance.batches.remove(batch.root, batch);
          }
        }
      }
    }
  }

  /** Before the file system closes: waits for every root. */
  void awaitAll() throws IOException {
    IOException first = null;
    for (Batch batch : batches.values()) {
      try {
        await(batch, false);
      } catch (IOException e) {
        first = first == null ? e : first;
      }
    }
    if (first != null) {
      throw first;
    }
  }

  /** Waits for the completions queued under a directory, the caller's output for example. */
  void awaitUnder(String key) throws IOException {
    for (QueuedCompletions instance : sharingTheBucket()) {
      for (Batch batch : instance.batches.values()) {
        if (batch.covers(key) || key.isEmpty() || batch.root.startsWith(key + "/")) {
          instance.await(batch, true);
        }
      }
    }
  }

  /** Whether completions of any root are queued or failed; for tests. */
  boolean idle() {
    return batches.isEmpty();
  }

  private static boolean watches(Batch batch, String key) {
    synchronized (batch) {
      return batch.watches(key);
    }
  }

  private void await(Batch batch, boolean failureAlwaysReported) throws IOException {
    List<Future<?>> waiting;
    synchronized (batch) {
      waiting = new ArrayList<>(batch.running);
    }
    if (!waiting.isEmpty()) {
      counters.barriers.incrementAndGet();
    }
    for (Future<?> future : waiting) {
      try {
        future.get();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new InterruptedIOException(
            "interrupted waiting for the completions queued under s3a://"
                + bucket
                + "/"
                + batch.root);
      } catch (ExecutionException e) {
        // recorded by the completion itself
      }
    }
    List<String> completed;
    synchronized (batch) {
      batch.running.removeAll(new HashSet<>(waiting)); // a list of 10,000 is searched once
      completed = new ArrayList<>(batch.completedRecords);
      batch.completedRecords.clear();
    }
    if (!completed.isEmpty()) {
      recordDeletes.delete(completed);
    }
    synchronized (batch) {
      completed.forEach(batch.sources::remove);
      if (batch.failure == null) {
        if (batch.running.isEmpty()) {
          batch.ended = true;
          batches.remove(batch.root, batch);
        }
        return;
      }
      if (batch.running.isEmpty()) {
        // Nothing left to wait for: only the failure and the temporary tree stay watched.
        batch.destinations.clear();
        batch.aboveDestinations.clear();
      }
      if (!batch.reported || failureAlwaysReported) {
        batch.reported = true;
        throw new IOException(batch.failure.getMessage(), batch.failure.getCause());
      }
    }
  }

  /** The directory above both keys ("" for the bucket's root). */
  static String commonDirectory(String a, String b) {
    String common = "";
    int from = 0;
    while (true) {
      int slash = a.indexOf('/', from);
      if (slash < 0 || !b.startsWith(a.substring(0, slash + 1))) {
        return common;
      }
      common = a.substring(0, slash);
      from = slash + 1;
    }
  }

  private static void addParents(String key, Set<String> into) {
    for (String parent = parentOf(key); parent != null; parent = parentOf(parent)) {
      into.add(parent);
    }
  }

  /** The parent directory's key, "" for a key at the bucket's root, null above that. */
  private static String parentOf(String key) {
    if (key.isEmpty()) {
      return null;
    }
    int slash = key.lastIndexOf('/');
    return slash < 0 ? "" : key.substring(0, slash);
  }
}
