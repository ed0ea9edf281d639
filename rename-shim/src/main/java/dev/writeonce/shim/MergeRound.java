package dev.writeonce.shim;

import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * One job commit's merge: the files its listing of the job attempt directory showed, those still to
 * move, and the roots of the batches their completions were queued in. The listing that starts it
 * creates it ({@link CompletionQueue#startRound}), the completion queue holds it, and it ends with
 * its last move ({@link #moved}), or when the temporary tree that holds its job attempt directory
 * is deleted (the job's abort or cleanup): no round outlives its commit.
 *
 * <p>Guarded by its own monitor; no request and no wait runs under it.
 */
final class MergeRound {

  private final String jobAttemptKey;
  private final long startedNanos;
  private final Set<String> remaining;
  private final Set<String> roots = new HashSet<>();
  private volatile boolean ended;

  MergeRound(String jobAttemptKey, Collection<String> files, long startedNanos) {
    this.jobAttemptKey = jobAttemptKey;
    this.remaining = new HashSet<>(files);
    this.startedNanos = startedNanos;
  }

  String jobAttemptKey() {
    return jobAttemptKey;
  }

  /** When the round started, just after the job commit's listing, on the cache's clock. */
  long startedNanos() {
    return startedNanos;
  }

  /**
   * Whether the round is over (its last file moved, its job attempt deleted, or another round of
   * the same job attempt started): the listings it held answer within the window only again.
   */
  boolean ended() {
    return ended;
  }

  void end() {
    ended = true;
  }

  /** Whether the file is one the round still has to move. */
  synchronized boolean holds(String sourceKey) {
    return remaining.contains(sourceKey);
  }

  /** A completion of the round's was queued in the batch of this root. */
  synchronized void queuedUnder(String root) {
    roots.add(root);
  }

  /**
   * These files moved. When they were the round's last, the round is over: the roots of the batches
   * whose completions the job commit must wait for.
   */
  synchronized Optional<List<String>> moved(Collection<String> sourceKeys) {
    if (!remaining.removeAll(sourceKeys) || !remaining.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(List.copyOf(roots));
  }
}
