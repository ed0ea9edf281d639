package dev.writeonce.core.simulation;

import dev.writeonce.core.errors.ErrorKind;
import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.UploadPart;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.OpenUpload;
import dev.writeonce.core.store.PeekedObject;
import dev.writeonce.core.store.RequestCounters;
import dev.writeonce.core.store.StoreGateway;
import dev.writeonce.core.testing.simulation.FaultRelay;
import dev.writeonce.core.testing.simulation.Faults;
import dev.writeonce.core.testing.simulation.Scheduler;
import dev.writeonce.core.testing.simulation.SimProcess;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * One actor's view of the shared store, through a {@link FaultRelay}: before each request the actor
 * hands control to the scheduler, and the relay decides whether the request fails unsent (a
 * transient error), takes effect and loses its answer, or is the one at which the actor's process
 * crashes: from then on the process is dead and nothing it sends reaches the store.
 */
final class SimStore implements StoreGateway {

  /**
   * The actor died: thrown at the crash and by every request after it. A RuntimeException, unlike
   * the harness's {@link dev.writeonce.core.testing.simulation.Crash}: the library's own cleanup
   * paths see it as a failed request, as they would a process that dies under them, and the kept
   * schedules rely on that.
   */
  static final class Crash extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Crash(String actor) {
      super(actor + " crashed", null, false, false);
    }
  }

  private interface Effect<T> {
    T run() throws StoreException;
  }

  private final SharedStore world;
  private final String name;
  private final FaultRelay relay;

  /**
   * A store of a process of its own, whose requests are steps of the actor (its own thread, or a
   * pool thread working for it); outside the schedule when the scheduler is null.
   */
  SimStore(
      SharedStore world,
      Scheduler scheduler,
      Scheduler.Actor actor,
      String name,
      Faults faults,
      long seed) {
    this(world, scheduler, actor, name, faults, seed, new SimProcess(name));
  }

  /** One of the stores of a process whose threads each have one (a statement and its timer). */
  SimStore(
      SharedStore world,
      Scheduler scheduler,
      Scheduler.Actor actor,
      String name,
      Faults faults,
      long seed,
      SimProcess process) {
    this.world = world;
    this.name = name;
    this.relay =
        new FaultRelay(
            scheduler,
            actor,
            process,
            world.clock,
            faults,
            seed,
            world.traced ? line -> System.out.println("  " + line) : null);
  }

  boolean isDead() {
    return relay.process().dead();
  }

  /** The requests this store has sent, or tried to. */
  int calls() {
    return relay.requests();
  }

  private <T> T call(String what, Effect<T> effect) throws StoreException {
    FaultRelay.Request request = relay.next();
    if (request.fate() == FaultRelay.Fate.DEAD) {
      throw new Crash(name);
    }
    if (world.traced) {
      System.out.println("  " + name + " #" + request.number() + " " + what);
    }
    switch (request.fate()) {
      case CRASH_LANDS_LATE -> {
        // The request was sent before the crash and reaches the store later.
        world.inFlight.add(
            () -> {
              try {
                effect.run();
              } catch (StoreException refused) {
                // a conditional write that the store refuses when it finally arrives
              }
            });
        throw new Crash(name);
      }
      case CRASH -> throw new Crash(name);
      case CRASH_APPLIED -> {
        try {
          effect.run();
          world.observer.afterRequest(name, what);
        } catch (StoreException refused) {
          // the store refused it; the process is gone either way
        }
        throw new Crash(name);
      }
      case FAIL_UNSENT ->
          throw new StoreException(ErrorKind.TRANSIENT, 503, "simulated 503 on " + what, null);
      default -> {}
    }
    T result = effect.run();
    world.observer.afterRequest(name, what);
    if (request.fate() == FaultRelay.Fate.LOSE_ANSWER) {
      throw new StoreException(ErrorKind.TRANSIENT, 0, "simulated lost answer of " + what, null);
    }
    return result;
  }

  @Override
  public String bucket() {
    return SharedStore.BUCKET;
  }

  @Override
  public String createUpload(String key) throws StoreException {
    return call(
        "CreateMultipartUpload " + key,
        () -> {
          String uploadId = world.memory.createUpload(key);
          world.created(name, uploadId);
          return uploadId;
        });
  }

  @Override
  public UploadPart uploadPart(String key, String uploadId, int partNumber, ByteBuffer data)
      throws StoreException {
    byte[] bytes = new byte[data.remaining()];
    data.duplicate().get(bytes);
    return call(
        "UploadPart " + key,
        () -> {
          UploadPart part = world.memory.uploadPart(key, uploadId, partNumber, data);
          synchronized (world) {
            world.uploadBytes.put(uploadId, bytes);
          }
          return part;
        });
  }

  @Override
  public UploadPart uploadPart(
      String key, String uploadId, int partNumber, Path file, long offset, long length) {
    throw new UnsupportedOperationException("the simulation uploads from memory");
  }

  @Override
  public String completeUpload(PendingUpload upload) throws StoreException {
    return call(
        "CompleteMultipartUpload " + upload.key(), () -> world.memory.completeUpload(upload));
  }

  @Override
  public void abortUpload(String key, String uploadId) throws StoreException {
    call(
        "AbortMultipartUpload " + key,
        () -> {
          world.aborting(name, key, uploadId);
          world.memory.abortUpload(key, uploadId);
          return null;
        });
  }

  @Override
  public List<OpenUpload> listUploads(String key) throws StoreException {
    return call("ListMultipartUploads " + key, () -> world.memory.listUploads(key));
  }

  @Override
  public String putObject(String key, byte[] data, boolean ifNoneMatch) throws StoreException {
    return call(
        "PutObject " + key,
        () -> {
          String etag = world.memory.putObject(key, data, ifNoneMatch);
          world.manifestWritten(key, data);
          world.observer.afterPut(name, key, data);
          return etag;
        });
  }

  @Override
  public String copyObject(String sourceKey, String targetKey) throws StoreException {
    return call(
        "CopyObject " + sourceKey + " to " + targetKey,
        () -> world.memory.copyObject(sourceKey, targetKey));
  }

  @Override
  public String replaceObject(String key, byte[] data, String etag) throws StoreException {
    return call("PutObject If-Match " + key, () -> world.memory.replaceObject(key, data, etag));
  }

  @Override
  public Optional<byte[]> getObject(String key) throws StoreException {
    return call("GetObject " + key, () -> world.memory.getObject(key));
  }

  @Override
  public Optional<PeekedObject> peekObject(
      String key, int headBytes, java.util.function.Predicate<byte[]> wanted)
      throws StoreException {
    return call("GetObject " + key, () -> world.memory.peekObject(key, headBytes, wanted));
  }

  @Override
  public Optional<ObjectInfo> headObject(String key) throws StoreException {
    return call("HeadObject " + key, () -> world.memory.headObject(key));
  }

  @Override
  public List<String> listChildren(String prefix, int maxEntries) throws StoreException {
    return call("ListObjects " + prefix, () -> world.memory.listChildren(prefix, maxEntries));
  }

  @Override
  public List<ObjectInfo> listObjects(String prefix) throws StoreException {
    return call("ListObjects " + prefix, () -> world.memory.listObjects(prefix));
  }

  @Override
  public boolean deleteObjectIfMatch(String key, String etag) throws StoreException {
    return call(
        "DeleteObject If-Match " + key,
        () -> {
          if (world.deleteIfMatchIgnored) {
            // As the pinned MinIO and Ceph RGW 16 do: the condition is dropped, the object goes.
            world.observer.beforeDelete(name, List.of(key));
            world.memory.deleteObjects(List.of(key));
            return true;
          }
          Optional<ObjectInfo> current = world.memory.headObject(key);
          if (current.isPresent() && current.get().etag().equals(etag)) {
            world.observer.beforeDelete(name, List.of(key));
          }
          return world.memory.deleteObjectIfMatch(key, etag);
        });
  }

  @Override
  public long storeNowMillis() {
    return world.memory.storeNowMillis();
  }

  @Override
  public void deleteObjects(Collection<String> keys) throws StoreException {
    if (keys.isEmpty()) {
      return;
    }
    call(
        "DeleteObjects " + keys.size(),
        () -> {
          world.observer.beforeDelete(name, keys);
          world.memory.deleteObjects(keys);
          return null;
        });
  }

  @Override
  public RequestCounters counters() {
    return world.memory.counters();
  }
}
