package dev.writeonce.shim;

import dev.writeonce.core.model.PendingFile;
import dev.writeonce.core.store.ObjectInfo;

/**
 * What the shim knows of one key without asking the store ({@link KnownKeys#known}).
 *
 * @param state file, directory, absent, or unknown (ask the store)
 * @param object the file's object as a listing gave it; null when not listed (a file this JVM
 *     wrote, or one whose completion is queued)
 * @param record the pending-file record the file holds, when it is one this JVM wrote or read
 */
record Known(Known.State state, ObjectInfo object, PendingFile record) {

  enum State {
    FILE,
    DIRECTORY,
    ABSENT,
    UNKNOWN
  }

  static final Known UNKNOWN = new Known(State.UNKNOWN, null, null);
  static final Known ABSENT = new Known(State.ABSENT, null, null);
  static final Known DIRECTORY = new Known(State.DIRECTORY, null, null);

  static Known file(ObjectInfo object, PendingFile record) {
    return new Known(State.FILE, object, record);
  }

  boolean isFile() {
    return state == State.FILE;
  }

  boolean isDirectory() {
    return state == State.DIRECTORY;
  }

  boolean isAbsent() {
    return state == State.ABSENT;
  }

  boolean isUnknown() {
    return state == State.UNKNOWN;
  }

  /** Whether the key is known to exist, as a file or a directory. */
  boolean exists() {
    return state == State.FILE || state == State.DIRECTORY;
  }
}
