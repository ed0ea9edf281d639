package dev.writeonce.core.testing;

import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.UploadPart;
import dev.writeonce.core.store.KeyProbe;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.OpenUpload;
import dev.writeonce.core.store.PeekedObject;
import dev.writeonce.core.store.RequestCounters;
import dev.writeonce.core.store.S3StoreGateway;
import dev.writeonce.core.store.StoreGateway;
import dev.writeonce.core.testing.s3.MemoryS3;
import dev.writeonce.core.testing.s3.MemoryS3Client;
import dev.writeonce.core.testing.s3.RequestHook;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * The real {@link S3StoreGateway} over a {@link MemoryS3}, through a {@link MemoryS3Client}: every
 * call is sent as the SDK request it is in production and answered with S3's semantics (uploads
 * invisible until completed, NoSuchUpload after completion or abort, multipart ETags, conditional
 * writes), and the gateway counts it.
 *
 * <p>What this class adds to the gateway: the store's clock is the gateway's clock, so that time
 * moves only when a test moves it; parts of any size, so that tests upload a few bytes per part;
 * and views of the store for assertions, which send no request. As S3 sends them, HEAD and GET
 * carry Last-Modified in whole seconds, listings in milliseconds.
 */
public final class InMemoryStore implements StoreGateway {

  private final String bucket;
  private final MemoryS3 memory;
  private final S3StoreGateway gateway;

  public InMemoryStore(String bucket) {
    this(bucket, 1_700_000_000_000L);
  }

  /** A store whose clock (last-modified and upload times) starts at the given epoch millis. */
  public InMemoryStore(String bucket, long clockStartMillis) {
    this.bucket = bucket;
    this.memory = new MemoryS3(0, clockStartMillis);
    memory.setMinimumPartSize(0);
    memory.createBucket(bucket);
    this.gateway = S3StoreGateway.forClient(new MemoryS3Client(memory, RequestHook.NONE), bucket);
  }

  @Override
  public String bucket() {
    return bucket;
  }

  @Override
  public RequestCounters counters() {
    return gateway.counters();
  }

  @Override
  public String createUpload(String key) {
    return unfailing(() -> gateway.createUpload(key));
  }

  @Override
  public UploadPart uploadPart(String key, String uploadId, int partNumber, ByteBuffer data)
      throws StoreException {
    return gateway.uploadPart(key, uploadId, partNumber, data);
  }

  @Override
  public UploadPart uploadPart(
      String key, String uploadId, int partNumber, Path file, long offset, long length)
      throws StoreException {
    return gateway.uploadPart(key, uploadId, partNumber, file, offset, length);
  }

  @Override
  public String completeUpload(PendingUpload pending) throws StoreException {
    return gateway.completeUpload(pending);
  }

  @Override
  public void abortUpload(String key, String uploadId) {
    unfailing(
        () -> {
          gateway.abortUpload(key, uploadId);
          return null;
        });
  }

  @Override
  public List<OpenUpload> listUploads(String key) {
    return unfailing(() -> gateway.listUploads(key));
  }

  @Override
  public List<OpenUpload> listUploadsUnder(String prefix) throws StoreException {
    return gateway.listUploadsUnder(prefix);
  }

  @Override
  public String putObject(String key, byte[] data, boolean ifNoneMatch) throws StoreException {
    return gateway.putObject(key, data, ifNoneMatch);
  }

  @Override
  public String replaceObject(String key, byte[] data, String etag) throws StoreException {
    return gateway.replaceObject(key, data, etag);
  }

  @Override
  public String copyObject(String sourceKey, String targetKey) throws StoreException {
    return gateway.copyObject(sourceKey, targetKey);
  }

  @Override
  public Optional<byte[]> getObject(String key) {
    return unfailing(() -> gateway.getObject(key));
  }

  @Override
  public Optional<PeekedObject> peekObject(String key, int headBytes, Predicate<byte[]> wanted) {
    return unfailing(() -> gateway.peekObject(key, headBytes, wanted));
  }

  @Override
  public Optional<ObjectInfo> headObject(String key) {
    return unfailing(() -> gateway.headObject(key));
  }

  @Override
  public List<String> listChildren(String prefix, int maxEntries) {
    return unfailing(() -> gateway.listChildren(prefix, maxEntries));
  }

  @Override
  public KeyProbe probe(String key) throws StoreException {
    return gateway.probe(key);
  }

  @Override
  public List<ObjectInfo> listObjects(String prefix) {
    return unfailing(() -> gateway.listObjects(prefix));
  }

  @Override
  public Optional<List<ObjectInfo>> listObjectsUpTo(String prefix, int maxKeys)
      throws StoreException {
    return gateway.listObjectsUpTo(prefix, maxKeys);
  }

  @Override
  public Optional<List<ObjectInfo>> listObjectsUpTo(
      String prefix, int maxKeys, String skippedPrefix) throws StoreException {
    return gateway.listObjectsUpTo(prefix, maxKeys, skippedPrefix);
  }

  @Override
  public void deleteObjects(Collection<String> keys) {
    unfailing(
        () -> {
          gateway.deleteObjects(keys);
          return null;
        });
  }

  @Override
  public boolean deleteObjectIfMatch(String key, String etag) {
    return unfailing(() -> gateway.deleteObjectIfMatch(key, etag));
  }

  /** The store clock itself: no request, and no local clock that a test cannot move. */
  @Override
  public long storeNowMillis() {
    return memory.nowMillis();
  }

  /** Moves the store's clock forward, as time passing between two requests; never back. */
  public void advanceClock(long millis) {
    memory.advanceMillis(millis);
  }

  /** The store's clock: the last-modified time of a write now. */
  public long clockMillis() {
    return memory.nowMillis();
  }

  /** The content of an object, or null; for assertions, not counted. */
  public byte[] content(String key) {
    return memory.getObject(bucket, key).orElse(null);
  }

  /** Every object key, in listing order; for assertions, not counted. */
  public List<String> keys() {
    return memory.keys(bucket);
  }

  /** Upload ids still open, in listing order; for assertions, not counted. */
  public List<String> openUploadIds() {
    return memory.openUploads(bucket).stream().map(MemoryS3.OpenUpload::uploadId).toList();
  }

  private interface Call<T> {
    T run() throws StoreException;
  }

  /**
   * A request that the store in memory always answers: nothing injects faults here, and S3 has no
   * error for it that the gateway does not turn into an answer (an unknown upload counts as
   * aborted, a failed If-Match delete as false). These methods keep their signatures without {@link
   * StoreException}, so that tests call them directly.
   */
  private static <T> T unfailing(Call<T> call) {
    try {
      return call.run();
    } catch (StoreException e) {
      throw new AssertionError("the store in memory failed a request it always answers", e);
    }
  }
}
