package dev.writeonce.core.testing;

import dev.writeonce.core.errors.ErrorKind;
import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.UploadPart;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.OpenUpload;
import dev.writeonce.core.store.PeekedObject;
import dev.writeonce.core.store.RequestCounters;
import dev.writeonce.core.store.RequestType;
import dev.writeonce.core.store.StoreGateway;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Collection;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Wraps any gateway and fails requests by call count: "from the Nth CompleteMultipartUpload on,
 * fail". Used over the in-memory store in unit tests and over real stores in integration tests. A
 * failing call is refused before it reaches the delegate.
 */
public final class FaultInjectingStore implements StoreGateway {

  private record Fault(int fromCall, int untilCall, ErrorKind kind, boolean afterDelegate) {}

  private final StoreGateway delegate;
  private final Map<RequestType, AtomicInteger> calls = new EnumMap<>(RequestType.class);
  private final Map<RequestType, Fault> faults = new EnumMap<>(RequestType.class);

  private record Pause(int atCall, Runnable onPause) {}

  private final Map<RequestType, Pause> pauses = new EnumMap<>(RequestType.class);

  public FaultInjectingStore(StoreGateway delegate) {
    this.delegate = delegate;
    for (RequestType type : RequestType.values()) {
      calls.put(type, new AtomicInteger());
    }
  }

  /** Every call of this type from the Nth (1-based) on fails with the kind, unsent. */
  public synchronized FaultInjectingStore failFrom(RequestType type, int nthCall, ErrorKind kind) {
    faults.put(type, new Fault(nthCall, Integer.MAX_VALUE, kind, false));
    return this;
  }

  /** Only the Nth call of this type fails, unsent. */
  public synchronized FaultInjectingStore failOnce(RequestType type, int nthCall, ErrorKind kind) {
    faults.put(type, new Fault(nthCall, nthCall, kind, false));
    return this;
  }

  /**
   * The Nth call of this type reaches the store and takes effect, but its answer is lost: the
   * caller sees the failure, as after a dropped connection.
   */
  public synchronized FaultInjectingStore loseAnswerOf(
      RequestType type, int nthCall, ErrorKind kind) {
    faults.put(type, new Fault(nthCall, nthCall, kind, true));
    return this;
  }

  /**
   * The Nth call of this type runs {@code onPause} and then waits forever, unsent: the process is
   * then killed from outside, as a crash at exactly that request.
   */
  public synchronized FaultInjectingStore pauseAt(RequestType type, int nthCall, Runnable onPause) {
    pauses.put(type, new Pause(nthCall, onPause));
    return this;
  }

  /** Removes every fault; counts go on. */
  public synchronized FaultInjectingStore heal() {
    faults.clear();
    return this;
  }

  /** Calls seen of a type, failed ones included. */
  public int calls(RequestType type) {
    return calls.get(type).get();
  }

  private interface Call<T> {
    T run() throws StoreException;
  }

  private <T> T call(RequestType type, String what, Call<T> action) throws StoreException {
    int n = calls.get(type).incrementAndGet();
    Fault fault;
    Pause pause;
    synchronized (this) {
      fault = faults.get(type);
      pause = pauses.get(type);
    }
    if (pause != null && pause.atCall() == n) {
      pause.onPause().run();
      waitForever();
    }
    boolean hit = fault != null && n >= fault.fromCall() && n <= fault.untilCall();
    if (hit && !fault.afterDelegate()) {
      throw injected(type, n, what, fault);
    }
    T result = action.run();
    if (hit) {
      throw injected(type, n, what, fault);
    }
    return result;
  }

  private static void waitForever() throws StoreException {
    try {
      Thread.sleep(Long.MAX_VALUE);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StoreException(ErrorKind.TRANSIENT, 0, "interrupted while paused", e);
    }
  }

  private static StoreException injected(RequestType type, int n, String what, Fault fault) {
    int status =
        switch (fault.kind()) {
          case NOT_FOUND, NO_SUCH_UPLOAD -> 404;
          case PRECONDITION_FAILED -> 412;
          case TRANSIENT -> 503;
          case FATAL -> 403;
        };
    return new StoreException(
        fault.kind(), status, "injected fault on " + type + " call " + n + " (" + what + ")", null);
  }

  @Override
  public String bucket() {
    return delegate.bucket();
  }

  @Override
  public RequestCounters counters() {
    return delegate.counters();
  }

  @Override
  public String createUpload(String key) throws StoreException {
    return call(RequestType.CREATE_UPLOAD, key, () -> delegate.createUpload(key));
  }

  @Override
  public UploadPart uploadPart(String key, String uploadId, int partNumber, ByteBuffer data)
      throws StoreException {
    return call(
        RequestType.UPLOAD_PART, key, () -> delegate.uploadPart(key, uploadId, partNumber, data));
  }

  @Override
  public UploadPart uploadPart(
      String key, String uploadId, int partNumber, Path file, long offset, long length)
      throws StoreException {
    return call(
        RequestType.UPLOAD_PART,
        key,
        () -> delegate.uploadPart(key, uploadId, partNumber, file, offset, length));
  }

  @Override
  public List<String> listChildren(String prefix, int maxEntries) throws StoreException {
    return call(RequestType.LIST_OBJECTS, prefix, () -> delegate.listChildren(prefix, maxEntries));
  }

  @Override
  public String completeUpload(PendingUpload upload) throws StoreException {
    return call(RequestType.COMPLETE_UPLOAD, upload.key(), () -> delegate.completeUpload(upload));
  }

  @Override
  public void abortUpload(String key, String uploadId) throws StoreException {
    call(
        RequestType.ABORT_UPLOAD,
        key,
        () -> {
          delegate.abortUpload(key, uploadId);
          return null;
        });
  }

  @Override
  public List<OpenUpload> listUploads(String key) throws StoreException {
    return call(RequestType.LIST_UPLOADS, key, () -> delegate.listUploads(key));
  }

  @Override
  public String putObject(String key, byte[] data, boolean ifNoneMatch) throws StoreException {
    return call(RequestType.PUT_OBJECT, key, () -> delegate.putObject(key, data, ifNoneMatch));
  }

  @Override
  public String replaceObject(String key, byte[] data, String etag) throws StoreException {
    return call(RequestType.PUT_OBJECT, key, () -> delegate.replaceObject(key, data, etag));
  }

  @Override
  public Optional<byte[]> getObject(String key) throws StoreException {
    return call(RequestType.GET_OBJECT, key, () -> delegate.getObject(key));
  }

  @Override
  public Optional<PeekedObject> peekObject(
      String key, int headBytes, java.util.function.Predicate<byte[]> wanted)
      throws StoreException {
    return call(RequestType.GET_OBJECT, key, () -> delegate.peekObject(key, headBytes, wanted));
  }

  @Override
  public Optional<ObjectInfo> headObject(String key) throws StoreException {
    return call(RequestType.HEAD_OBJECT, key, () -> delegate.headObject(key));
  }

  @Override
  public List<ObjectInfo> listObjects(String prefix) throws StoreException {
    return call(RequestType.LIST_OBJECTS, prefix, () -> delegate.listObjects(prefix));
  }

  @Override
  public boolean deleteObjectIfMatch(String key, String etag) throws StoreException {
    return call(RequestType.DELETE_OBJECTS, key, () -> delegate.deleteObjectIfMatch(key, etag));
  }

  @Override
  public long storeNowMillis() throws StoreException {
    return delegate.storeNowMillis();
  }

  @Override
  public void deleteObjects(Collection<String> keys) throws StoreException {
    if (keys.isEmpty()) {
      return; // sends no request, as the real gateway
    }
    call(
        RequestType.DELETE_OBJECTS,
        String.valueOf(keys.size()),
        () -> {
          delegate.deleteObjects(keys);
          return null;
        });
  }
}
