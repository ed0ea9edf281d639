package dev.writeonce.core.testing;

import dev.writeonce.core.errors.ErrorKind;
import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.model.Etags;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.UploadPart;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.OpenUpload;
import dev.writeonce.core.store.RequestCounters;
import dev.writeonce.core.store.RequestType;
import dev.writeonce.core.store.StoreGateway;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * A store that answers at once and keeps almost nothing: completions are counted, objects keep
 * their size only. It measures what the engine itself costs (time and heap of the driver), with the
 * network taken out.
 */
public final class SimulatedStore implements StoreGateway {

  private final String bucket;
  private final RequestCounters counters = new RequestCounters();
  private final Map<String, ObjectInfo> objects = new ConcurrentSkipListMap<>();
  private final Map<String, Boolean> openUploads = new ConcurrentHashMap<>();

  public SimulatedStore(String bucket) {
    this.bucket = bucket;
  }

  /** Registers an upload as open, as if a task had uploaded its parts. */
  public void open(String uploadId) {
    openUploads.put(uploadId, Boolean.TRUE);
  }

  public int openUploadCount() {
    return openUploads.size();
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
    String id = "u-" + key.hashCode() + "-" + System.nanoTime();
    openUploads.put(id, Boolean.TRUE);
    return id;
  }

  @Override
  public UploadPart uploadPart(String key, String uploadId, int partNumber, ByteBuffer data) {
    counters.increment(RequestType.UPLOAD_PART);
    byte[] bytes = new byte[data.remaining()];
    data.get(bytes);
    return new UploadPart(partNumber, Etags.md5Hex(bytes), bytes.length);
  }

  @Override
  public UploadPart uploadPart(
      String key, String uploadId, int partNumber, Path file, long offset, long length) {
    throw new UnsupportedOperationException("the simulated store takes no files");
  }

  @Override
  public String completeUpload(PendingUpload upload) throws StoreException {
    counters.increment(RequestType.COMPLETE_UPLOAD);
    if (openUploads.remove(upload.uploadId()) == null) {
      throw new StoreException(
          ErrorKind.NO_SUCH_UPLOAD, 404, "NoSuchUpload " + upload.uploadId(), null);
    }
    String etag = upload.expectedEtag().orElse("simulated");
    objects.put(upload.key(), new ObjectInfo(upload.key(), upload.length(), etag, 0));
    return etag;
  }

  @Override
  public void abortUpload(String key, String uploadId) {
    counters.increment(RequestType.ABORT_UPLOAD);
    openUploads.remove(uploadId);
  }

  @Override
  public List<OpenUpload> listUploads(String key) {
    counters.increment(RequestType.LIST_UPLOADS);
    return List.of();
  }

  @Override
  public String putObject(String key, byte[] data, boolean ifNoneMatch) throws StoreException {
    counters.increment(RequestType.PUT_OBJECT);
    ObjectInfo info = new ObjectInfo(key, data.length, Etags.md5Hex(data), 0);
    if (ifNoneMatch && objects.putIfAbsent(key, info) != null) {
      throw new StoreException(ErrorKind.PRECONDITION_FAILED, 412, key + " exists", null);
    }
    objects.put(key, info);
    return info.etag();
  }

  @Override
  public String replaceObject(String key, byte[] data, String etag) throws StoreException {
    counters.increment(RequestType.PUT_OBJECT);
    ObjectInfo info = new ObjectInfo(key, data.length, Etags.md5Hex(data), 0);
    ObjectInfo current = objects.get(key);
    if (current == null
        || !current.etag().equals(Etags.unquote(etag))
        || !objects.replace(key, current, info)) {
      throw new StoreException(ErrorKind.PRECONDITION_FAILED, 412, key + " changed", null);
    }
    return info.etag();
  }

  @Override
  public Optional<byte[]> getObject(String key) {
    counters.increment(RequestType.GET_OBJECT);
    return Optional.empty();
  }

  @Override
  public Optional<ObjectInfo> headObject(String key) {
    counters.increment(RequestType.HEAD_OBJECT);
    return Optional.ofNullable(objects.get(key));
  }

  @Override
  public List<String> listChildren(String prefix, int maxEntries) {
    counters.increment(RequestType.LIST_OBJECTS);
    return List.of();
  }

  @Override
  public List<ObjectInfo> listObjects(String prefix) {
    counters.increment(RequestType.LIST_OBJECTS);
    List<ObjectInfo> found = new ArrayList<>();
    for (ObjectInfo info : objects.values()) {
      if (info.key().startsWith(prefix)) {
        found.add(info);
      }
    }
    return found;
  }

  @Override
  public boolean deleteObjectIfMatch(String key, String etag) {
    counters.increment(RequestType.DELETE_OBJECTS);
    ObjectInfo current = objects.get(key);
    return current != null
        && current.etag().equals(Etags.unquote(etag))
        && objects.remove(key, current);
  }

  @Override
  public long storeNowMillis() {
    return System.currentTimeMillis();
  }

  @Override
  public void deleteObjects(Collection<String> keys) {
    for (int i = 0; i < keys.size(); i += 1000) {
      counters.increment(RequestType.DELETE_OBJECTS);
    }
    keys.forEach(objects::remove);
  }
}
