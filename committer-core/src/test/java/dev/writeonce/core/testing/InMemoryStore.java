package dev.writeonce.core.testing;

import dev.writeonce.core.errors.ErrorKind;
import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.model.Etags;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.UploadPart;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.OpenUpload;
import dev.writeonce.core.store.PeekedObject;
import dev.writeonce.core.store.RequestCounters;
import dev.writeonce.core.store.RequestType;
import dev.writeonce.core.store.StoreGateway;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A store in memory that behaves as S3 does where the committers depend on it: uploads invisible
 * until completed, NoSuchUpload after completion or abort, multipart ETags, conditional creates.
 */
public final class InMemoryStore implements StoreGateway {

  private record StoredObject(byte[] data, String etag, long modified) {}

  private record Upload(String key, Map<Integer, byte[]> parts, long initiated) {}

  private final String bucket;
  private final NavigableMap<String, StoredObject> objects = new ConcurrentSkipListMap<>();
  private final Map<String, Upload> uploads = new ConcurrentSkipListMap<>();
  private final RequestCounters counters = new RequestCounters();
  private final AtomicLong clock;
  private final AtomicLong uploadIds = new AtomicLong();

  public InMemoryStore(String bucket) {
    this(bucket, 1_700_000_000_000L);
  }

  /** A store whose clock (last-modified and upload times) starts at the given epoch millis. */
  public InMemoryStore(String bucket, long clockStartMillis) {
    this.bucket = bucket;
    this.clock = new AtomicLong(clockStartMillis);
  }

  @Override
  public String bucket() {
    return bucket;
  }

  @Override
  public RequestCounters counters() {
    return counters;
  }

  @Override
  public String createUpload(String key) {
    counters.increment(RequestType.CREATE_UPLOAD);
    // Ids from a counter, so that a seeded simulation replays the same requests in the same order.
    String id = "upload-" + uploadIds.incrementAndGet();
    uploads.put(id, new Upload(key, new ConcurrentHashMap<>(), clock.incrementAndGet()));
    return id;
  }

  @Override
  public UploadPart uploadPart(String key, String uploadId, int partNumber, ByteBuffer data)
      throws StoreException {
    counters.increment(RequestType.UPLOAD_PART);
    Upload upload = openUpload(key, uploadId, "UploadPart");
    byte[] bytes = new byte[data.remaining()];
    data.get(bytes);
    upload.parts().put(partNumber, bytes);
    return new UploadPart(partNumber, Etags.md5Hex(bytes), bytes.length);
  }

  @Override
  public UploadPart uploadPart(
      String key, String uploadId, int partNumber, Path file, long offset, long length)
      throws StoreException {
    ByteBuffer range = ByteBuffer.allocate(Math.toIntExact(length));
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
      while (range.hasRemaining() && channel.read(range, offset + range.position()) > 0) {
        // reads until the range is full
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    range.flip();
    return uploadPart(key, uploadId, partNumber, range);
  }

  @Override
  public List<String> listChildren(String prefix, int maxEntries) {
    counters.increment(RequestType.LIST_OBJECTS);
    java.util.TreeSet<String> children = new java.util.TreeSet<>();
    for (String key : objects.tailMap(prefix, true).keySet()) {
      if (!key.startsWith(prefix) || children.size() >= maxEntries) {
        break;
      }
      int slash = key.indexOf('/', prefix.length());
      children.add(slash < 0 ? key : key.substring(0, slash + 1));
    }
    return new ArrayList<>(children);
  }

  @Override
  public String completeUpload(PendingUpload pending) throws StoreException {
    counters.increment(RequestType.COMPLETE_UPLOAD);
    Upload upload = openUpload(pending.key(), pending.uploadId(), "CompleteMultipartUpload");
    ByteArrayOutputStream content = new ByteArrayOutputStream();
    for (UploadPart part : pending.parts()) {
      byte[] bytes = upload.parts().get(part.number());
      if (bytes == null || !Etags.md5Hex(bytes).equals(part.etag())) {
        throw new StoreException(
            ErrorKind.FATAL, 400, "InvalidPart " + part.number() + " of " + pending.key(), null);
      }
      content.writeBytes(bytes);
    }
    uploads.remove(pending.uploadId());
    String etag = Etags.multipartEtag(pending.parts()).orElseThrow();
    objects.put(
        pending.key(), new StoredObject(content.toByteArray(), etag, clock.incrementAndGet()));
    return etag;
  }

  @Override
  public void abortUpload(String key, String uploadId) {
    counters.increment(RequestType.ABORT_UPLOAD);
    uploads.remove(uploadId);
  }

  @Override
  public List<OpenUpload> listUploads(String key) {
    counters.increment(RequestType.LIST_UPLOADS);
    List<OpenUpload> found = new ArrayList<>();
    uploads.forEach(
        (id, upload) -> {
          if (upload.key().equals(key)) {
            found.add(new OpenUpload(key, id, upload.initiated()));
          }
        });
    return found;
  }

  @Override
  public String putObject(String key, byte[] data, boolean ifNoneMatch) throws StoreException {
    counters.increment(RequestType.PUT_OBJECT);
    StoredObject object =
        new StoredObject(data.clone(), Etags.md5Hex(data), clock.incrementAndGet());
    if (ifNoneMatch) {
      if (objects.putIfAbsent(key, object) != null) {
        throw new StoreException(
            ErrorKind.PRECONDITION_FAILED, 412, "PutObject " + key + ": PreconditionFailed", null);
      }
    } else {
      objects.put(key, object);
    }
    return object.etag();
  }

  @Override
  public String replaceObject(String key, byte[] data, String etag) throws StoreException {
    counters.increment(RequestType.PUT_OBJECT);
    StoredObject object =
        new StoredObject(data.clone(), Etags.md5Hex(data), clock.incrementAndGet());
    StoredObject[] replaced = new StoredObject[1];
    objects.computeIfPresent(
        key,
        (k, current) -> {
          if (!current.etag().equals(Etags.unquote(etag))) {
            return current;
          }
          replaced[0] = current;
          return object;
        });
    if (replaced[0] == null) {
      throw new StoreException(
          ErrorKind.PRECONDITION_FAILED, 412, "PutObject " + key + ": PreconditionFailed", null);
    }
    return object.etag();
  }

  @Override
  public String copyObject(String sourceKey, String targetKey) throws StoreException {
    counters.increment(RequestType.COPY_OBJECT);
    StoredObject source = objects.get(sourceKey);
    if (source == null) {
      throw new StoreException(
          ErrorKind.NOT_FOUND, 404, "CopyObject " + sourceKey + ": NoSuchKey", null);
    }
    StoredObject copy = new StoredObject(source.data(), source.etag(), clock.incrementAndGet());
    objects.put(targetKey, copy);
    return copy.etag();
  }

  @Override
  public Optional<byte[]> getObject(String key) {
    counters.increment(RequestType.GET_OBJECT);
    return Optional.ofNullable(objects.get(key)).map(o -> o.data().clone());
  }

  /** One GET, as the real gateway sends: the metadata, and the body when its head is wanted. */
  @Override
  public Optional<PeekedObject> peekObject(
      String key, int headBytes, java.util.function.Predicate<byte[]> wanted) {
    counters.increment(RequestType.GET_OBJECT);
    StoredObject object = objects.get(key);
    if (object == null) {
      return Optional.empty();
    }
    byte[] head = java.util.Arrays.copyOf(object.data(), Math.min(object.data().length, headBytes));
    return Optional.of(
        new PeekedObject(info(key, object), wanted.test(head) ? object.data().clone() : null));
  }

  @Override
  public Optional<ObjectInfo> headObject(String key) {
    counters.increment(RequestType.HEAD_OBJECT);
    return Optional.ofNullable(objects.get(key)).map(o -> info(key, o));
  }

  @Override
  public List<ObjectInfo> listObjects(String prefix) {
    counters.increment(RequestType.LIST_OBJECTS);
    List<ObjectInfo> found = new ArrayList<>();
    for (Map.Entry<String, StoredObject> entry : objects.tailMap(prefix, true).entrySet()) {
      if (!entry.getKey().startsWith(prefix)) {
        break;
      }
      found.add(info(entry.getKey(), entry.getValue()));
    }
    return found;
  }

  @Override
  public void deleteObjects(Collection<String> keys) {
    List<String> all = List.copyOf(keys);
    for (int start = 0; start < all.size(); start += 1000) {
      counters.increment(RequestType.DELETE_OBJECTS);
      all.subList(start, Math.min(all.size(), start + 1000)).forEach(objects::remove);
    }
  }

  @Override
  public boolean deleteObjectIfMatch(String key, String etag) {
    counters.increment(RequestType.DELETE_OBJECTS);
    StoredObject current = objects.get(key);
    return current != null
        && current.etag().equals(Etags.unquote(etag))
        && objects.remove(key, current);
  }

  @Override
  public long storeNowMillis() {
    return clock.get();
  }

  /** Moves the store's clock forward, as time passing between two requests. */
  public void advanceClock(long millis) {
    clock.addAndGet(millis);
  }

  /** The store's clock: the last-modified time of the next write, less one. */
  public long clockMillis() {
    return clock.get();
  }

  /** The content of an object, or null; for assertions, not counted. */
  public byte[] content(String key) {
    StoredObject object = objects.get(key);
    return object == null ? null : object.data().clone();
  }

  /** Every object key, in order; for assertions, not counted. */
  public List<String> keys() {
    return new ArrayList<>(objects.keySet());
  }

  /** Upload ids still open; for assertions, not counted. */
  public List<String> openUploadIds() {
    return new ArrayList<>(uploads.keySet());
  }

  private Upload openUpload(String key, String uploadId, String operation) throws StoreException {
    Upload upload = uploads.get(uploadId);
    if (upload == null || !upload.key().equals(key)) {
      throw new StoreException(
          ErrorKind.NO_SUCH_UPLOAD, 404, operation + " " + key + ": NoSuchUpload", null);
    }
    return upload;
  }

  private static ObjectInfo info(String key, StoredObject object) {
    return new ObjectInfo(key, object.data().length, object.etag(), object.modified());
  }
}
