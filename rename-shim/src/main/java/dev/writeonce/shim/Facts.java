package dev.writeonce.shim;

import static dev.writeonce.shim.Keys.parentOf;
import static dev.writeonce.shim.Keys.prefixOf;

import dev.writeonce.core.model.PendingFile;
import dev.writeonce.core.store.ObjectInfo;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * Facts about single keys: what this JVM did (wrote a record or a file, made a directory, removed a
 * key) or saw (a record it read, a key the store reported absent). What the store told and this
 * JVM's removals expire with the window; what this JVM wrote stays until it is removed or the bound
 * forgets it, oldest first.
 */
@GuardedByCache
final class Facts {

  /** A fact about one key: what it is, and since when. */
  record Fact(Known known, long atNanos, boolean expires) {}

  private final Window window;
  private final TreeMap<String, Fact> facts = new TreeMap<>();
  private final ArrayDeque<String> order = new ArrayDeque<>();

  Facts(Window window) {
    this.window = window;
  }

  /** The fact at a key while it answers; an expired one is forgotten. */
  Fact get(String key, long now) {
    Fact fact = facts.get(key);
    if (fact != null && fact.expires() && window.expired(fact.atNanos(), now)) {
      facts.remove(key);
      return null;
    }
    return fact;
  }

  /** The fact at a key, expired or not. */
  Fact peek(String key) {
    return facts.get(key);
  }

  void put(String key, Fact fact) {
    if (facts.put(key, fact) == null) {
      order.addLast(key);
    }
  }

  /** The facts about keys under a directory. */
  SortedMap<String, Fact> under(String directoryKey) {
    String prefix = prefixOf(directoryKey);
    return facts.subMap(prefix, true, prefix + Character.MAX_VALUE, false);
  }

  /** Whether something is known to exist under the key. */
  boolean existsUnder(String key) {
    String prefix = prefixOf(key);
    for (Map.Entry<String, Fact> entry : facts.tailMap(prefix, false).entrySet()) {
      if (!entry.getKey().startsWith(prefix)) {
        return false;
      }
      if (entry.getValue().known().exists()) {
        return true;
      }
    }
    return false;
  }

  /** Whether the nearest fact above the key says it is absent. */
  boolean absentAbove(String key, long now) {
    for (String above = parentOf(key); above != null; above = parentOf(above)) {
      Fact fact = get(above, now);
      if (fact != null) {
        return fact.known().isAbsent();
      }
    }
    return false;
  }

  /** The record known at a key, if one. */
  Optional<PendingFile> record(String key) {
    Fact fact = facts.get(key);
    return fact == null ? Optional.empty() : Optional.ofNullable(fact.known().record());
  }

  /** The record known at a key, if the object holding it has the given ETag. */
  Optional<PendingFile> record(String key, String etag) {
    Fact fact = facts.get(key);
    if (fact == null || fact.known().record() == null || fact.known().object() == null) {
      return Optional.empty();
    }
    return etag.equals(fact.known().object().etag())
        ? Optional.of(fact.known().record())
        : Optional.empty();
  }

  /** The object holding the record known at a key, when its size is known. */
  Optional<ObjectInfo> recordObject(String key) {
    Fact fact = facts.get(key);
    if (fact == null
        || fact.known().record() == null
        || fact.known().object() == null
        || fact.known().object().size() < 0) {
      return Optional.empty();
    }
    return Optional.of(fact.known().object());
  }

  /** Applies a change of this JVM's to the facts it concerns. */
  void apply(Change change, long now) {
    if (change instanceof Change.Tree tree) {
      apply(new Change.MadeDirectory(tree.key()), now);
      for (ObjectInfo object : tree.objects()) {
        if (!facts.containsKey(object.key())) {
          apply(new Change.Wrote(object.key(), object, null), now);
        }
      }
      return;
    }
    String key = change.key();
    if (change instanceof Change.Wrote || change instanceof Change.MadeDirectory) {
      for (String above = parentOf(key); above != null; above = parentOf(above)) {
        Fact fact = facts.get(above);
        if (fact != null && !fact.known().exists()) {
          facts.remove(above);
        }
      }
    } else {
      facts.remove(key);
      under(key).clear();
    }
    if (change instanceof Change.Wrote wrote) {
      PendingFile record = wrote.record();
      Fact before = facts.get(key);
      if (wrote.object().size() < 0 && before != null && before.known().isFile()) {
        return; // a write reported without its object: what is known of it already stands
      }
      if (record == null
          && before != null
          && before.known().record() != null
          && before.known().object() != null
          && before.known().object().etag().equals(wrote.object().etag())) {
        record = before.known().record(); // the same object, reported again without its record
      }
      put(key, new Fact(Known.file(wrote.object(), record), now, false));
    } else if (change instanceof Change.MadeDirectory) {
      put(key, new Fact(Known.DIRECTORY, now, false));
    } else if (change instanceof Change.Removed && window.caching()) {
      put(key, new Fact(Known.ABSENT, now, true));
    }
  }

  // ---- bound ------------------------------------------------------------------------------------

  int size() {
    return facts.size();
  }

  /** Forgets the facts that expired. */
  void expire(long now) {
    facts.values().removeIf(fact -> fact.expires() && window.expired(fact.atNanos(), now));
  }

  /**
   * Forgets the oldest facts until at most {@code limit} are kept, never one {@code pinned} (of
   * which there are {@code pinnedCount}); each key forgotten is handed to {@code forgotten}.
   */
  void forgetOldest(
      int limit, Predicate<String> pinned, int pinnedCount, Consumer<String> forgotten) {
    while (facts.size() > limit && !order.isEmpty()) {
      String oldest = order.removeFirst();
      if (pinned.test(oldest)) {
        order.addLast(oldest);
        if (order.size() <= pinnedCount) {
          break;
        }
        continue;
      }
      facts.remove(oldest);
      forgotten.accept(oldest);
    }
    if (order.size() > 2 * facts.size() + 1024) {
      order.removeIf(key -> !facts.containsKey(key));
    }
  }

  void clear() {
    facts.clear();
    order.clear();
  }
}
