package dev.writeonce.shim;

import static dev.writeonce.shim.Keys.prefixOf;

import java.util.NavigableMap;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Task attempt directories this JVM wrote records into, owned while every object under them is a
 * record it wrote (with the object holding it) and none was forgotten: their contents are then
 * known without a listing. Anything else found in such a directory (another run's leftovers under a
 * reused attempt id) is not the attempt's output, and the job's cleanup removes it.
 */
@GuardedByCache
final class OwnedAttempts {

  /** Owned attempt directories kept at most; past it they are forgotten (listed instead). */
  private static final int MAX = 10_000;

  private final TreeMap<String, Boolean> attempts = new TreeMap<>();

  /** Whether the attempt directory is owned now. */
  boolean owned(String attemptKey) {
    return Boolean.TRUE.equals(attempts.get(attemptKey));
  }

  /** Keeps attempts owned only while every object under them is a known record. */
  void apply(Change change) {
    String key = change.key();
    Optional<String> attempt = Layouts.taskAttemptOf(key);
    if (change instanceof Change.Wrote wrote) {
      if (attempt.isPresent() && !attempt.get().equals(key)) {
        boolean known = wrote.record() != null && wrote.object().size() >= 0;
        attempts.merge(attempt.get(), known, Boolean::logicalAnd);
        if (attempts.size() > MAX) {
          attempts.clear();
        }
      }
      return;
    }
    if (change instanceof Change.MadeDirectory) {
      return;
    }
    boolean removed = change instanceof Change.Removed;
    if (attempt.isPresent() && !attempt.get().equals(key) && !removed) {
      attempts.computeIfPresent(attempt.get(), (dir, owned) -> false);
    }
    NavigableMap<String, Boolean> covered =
        attempts.subMap(prefixOf(key), true, prefixOf(key) + Character.MAX_VALUE, false);
    if (removed) {
      covered.clear();
      attempts.remove(key);
    } else {
      covered.replaceAll((dir, owned) -> false);
      attempts.computeIfPresent(key, (dir, owned) -> false);
    }
  }

  /** A fact about a key in an attempt directory was forgotten: the attempt is listed from now. */
  void forgotten(String key) {
    Layouts.taskAttemptOf(key)
        .ifPresent(attempt -> attempts.computeIfPresent(attempt, (dir, owned) -> false));
  }
}
