package dev.writeonce.shim;

import dev.writeonce.core.model.PendingFile;
import dev.writeonce.core.store.ObjectInfo;
import java.util.List;

/**
 * A change this JVM made to a bucket's keys: {@link KnownKeys} applies it at once to every listing
 * and fact it concerns, and replays it on every listing that was on the wire while it happened.
 */
sealed interface Change
    permits Change.Wrote, Change.MadeDirectory, Change.Removed, Change.Unsure, Change.Tree {

  String key();

  /** A file now exists at the key: its object (size -1 when not known) and record, if one. */
  record Wrote(String key, ObjectInfo object, PendingFile record) implements Change {}

  /** A directory now exists at the key. */
  record MadeDirectory(String key) implements Change {}

  /** Nothing exists at or under the key any more. */
  record Removed(String key) implements Change {}

  /** An operation at the key ended without a known outcome: the key and all under it unknown. */
  record Unsure(String key) implements Change {}

  /**
   * A directory renamed into place at the key: these objects (size -1 where not known) are what the
   * rename put under it. Where a listing showed the key absent just before, they are all it holds,
   * and its listings are made from them.
   */
  record Tree(String key, List<ObjectInfo> objects) implements Change {}

  /** The object of a file whose details are not known: size -1, no ETag. */
  static ObjectInfo placeholder(String key) {
    return new ObjectInfo(key, -1, null, 0);
  }
}
