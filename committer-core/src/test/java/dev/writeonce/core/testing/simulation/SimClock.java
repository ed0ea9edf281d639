package dev.writeonce.core.testing.simulation;

import java.util.function.LongConsumer;
import java.util.function.LongSupplier;

/** The time of a schedule: it moves only when the schedule moves it. */
public interface SimClock {

  long millis();

  void advance(long millis);

  static SimClock of(LongSupplier millis, LongConsumer advance) {
    return new SimClock() {
      @Override
      public long millis() {
        return millis.getAsLong();
      }

      @Override
      public void advance(long by) {
        advance.accept(by);
      }
    };
  }
}
