package dev.writeonce.shim;

import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The listing window of a bucket's cache: how long what the store told answers, on a monotonic
 * clock, counted from when the request was sent. The shortest window of the bucket's open
 * instances; 0 keeps no listing and no absence.
 */
@GuardedByCache
final class Window {

  private final LongSupplier nanoClock;
  private long ttlNanos;

  Window(long ttlMillis, LongSupplier nanoClock) {
    this.nanoClock = nanoClock;
    set(ttlMillis);
  }

  void set(long ttlMillis) {
    ttlNanos = TimeUnit.MILLISECONDS.toNanos(ttlMillis);
  }

  long now() {
    return nanoClock.getAsLong();
  }

  long millis() {
    return TimeUnit.NANOSECONDS.toMillis(ttlNanos);
  }

  /** Whether listings and absences are kept at all. */
  boolean caching() {
    return ttlNanos > 0;
  }

  /** Whether what was learnt from a request sent at {@code sentNanos} no longer answers. */
  boolean expired(long sentNanos, long now) {
    return now - sentNanos >= ttlNanos;
  }
}
