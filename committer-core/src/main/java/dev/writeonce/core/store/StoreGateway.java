package dev.writeonce.core.store;

import dev.writeonce.core.errors.ErrorKind;
import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.UploadPart;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * Every request the committers send to the store goes through this interface, bound to one bucket.
 * Implementations count each request by {@link RequestType} and fail with a {@link StoreException}
 * whose {@link ErrorKind} the caller acts on. No method retries: the SDK client underneath retries
 * transient failures once, in its own layer.
 */
public interface StoreGateway {

  /** The bucket all keys refer to. */
  String bucket();

  /** Starts a multipart upload to a key and returns its id. */
  String createUpload(String key) throws StoreException;

  /** Uploads the remaining bytes of a buffer as one part; returns the part with its ETag. */
  UploadPart uploadPart(String key, String uploadId, int partNumber, ByteBuffer data)
      throws StoreException;

  /** Uploads a range of a local file as one part, streaming it; returns the part with its ETag. */
  UploadPart uploadPart(
      String key, String uploadId, int partNumber, Path file, long offset, long length)
      throws StoreException;

  /**
   * Completes an upload, making the object visible. Fails with {@link ErrorKind#NO_SUCH_UPLOAD}
   * when the store no longer knows the upload, for example because it was already completed.
   *
   * @return the object's ETag; derived from the parts when the store answers with none
   */
  String completeUpload(PendingUpload upload) throws StoreException;

  /** Aborts an upload. An upload the store does not know counts as aborted. */
  void abortUpload(String key, String uploadId) throws StoreException;

  /**
   * The uploads open for exactly this key. MinIO matches only exact keys, so this is never used to
   * find uploads "under a directory".
   */
  List<OpenUpload> listUploads(String key) throws StoreException;

  /**
   * The uploads open for keys starting with a prefix, by ListMultipartUploads with that prefix.
   * Honoured by AWS S3 and Ceph RGW; MinIO matches only exact keys and returns nothing for a
   * directory prefix, so callers must not rely on this to find a job's uploads.
   */
  default List<OpenUpload> listUploadsUnder(String prefix) throws StoreException {
    throw new UnsupportedOperationException("listing uploads by prefix");
  }

  /**
   * Writes a small object in one request.
   *
   * @param ifNoneMatch send {@code If-None-Match: *}: fail with {@link
   *     ErrorKind#PRECONDITION_FAILED} when the key exists
   * @return the ETag of the new object
   */
  String putObject(String key, byte[] data, boolean ifNoneMatch) throws StoreException;

  /**
   * Writes an object in one request with user metadata (names without the {@code x-amz-meta-}
   * prefix), from memory or from a local file of up to 5 GiB, the limit of one PUT. The metadata
   * lets a writer whose answer was lost tell its own object from another writer's by {@link
   * #objectMetadata}, where the bytes alone may be the same.
   *
   * @param ifNoneMatch send {@code If-None-Match: *}: fail with {@link
   *     ErrorKind#PRECONDITION_FAILED} when the key exists
   * @return the ETag of the new object
   */
  default String putObject(
      String key, ObjectBody body, boolean ifNoneMatch, java.util.Map<String, String> metadata)
      throws StoreException {
    throw new UnsupportedOperationException("writing objects with metadata");
  }

  /** The user metadata of an object (names without the prefix), or empty when it does not exist. */
  default Optional<java.util.Map<String, String>> objectMetadata(String key) throws StoreException {
    throw new UnsupportedOperationException("reading object metadata");
  }

  /**
   * The objects and "directories" directly under a prefix ending in '/', by LIST with delimiter
   * '/', across as many pages as needed.
   */
  default DirectoryListing listDirectory(String prefix) throws StoreException {
    throw new UnsupportedOperationException("listing a directory");
  }

  /**
   * Overwrites a small object only while it is still the version the caller read ({@code
   * If-Match}): the one compare-and-swap the stores offer, which renews or takes over a lock held
   * under a lease without a window between the check and the write.
   *
   * @param etag the ETag the object must still have, without quotes (Ceph RGW compares it as given,
   *     so a quoted ETag never matches there)
   * @return the ETag of the new object
   * @throws StoreException of kind {@link ErrorKind#PRECONDITION_FAILED} when the object changed or
   *     is gone
   */
  String replaceObject(String key, byte[] data, String etag) throws StoreException;

  /** Reads a whole small object (a manifest or a marker), or empty when it does not exist. */
  Optional<byte[]> getObject(String key) throws StoreException;

  /**
   * Copies an object to another key of the bucket inside the store (one COPY, no byte through the
   * client) and returns the copy's ETag. For objects up to 5 GiB, the limit of one COPY.
   */
  default String copyObject(String sourceKey, String targetKey) throws StoreException {
    throw new UnsupportedOperationException("copying objects");
  }

  /**
   * Reads an object whose body is wanted only if its first bytes match: the body is read in full
   * when {@code wanted} accepts the first {@code headBytes} bytes (or the whole object, if
   * shorter), and dropped unread otherwise, so a large object costs no transfer. Empty when it does
   * not exist. Implementations send one GET; this default sends a HEAD and, for small objects, a
   * GET.
   */
  default Optional<PeekedObject> peekObject(
      String key, int headBytes, java.util.function.Predicate<byte[]> wanted)
      throws StoreException {
    Optional<ObjectInfo> info = headObject(key);
    if (info.isEmpty()) {
      return Optional.empty();
    }
    if (info.get().size() > 4L * headBytes) {
      return Optional.of(new PeekedObject(info.get(), null));
    }
    byte[] body = getObject(key).orElse(null);
    if (body == null) {
      return Optional.empty();
    }
    byte[] head = java.util.Arrays.copyOf(body, Math.min(body.length, headBytes));
    return Optional.of(new PeekedObject(info.get(), wanted.test(head) ? body : null));
  }

  /** The object's metadata, or empty when it does not exist. */
  Optional<ObjectInfo> headObject(String key) throws StoreException;

  /**
   * The first entries directly under a prefix, by LIST with delimiter '/': object keys and
   * "directory" prefixes (ending in '/'), at most {@code maxEntries} of them. Fewer only when there
   * are no more: a page the store marks truncated is followed however few entries it holds, as the
   * S3 API allows. Usually one request.
   */
  List<String> listChildren(String prefix, int maxEntries) throws StoreException;

  /**
   * Whether a key is a file, a directory or both, by LIST with delimiter '/' and the key as prefix
   * (usually one request). This default asks {@link #listChildren} and, for a file, {@link
   * #headObject}; it is exact for up to 1,000 entries that share the prefix.
   */
  default KeyProbe probe(String key) throws StoreException {
    List<String> children = listChildren(key, 1000);
    ObjectInfo object = children.contains(key) ? headObject(key).orElse(null) : null;
    return new KeyProbe(object, children.contains(key + "/"));
  }

  /** Every object under a prefix, in key order, across as many LIST pages as needed. */
  List<ObjectInfo> listObjects(String prefix) throws StoreException;

  /**
   * Every object under a prefix when there are at most {@code maxKeys}, in key order; empty when
   * there are more, having read no more pages than that many keys fill.
   */
  default java.util.Optional<List<ObjectInfo>> listObjectsUpTo(String prefix, int maxKeys)
      throws StoreException {
    List<ObjectInfo> all = listObjects(prefix);
    return all.size() > maxKeys ? java.util.Optional.empty() : java.util.Optional.of(all);
  }

  /**
   * {@link #listObjectsUpTo(String, int)} without the objects under {@code skippedPrefix} (a
   * directory under {@code prefix}, ending in '/'), which neither count nor are returned: a store
   * that supports it is asked to skip them rather than send them.
   */
  default java.util.Optional<List<ObjectInfo>> listObjectsUpTo(
      String prefix, int maxKeys, String skippedPrefix) throws StoreException {
    List<ObjectInfo> kept = new java.util.ArrayList<>();
    for (ObjectInfo object : listObjects(prefix)) {
      if (!object.key().startsWith(skippedPrefix)) {
        kept.add(object);
      }
    }
    return kept.size() > maxKeys ? java.util.Optional.empty() : java.util.Optional.of(kept);
  }

  /**
   * Deletes objects in requests of at most 1,000 keys. Keys that do not exist count as deleted.
   * Fails when the store refuses any key, naming the keys.
   */
  void deleteObjects(Collection<String> keys) throws StoreException;

  /**
   * Deletes one object only while it is still the version the caller read ({@code If-Match} on
   * DeleteObject): how a lock, claim or fence is removed by its owner and nobody else. AWS S3
   * honours the condition; a store that ignores it deletes unconditionally, so callers read the
   * object back first ({@link OwnedObjects}) and the window between that read and this request is
   * what remains there. Counted as {@link RequestType#DELETE_OBJECTS}.
   *
   * @param etag the ETag the object must still have, without quotes
   * @return false when the object changed or is gone (nothing was deleted), true otherwise
   */
  boolean deleteObjectIfMatch(String key, String etag) throws StoreException;

  /**
   * The store's clock now: the time the store stamped on its latest answer to this gateway, moved
   * on by the local time elapsed since. Lapses, leases and retentions compare the store's own
   * timestamps (Last-Modified, Initiated) with this, never with the local clock, whose skew against
   * the store is unknown. A gateway that has had no answer yet asks the store once.
   */
  long storeNowMillis() throws StoreException;

  /** {@link #storeNowMillis} as a clock; a failure to ask the store is thrown unchecked. */
  default java.util.function.LongSupplier storeClock() {
    return () -> {
      try {
        return storeNowMillis();
      } catch (StoreException e) {
        throw new java.io.UncheckedIOException(e);
      }
    };
  }

  /** The requests sent so far. */
  RequestCounters counters();
}
