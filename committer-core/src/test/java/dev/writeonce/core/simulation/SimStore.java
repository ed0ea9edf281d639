package dev.writeonce.core.simulation;

import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.UploadPart;
import dev.writeonce.core.store.ErrorKind;
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
import java.util.Random;

/**
 * One actor's view of the shared store. Before each request the actor hands control to the
 * scheduler. A request may fail unsent (a transient error), take effect and lose its answer, or be
 * the one at which the actor crashes: from then on the actor is dead and nothing it sends reaches
 * the store.
 */
final class SimStore implements StoreGateway {

  /** The actor died: thrown at the crash and by every request after it. */
  static final class Crash extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Crash(String actor) {
      super(actor + " crashed", null, false, false);
    }
  }

  /** How an actor's requests fail: crash at the Nth (0: never), and rates of the others. */
  record Faults(
      int crashAt, double transientRate, double lostAnswerRate, long seed, boolean landsLate) {
    static final Faults NONE = new Faults(0, 0, 0, 0, false);

    Faults(int crashAt, double transientRate, double lostAnswerRate, long seed) {
      this(crashAt, transientRate, lostAnswerRate, seed, false);
    }
  }

  private interface Effect<T> {
    T run() throws StoreException;
  }

  /** {@code -Dwriteonce.simulation.trace=true} prints every request of a replayed schedule. */
  static volatile boolean TRACE = Boolean.getBoolean("writeonce.simulation.trace");

  private final World world;
  private final Scheduler scheduler;
  private final Scheduler.Actor actor;
  private final String name;
  private final Faults faults;
  private final Random random;
  private int calls;
  private volatile boolean dead;

  SimStore(World world, Scheduler scheduler, Scheduler.Actor actor, String name, Faults faults) {
    this.world = world;
    this.scheduler = scheduler;
    this.actor = actor;
    this.name = name;
    this.faults = faults;
    this.random = new Random(faults.seed());
  }

  boolean isDead() {
    return dead;
  }

  private <T> T call(String what, Effect<T> effect) throws StoreException {
    if (dead) {
      throw new Crash(name);
    }
    if (scheduler != null) {
      scheduler.pause(actor);
    }
    int n;
    double roll;
    synchronized (this) {
      n = ++calls;
      roll = random.nextDouble();
    }
    if (TRACE) {
      System.out.println("  " + name + " #" + n + " " + what);
    }
    if (n == faults.crashAt()) {
      dead = true;
      if (faults.landsLate()) {
        // The request was sent before the crash and reaches the store later.
        world.inFlight.add(
            () -> {
              try {
                effect.run();
              } catch (StoreException refused) {
                // a conditional write that the store refuses when it finally arrives
              }
            });
      }
      throw new Crash(name);
    }
    if (roll < faults.transientRate()) {
      throw new StoreException(ErrorKind.TRANSIENT, 503, "simulated 503 on " + what, null);
    }
    T result = effect.run();
    if (roll < faults.transientRate() + faults.lostAnswerRate()) {
      throw new StoreException(ErrorKind.TRANSIENT, 0, "simulated lost answer of " + what, null);
    }
    return result;
  }

  @Override
  public String bucket() {
    return World.BUCKET;
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
          return etag;
        });
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
    return call("DeleteObject If-Match " + key, () -> world.memory.deleteObjectIfMatch(key, etag));
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
          world.memory.deleteObjects(keys);
          return null;
        });
  }

  @Override
  public RequestCounters counters() {
    return world.memory.counters();
  }
}
