package dev.writeonce.core.store;

import dev.writeonce.core.errors.StoreException;
import java.util.Optional;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one way a shared object (a lock, a claim) is removed: only by its owner, and only while it is
 * still the version the owner can vouch for.
 *
 * <ol>
 *   <li>The object is read back (one GET) and checked to be the caller's: a holder that lost it to
 *       a takeover while it was paused finds the new owner's record and deletes nothing.
 *   <li>It is deleted with {@code If-Match} on the ETag just read. AWS S3 honours the condition, so
 *       nothing written after the read can be deleted. A store that ignores it (see
 *       docs/architecture.md, "Decisions") leaves the window between the GET and the DELETE: a
 *       takeover landing in those milliseconds is deleted with it. Takeovers happen only once a
 *       lease has lapsed, so the caller also passes {@code stillLive}, which refuses the delete
 *       when the lease it read is about to lapse on the store's clock.
 * </ol>
 */
public final class OwnedObjects {

  private static final Logger LOG = LoggerFactory.getLogger(OwnedObjects.class);

  /** Largest record read back: locks and claims are a few hundred bytes. */
  private static final int RECORD_BYTES = 16_384;

  private OwnedObjects() {}

  /** What the read-back found. */
  public enum ReadBack {
    /** The object was the caller's and is deleted. */
    DELETED,
    /** Nothing was there. */
    GONE,
    /** Another party owns it now, or it changed after the read: nothing was deleted. */
    NOT_OURS
  }

  /**
   * Deletes {@code key} if the record it holds is the caller's.
   *
   * @param isMine whether the body read back is the caller's record
   * @param stillLive whether the object, as read (its Last-Modified, on the store's clock), may be
   *     deleted without racing a takeover; given the object's metadata and the store's clock now
   */
  public static ReadBack deleteIfOwned(
      StoreGateway store,
      String key,
      Predicate<byte[]> isMine,
      java.util.function.BiPredicate<ObjectInfo, Long> stillLive)
      throws StoreException {
    Optional<PeekedObject> current = store.peekObject(key, RECORD_BYTES, any -> true);
    if (current.isEmpty()) {
      return ReadBack.GONE;
    }
    byte[] body = current.get().matchingBody().orElse(new byte[0]);
    if (!isMine.test(body)) {
      LOG.debug("{} belongs to another party now: left in place", key);
      return ReadBack.NOT_OURS;
    }
    if (!stillLive.test(current.get().info(), store.storeNowMillis())) {
      LOG.debug("{} is about to lapse: left for the next holder to take over", key);
      return ReadBack.NOT_OURS;
    }
    return store.deleteObjectIfMatch(key, current.get().info().etag())
        ? ReadBack.DELETED
        : ReadBack.NOT_OURS;
  }
}
