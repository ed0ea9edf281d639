package dev.writeonce.shim;

import static dev.writeonce.shim.Keys.parentOf;
import static dev.writeonce.shim.Keys.prefixOf;

import java.util.List;
import java.util.TreeMap;

/**
 * Keys in flight: keys an operation of this JVM is changing right now, answered as unknown until it
 * ends, and destinations whose completion is queued (promised), answered as files, with directories
 * above them. Both are counted: several operations may hold one key.
 */
@GuardedByCache
final class InFlight {

  private final TreeMap<String, Integer> changing = new TreeMap<>();
  private final TreeMap<String, Integer> promised = new TreeMap<>();

  void begin(List<String> keys) {
    for (String key : keys) {
      changing.merge(key, 1, Integer::sum);
    }
  }

  void end(List<String> keys) {
    for (String key : keys) {
      changing.merge(key, -1, (a, b) -> a + b == 0 ? null : a + b);
    }
  }

  /** Whether an operation other than the one changing {@code own} is changing the key or above. */
  boolean changing(String key, List<String> own) {
    if (changing.isEmpty()) {
      return false;
    }
    for (String k = key; k != null; k = parentOf(k)) {
      Integer count = changing.get(k);
      if (count != null && count > (own.contains(k) ? 1 : 0)) {
        return true;
      }
    }
    return false;
  }

  /** Whether a key under the directory is being changed. */
  boolean changingUnder(String directoryKey) {
    String prefix = prefixOf(directoryKey);
    String next = changing.ceilingKey(prefix);
    return next != null && next.startsWith(prefix);
  }

  void promise(String key) {
    promised.merge(key, 1, Integer::sum);
  }

  void unpromise(String key) {
    promised.merge(key, -1, (a, b) -> a + b == 0 ? null : a + b);
  }

  boolean promised(String key) {
    return promised.containsKey(key);
  }

  /** Whether a destination under the key (not the key itself) is promised. */
  boolean promisedUnder(String key) {
    String prefix = prefixOf(key);
    String next = promised.ceilingKey(prefix);
    return next != null && next.startsWith(prefix) && !next.equals(key);
  }

  /** The promised destinations under a directory. */
  List<String> promisedIn(String directoryKey) {
    String prefix = prefixOf(directoryKey);
    return List.copyOf(promised.subMap(prefix, true, prefix + Character.MAX_VALUE, false).keySet());
  }
}
