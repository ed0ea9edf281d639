package dev.writeonce.core.testing;

import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.UploadPart;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.OpenUpload;
import dev.writeonce.core.store.PeekedObject;
import dev.writeonce.core.store.RequestCounters;
import dev.writeonce.core.store.StoreGateway;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/** A gateway that passes every call on; tests override the calls whose answers they change. */
public class ForwardingStore implements StoreGateway {

  private final StoreGateway delegate;

  public ForwardingStore(StoreGateway delegate) {
    this.delegate = delegate;
  }

  /** Where each call goes: the store given, unless a subclass chooses per call. */
  protected StoreGateway delegate() {
    return delegate;
  }

  @Override
  public String bucket() {
    return delegate().bucket();
  }

  @Override
  public String copyObject(String sourceKey, String targetKey) throws StoreException {
    return delegate().copyObject(sourceKey, targetKey);
  }

  @Override
  public String createUpload(String key) throws StoreException {
    return delegate().createUpload(key);
  }

  @Override
  public UploadPart uploadPart(String key, String uploadId, int partNumber, ByteBuffer data)
      throws StoreException {
    return delegate().uploadPart(key, uploadId, partNumber, data);
  }

  @Override
  public UploadPart uploadPart(
      String key, String uploadId, int partNumber, Path file, long offset, long length)
      throws StoreException {
    return delegate().uploadPart(key, uploadId, partNumber, file, offset, length);
  }

  @Override
  public String completeUpload(PendingUpload upload) throws StoreException {
    return delegate().completeUpload(upload);
  }

  @Override
  public void abortUpload(String key, String uploadId) throws StoreException {
    delegate().abortUpload(key, uploadId);
  }

  @Override
  public List<OpenUpload> listUploads(String key) throws StoreException {
    return delegate().listUploads(key);
  }

  @Override
  public String putObject(String key, byte[] data, boolean ifNoneMatch) throws StoreException {
    return delegate().putObject(key, data, ifNoneMatch);
  }

  @Override
  public String replaceObject(String key, byte[] data, String etag) throws StoreException {
    return delegate().replaceObject(key, data, etag);
  }

  @Override
  public Optional<byte[]> getObject(String key) throws StoreException {
    return delegate().getObject(key);
  }

  @Override
  public Optional<PeekedObject> peekObject(
      String key, int headBytes, java.util.function.Predicate<byte[]> wanted)
      throws StoreException {
    return delegate().peekObject(key, headBytes, wanted);
  }

  @Override
  public Optional<ObjectInfo> headObject(String key) throws StoreException {
    return delegate().headObject(key);
  }

  @Override
  public List<String> listChildren(String prefix, int maxEntries) throws StoreException {
    return delegate().listChildren(prefix, maxEntries);
  }

  @Override
  public List<ObjectInfo> listObjects(String prefix) throws StoreException {
    return delegate().listObjects(prefix);
  }

  @Override
  public boolean deleteObjectIfMatch(String key, String etag) throws StoreException {
    return delegate().deleteObjectIfMatch(key, etag);
  }

  @Override
  public long storeNowMillis() throws StoreException {
    return delegate().storeNowMillis();
  }

  @Override
  public void deleteObjects(Collection<String> keys) throws StoreException {
    delegate().deleteObjects(keys);
  }

  @Override
  public RequestCounters counters() {
    return delegate().counters();
  }
}
