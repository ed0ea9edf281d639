package dev.writeonce.shim;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Destinations found too large to list whole are kept by the bucket's cache, for every instance:
 * each instance asks with its own length (ten of its listing windows), and the map stays bounded.
 */
class TooLargeDestinationsTest {

  private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
  private final KnownKeys known = new KnownKeys(1_000, nanos::get);

  private static long windows(long windowMillis) {
    return 10 * TimeUnit.MILLISECONDS.toNanos(windowMillis);
  }

  @Test
  void aShortWindowsQuestionLeavesALongWindowsFindingInPlace() {
    known.foundTooLarge("out"); // an instance with a 60 s window
    nanos.addAndGet(TimeUnit.SECONDS.toNanos(15));

    assertThat(known.foundTooLarge("out", windows(1_000))).as("expired for a 1 s window").isFalse();
    assertThat(known.foundTooLarge("out", windows(60_000)))
        .as("15 s after its own finding, within its 600 s")
        .isTrue();
  }

  @Test
  void destinationsFoundTooLargeAreKeptAtMostABoundedNumber() {
    for (int i = 0; i < 10_000; i++) {
      known.foundTooLarge("table" + i);
    }
    assertThat(known.tooLargeKept()).isLessThanOrEqualTo(Listings.MAX_TOO_LARGE);
    assertThat(known.foundTooLarge("table9999", windows(1_000))).as("the latest stays").isTrue();
  }
}
