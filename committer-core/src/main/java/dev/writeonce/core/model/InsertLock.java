package dev.writeonce.core.model;

/**
 * The lock a statement holds on a destination while it adds files whose names depend on the files
 * already there (Hive's INSERT INTO, which names a file {@code <name>_copy_<K>} when {@code <name>}
 * is taken). The statement's tasks choose those names before its move runs, so two such statements
 * on one destination must not overlap: one holds the lock from before its tasks run until its files
 * are in place, and the other waits. The holder renews it under a lease, so that a lock whose
 * session died lapses and can be taken over.
 *
 * @param holder the statement holding the lock (Hive's query id)
 * @param uuid this acquisition, so that a write whose answer was lost is recognised as one's own
 * @param host the host of the session that took it
 * @param destination the locked directory, as a URI, for messages
 * @param claimedAtMillis when it was taken, by the holder's clock
 * @param renewedAtMillis when it was last written, by the holder's clock: every renewal changes the
 *     object, so that a renewal also changes its ETag and a takeover conditional on the ETag a
 *     waiter saw fails once the holder has renewed
 * @param leaseMillis how long after its last write (the store's time) the lock lapses
 */
public record InsertLock(
    String holder,
    String uuid,
    String host,
    String destination,
    long claimedAtMillis,
    long renewedAtMillis,
    long leaseMillis) {

  /** The same lock, written again at the given time. */
  public InsertLock renewedAt(long millis) {
    return new InsertLock(holder, uuid, host, destination, claimedAtMillis, millis, leaseMillis);
  }
}
