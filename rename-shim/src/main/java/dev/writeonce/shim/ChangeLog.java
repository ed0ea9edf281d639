package dev.writeonce.shim;

import static dev.writeonce.shim.Keys.isAtOrUnder;
import static dev.writeonce.shim.Keys.isUnder;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

/**
 * The changes this JVM made while requests whose answers will be kept were on the wire: each such
 * request holds a sequence number from when it was sent, and the changes made after it are replayed
 * on its answer before the answer is kept. Changes nobody on the wire can need are dropped; past
 * the bound the oldest are cut, and requests sent before the cut are not kept at all.
 */
@GuardedByCache
final class ChangeLog {

  private record Logged(long seq, Change change) {}

  private final ArrayDeque<Logged> log = new ArrayDeque<>();
  private final TreeMap<Long, Integer> onTheWire = new TreeMap<>();
  private long seq;
  private long floor;

  /** Numbers a change; logs it when a request is on the wire. */
  void append(Change change) {
    seq++;
    if (!onTheWire.isEmpty()) {
      log.addLast(new Logged(seq, change));
    }
  }

  /** A request is sent: the number of the last change before it. */
  long send() {
    onTheWire.merge(seq, 1, Integer::sum);
    return seq;
  }

  /** The request sent at {@code sentSeq} is answered (or failed): its changes may go. */
  void answered(long sentSeq) {
    onTheWire.merge(sentSeq, -1, (a, b) -> a + b == 0 ? null : a + b);
    long oldest = onTheWire.isEmpty() ? Long.MAX_VALUE : onTheWire.firstKey();
    while (!log.isEmpty() && log.peekFirst().seq() <= oldest) {
      log.removeFirst();
    }
  }

  /** Whether changes made since a request sent at {@code sentSeq} were cut: it cannot be kept. */
  boolean cutSince(long sentSeq) {
    return sentSeq < floor;
  }

  /** The changes made since a request sent at {@code sentSeq}, oldest first. */
  List<Change> since(long sentSeq) {
    List<Change> changes = new ArrayList<>();
    for (Logged logged : log) {
      if (logged.seq() > sentSeq) {
        changes.add(logged.change());
      }
    }
    return changes;
  }

  /**
   * Whether this JVM changed the key, above or below it, since a request sent at {@code sentSeq}.
   */
  boolean changedSince(long sentSeq, String key) {
    if (cutSince(sentSeq)) {
      return true;
    }
    for (Logged logged : log) {
      if (logged.seq() > sentSeq
          && (isAtOrUnder(key, logged.change().key()) || isUnder(logged.change().key(), key))) {
        return true;
      }
    }
    return false;
  }

  int size() {
    return log.size();
  }

  /** Past {@code max} changes, cuts the oldest down to {@code keep}. */
  void cut(int max, int keep) {
    if (log.size() > max) {
      while (log.size() > keep) {
        floor = log.removeFirst().seq();
      }
    }
  }
}
