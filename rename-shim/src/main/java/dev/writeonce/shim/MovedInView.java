package dev.writeonce.shim;

import static dev.writeonce.shim.Keys.prefixOf;

import dev.writeonce.core.model.PendingFile;
import dev.writeonce.core.store.ObjectInfo;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Pending files a job commit's merge moved within the temporary tree in this JVM's view only (into
 * Spark's staging directory of a dynamic partition overwrite): each file's record stays at its
 * stored key, in the store, until the file is renamed into place or deleted, when the record goes.
 * Never forgotten while it lasts: forgetting it would lose the file.
 */
@GuardedByCache
final class MovedInView {

  /** Files moved in view only at most; past it a merge moves records in the store. */
  static final int MAX = 100_000;

  /** A file moved in view only: where its record is stored, the record, and the stored object. */
  record Move(String storedKey, PendingFile record, ObjectInfo stored) {

    /** The object the file shows at a key it was moved to: the stored one, renamed. */
    ObjectInfo shownAt(String key) {
      return new ObjectInfo(key, stored.size(), stored.etag(), stored.lastModifiedMillis());
    }
  }

  /** Files moved in view only, by the key they show at. */
  private final TreeMap<String, Move> moves = new TreeMap<>();

  /** The stored key of each such file's record (and its twin), to the key the file shows at. */
  private final Map<String, String> fileOfStored = new HashMap<>();

  boolean isFull() {
    return moves.size() >= MAX;
  }

  /** Moves a file to a new key; returns the object it shows there. */
  ObjectInfo move(String sourceKey, String targetKey, PendingFile record, ObjectInfo storedObject) {
    Move before = moves.remove(sourceKey);
    Move move =
        before == null
            ? new Move(sourceKey, record, storedObject)
            : new Move(before.storedKey(), record, before.stored());
    moves.put(targetKey, move);
    fileOfStored.put(move.storedKey(), targetKey);
    // The record's twin from the task commit names the same upload: kept alike.
    Layouts.attemptTwinOf(move.storedKey(), record.taskAttempt())
        .ifPresent(twin -> fileOfStored.put(twin, targetKey));
    return move.shownAt(targetKey);
  }

  boolean isMoved(String key) {
    return moves.containsKey(key);
  }

  /** Where the record of a file moved in view only is stored. */
  Optional<String> storedKeyOf(String key) {
    Move move = moves.get(key);
    return move == null ? Optional.empty() : Optional.of(move.storedKey());
  }

  /** Whether a stored object holds the record of a file moved in view only. */
  boolean holdsRecordOfMoved(String storedKey) {
    return fileOfStored.containsKey(storedKey);
  }

  boolean any() {
    return !moves.isEmpty();
  }

  int size() {
    return moves.size();
  }

  /** The files moved under a directory, by the key they show at. */
  Map<String, Move> under(String directoryKey) {
    String prefix = prefixOf(directoryKey);
    return moves.subMap(prefix, true, prefix + Character.MAX_VALUE, false);
  }

  /** The stored keys under a prefix that hold records of files moved in view only. */
  List<String> storedUnder(String prefix) {
    List<String> stored = new ArrayList<>();
    for (String key : fileOfStored.keySet()) {
      if (key.startsWith(prefix)) {
        stored.add(key);
      }
    }
    return stored;
  }

  /**
   * What a directory holds as this JVM sees it, from the store's objects under it: without the
   * records of files moved in view only, and with the files moved into it.
   */
  List<ObjectInfo> asSeen(String directoryKey, List<ObjectInfo> stored) {
    List<ObjectInfo> objects = new ArrayList<>();
    for (ObjectInfo object : stored) {
      if (!holdsRecordOfMoved(object.key())) {
        objects.add(object);
      }
    }
    for (Map.Entry<String, Move> entry : under(directoryKey).entrySet()) {
      objects.add(entry.getValue().shownAt(entry.getKey()));
    }
    return objects;
  }

  /** Files at or under a key that is removed or unknown now are gone. */
  void forget(String key) {
    if (moves.isEmpty()) {
      return;
    }
    List<String> gone = new ArrayList<>();
    if (moves.containsKey(key)) {
      gone.add(key);
    }
    gone.addAll(under(key).keySet());
    for (String file : gone) {
      moves.remove(file);
      fileOfStored.values().removeIf(file::equals);
    }
  }
}
