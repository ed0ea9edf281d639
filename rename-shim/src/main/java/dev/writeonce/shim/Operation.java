package dev.writeonce.shim;

import java.io.IOException;
import java.util.List;

/**
 * One call of the file system, from {@link BucketState#enter} to {@link #close}: the bracket every
 * public operation of {@link RenameShimFileSystem} runs in. Entering waits for the queued
 * completions the call could observe or depends on ({@link CompletionQueue#barrier}) and, for a
 * call that changes keys, marks them changing in {@link KnownKeys}; closing applies what the call
 * reported it did ({@link #report}), or, when it did not report success, leaves its keys unknown.
 */
final class Operation implements AutoCloseable {

  /** What a call does to the keys it names. */
  enum Kind {
    /** A status or existence check. */
    STATUS(false),
    /** A listing, an open, a content summary. */
    READ(false),
    /** A file created (its stream may stay open after the call). */
    CREATE(true),
    MKDIRS(true),
    /** keys: source, destination. */
    RENAME(true),
    DELETE(true),
    /** Waits for the completions queued under a directory, reporting their failure. */
    AWAIT(false),
    /** The file system closes. */
    CLOSE(false);

    final boolean changes;

    Kind(boolean changes) {
      this.changes = changes;
    }
  }

  private final BucketState state;
  private final Kind kind;
  private final List<String> keys;
  private final List<Boolean> temporary;
  private final KnownKeys.Report report = new KnownKeys.Report();
  private boolean closed;
  private ShimStatistics timedInto;
  private long startedNanos;

  Operation(BucketState state, Kind kind, List<String> keys, List<Boolean> temporary) {
    this.state = state;
    this.kind = kind;
    this.keys = List.copyOf(keys);
    this.temporary = List.copyOf(temporary);
  }

  /** Whether the key at this position lies under a temporary directory. */
  boolean temporary(int index) {
    return temporary.get(index);
  }

  Kind kind() {
    return kind;
  }

  List<String> keys() {
    return keys;
  }

  /** What is known of a key, as this operation sees it: its own changes leave it known. */
  Known known(String key) {
    return state.known.answer(key, keys);
  }

  /** Every object under a directory, as this operation sees it ({@link KnownKeys#objectsUnder}). */
  java.util.Optional<List<dev.writeonce.core.store.ObjectInfo>> objectsUnder(String key) {
    return state.known.objectsUnder(key, keys);
  }

  /** Where the call reports what it changed; see {@link KnownKeys.Report}. */
  KnownKeys.Report report() {
    return report;
  }

  /** Adds this call's time, from when it was entered (its barrier waits included), on close. */
  void timeInto(ShimStatistics counters, long startedNanos) {
    this.timedInto = counters;
    this.startedNanos = startedNanos;
  }

  @Override
  public void close() throws IOException {
    if (!closed) {
      closed = true;
      try {
        state.leave(this);
      } finally {
        if (timedInto != null) {
          timedInto.called(kind, System.nanoTime() - startedNanos);
        }
      }
    }
  }
}
