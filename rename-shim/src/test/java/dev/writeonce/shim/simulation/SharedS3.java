package dev.writeonce.shim.simulation;

import dev.writeonce.core.testing.s3.MemoryS3;
import dev.writeonce.core.testing.s3.StoreRequest;
import dev.writeonce.core.testing.simulation.Scheduler;
import dev.writeonce.core.testing.simulation.SimClock;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What a schedule's processes share: the store, the scheduler, and time. The store's clock and the
 * processes' monotonic clocks move together, only when the schedule steps them.
 */
final class SharedS3 {

  static final String BUCKET = "bucket";

  private final MemoryS3 store;
  private final Scheduler scheduler;
  private final AtomicLong nanos = new AtomicLong(TimeUnit.HOURS.toNanos(1));
  private final boolean tracing;
  private final AtomicLong requests = new AtomicLong();

  SharedS3(long seed, boolean tracing) {
    this.store = new MemoryS3(seed);
    this.store.createBucket(BUCKET);
    this.store.setMinimumPartSize(1);
    this.scheduler = new Scheduler(seed);
    this.tracing = tracing;
  }

  MemoryS3 store() {
    return store;
  }

  Scheduler scheduler() {
    return scheduler;
  }

  boolean tracing() {
    return tracing;
  }

  long nanos() {
    return nanos.get();
  }

  long millis() {
    return store.nowMillis();
  }

  /** The store's clock, moving every clock on together. */
  SimClock clock() {
    return SimClock.of(this::millis, this::advanceMillis);
  }

  /** Moves every clock on together. */
  void advanceMillis(long millis) {
    nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(millis));
    store.advanceMillis(millis);
  }

  /** A request reached the store; every request moves the clocks on a millisecond. */
  void sent(Process process, StoreRequest request) {
    requests.incrementAndGet();
    advanceMillis(1);
  }

  long requests() {
    return requests.get();
  }
}
