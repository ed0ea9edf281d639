package dev.writeonce.core.store;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/** Requests sent by type, safe to update from many threads. */
public final class RequestCounters {

  private final EnumMap<RequestType, LongAdder> counts = new EnumMap<>(RequestType.class);

  public RequestCounters() {
    for (RequestType type : RequestType.values()) {
      counts.put(type, new LongAdder());
    }
  }

  public void increment(RequestType type) {
    counts.get(type).increment();
  }

  public long get(RequestType type) {
    return counts.get(type).sum();
  }

  /** A copy of the current counts. */
  /** All requests sent so far. */
  public long total() {
    return snapshot().values().stream().mapToLong(Long::longValue).sum();
  }

  public EnumMap<RequestType, Long> snapshot() {
    EnumMap<RequestType, Long> copy = new EnumMap<>(RequestType.class);
    counts.forEach((type, count) -> copy.put(type, count.sum()));
    return copy;
  }

  /** The counts since an earlier snapshot. */
  public EnumMap<RequestType, Long> since(Map<RequestType, Long> before) {
    EnumMap<RequestType, Long> delta = snapshot();
    delta.replaceAll((type, now) -> now - before.getOrDefault(type, 0L));
    return delta;
  }
}
