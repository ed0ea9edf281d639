package dev.writeonce.shim;

import dev.writeonce.core.work.WorkerPool;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

/**
 * What every shim instance of one bucket in this JVM shares: what is known of its keys ({@link
 * KnownKeys}), the queued completions ({@link CompletionQueue}) and the threads that run them. With
 * Hadoop's file system cache disabled, or under several users, one job commit goes through several
 * instances (FileOutputCommitter merges through one and deletes its temporary tree through
 * another); they must see one queue and one cache. Instances {@link Registry#acquire} the state
 * when they initialise and {@link Registry#release} it when they close; the last to close ends it.
 *
 * <p>Every public operation of the file system runs inside {@link #enter}: the one place where the
 * barrier runs and the cache learns what changes.
 *
 * <p>Lock order: a {@link CompletionQueue} batch's monitor, then the queue's; {@link KnownKeys}'
 * monitor is never held while taking another. No store request and no wait for another thread runs
 * under any of them.
 */
final class BucketState {

  /** Identifies a bucket of one store: the same bucket name may live in several stores. */
  record Key(String bucket, String endpoint) {}

  /** The bucket states of this JVM, reference-counted. */
  static final class Registry {

    /** The registry of this JVM; tests use their own, one per simulated process. */
    static final Registry JVM = new Registry();

    private final Map<Key, BucketState> states = new HashMap<>();

    /**
     * The state of a bucket, created with the first instance's settings.
     *
     * @param listingWindowMillis this instance's listing window: the state answers with the
     *     shortest window of its open instances
     * @param recordsPerDelete records of completed files deleted in one request, as soon as that
     *     many wait
     */
    synchronized BucketState acquire(
        Key key,
        long listingWindowMillis,
        int recordsPerDelete,
        LongSupplier nanoClock,
        java.util.function.Supplier<WorkerPool> completionThreads) {
      BucketState state = states.get(key);
      if (state == null) {
        state = new BucketState(key, nanoClock, completionThreads.get(), recordsPerDelete);
        states.put(key, state);
      }
      state.windows.add(listingWindowMillis);
      state.known.window(minimum(state.windows));
      return state;
    }

    synchronized void release(BucketState state, long listingWindowMillis) {
      state.windows.remove(listingWindowMillis);
      if (state.windows.isEmpty() && state.known.anyMovedInView()) {
        // Files moved in this JVM's view only exist nowhere else: the state outlives its last
        // instance, for the next one to rename them into place (Spark's driver may close a file
        // system between its job commit and those renames).
        return;
      }
      if (state.windows.isEmpty()) {
        states.remove(state.key, state);
        state.completionThreads.pool().shutdown();
      } else {
        state.known.window(minimum(state.windows));
      }
    }

    /** The open states; for tests. */
    synchronized int size() {
      return states.size();
    }

    private static long minimum(List<Long> windows) {
      long least = Long.MAX_VALUE;
      for (long window : windows) {
        least = Math.min(least, window);
      }
      return least;
    }
  }

  private final Key key;
  private final List<Long> windows = new ArrayList<>();
  private final WorkerPool completionThreads;
  final KnownKeys known;
  final CompletionQueue queue;

  private BucketState(
      Key key, LongSupplier nanoClock, WorkerPool completionThreads, int recordsPerDelete) {
    this.key = key;
    this.completionThreads = completionThreads;
    this.known = new KnownKeys(0, nanoClock);
    this.queue =
        new CompletionQueue(
            completionThreads,
            new CompletionQueue.Landing() {
              @Override
              public void promised(String destinationKey) {
                known.promise(destinationKey);
              }

              @Override
              public void ended(String destinationKey, boolean landed) {
                known.promiseEnded(destinationKey, landed);
              }
            },
            key.bucket(),
            recordsPerDelete);
  }

  /**
   * Enters an operation on keys: waits for the queued completions it could observe or depends on
   * (and fails with a failure it must report), then, for an operation that changes keys, marks them
   * changing until the operation is closed.
   *
   * @param temporary which keys lie under temporary directories, for the barrier's rules
   */
  Operation enter(
      Operation.Kind kind, List<String> keys, Predicate<String> temporary, ShimStatistics counters)
      throws IOException {
    for (String k : keys) {
      queue.barrier(kind, k, temporary.test(k), counters);
    }
    if (kind.changes) {
      known.begin(keys);
    }
    List<Boolean> temporaries = new ArrayList<>(keys.size());
    keys.forEach(k -> temporaries.add(temporary.test(k)));
    return new Operation(this, kind, keys, temporaries);
  }

  /**
   * Closes an operation: what it reported is applied, or its keys are left unknown; an operation
   * that handed its keys over (a create whose stream is still open) leaves them changing until
   * {@link #endHandedOver}. A delete or mkdirs of a temporary directory may end a failed batch.
   */
  void leave(Operation operation) {
    if (!operation.kind().changes) {
      return;
    }
    KnownKeys.Report report = operation.report();
    if (report.handedOver()) {
      return;
    }
    known.end(operation.keys(), report);
    if (report.isSucceeded()
        && (operation.kind() == Operation.Kind.DELETE || operation.kind() == Operation.Kind.MKDIRS)
        && operation.temporary(0)) {
      queue.temporaryTreeChanged(
          operation.keys().get(0), operation.kind() == Operation.Kind.DELETE);
    }
  }

  /** A write handed over by its operation ended (its stream closed, or failed). */
  void endHandedOver(List<String> keys, KnownKeys.Report report) {
    known.end(keys, report);
  }
}
