package dev.writeonce.core.publish;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Where one publication spent its time: each phase's wall time and how many items it handled
 * (partitions read, files copied, calls made), in the order the phases first ran. A phase that runs
 * twice (the fence of a two-step publication) adds up. Logged once per statement, and read by the
 * benchmarks.
 */
public final class PublicationProfile {

  /** One phase: its time and the items it handled. */
  public record Phase(long nanos, int items) {
    public long millis() {
      return TimeUnit.NANOSECONDS.toMillis(nanos);
    }
  }

  private final Map<String, Phase> phases = new LinkedHashMap<>();

  synchronized void clear() {
    phases.clear();
  }

  /** A phase that started at {@code startedNanos} ended now, having handled {@code items}. */
  synchronized void lap(String phase, long startedNanos, int items) {
    long nanos = System.nanoTime() - startedNanos;
    phases.merge(
        phase,
        new Phase(nanos, items),
        (a, b) -> new Phase(a.nanos() + b.nanos(), a.items() + b.items()));
  }

  /** The phases so far, in the order they first ran. */
  public synchronized Map<String, Phase> phases() {
    return new LinkedHashMap<>(phases);
  }

  /** The time of all phases. */
  public synchronized long totalMillis() {
    return TimeUnit.NANOSECONDS.toMillis(phases.values().stream().mapToLong(Phase::nanos).sum());
  }

  @Override
  public synchronized String toString() {
    StringBuilder line = new StringBuilder();
    for (Map.Entry<String, Phase> phase : phases.entrySet()) {
      if (line.length() > 0) {
        line.append(", ");
      }
      line.append(phase.getKey())
          .append(' ')
          .append(phase.getValue().millis())
          .append(" ms (")
          .append(phase.getValue().items())
          .append(')');
    }
    return line.append("; total ").append(totalMillis()).append(" ms").toString();
  }
}
