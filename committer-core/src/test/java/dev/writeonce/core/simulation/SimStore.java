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

  /**
   * How an actor's requests fail: crash at the Nth (0: never), and rates of the others. Before its
   * {@code pauseAt}th request (0: never) the process stops for {@code pauseMillis} of the store's
   * clock, as a long GC or a frozen container would; before each request the clock moves on by up
   * to {@code tickMillis}.
   */
  record Faults(
      int crashAt,
      double transientRate,
      double lostAnswerRate,
      long seed,
      boolean landsLate,
      int pauseAt,
      long pauseMillis,
      int tickMillis) {
    static final Faults NONE = new Faults(0, 0, 0, 0, false);

    Faults(int crashAt, double transientRate, double lostAnswerRate, long seed) {
      this(crashAt, transientRate, lostAnswerRate, seed, false);
    }

    Faults(int crashAt, double transientRate, double lostAnswerRate, long seed, boolean landsLate) {
      this(crashAt, transientRate, lostAnswerRate, seed, landsLate, 0, 0, 0);
    }
  }

  /**
   * A simulated process whose threads each have a store of their own (a statement and the timer
   * that renews its lock): they die together and pause together.
   */
  static final class Process {
    volatile boolean dead;
    volatile boolean paused;
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
  private final Process process;
  private int calls;

  SimStore(World world, Scheduler scheduler, Scheduler.Actor actor, String name, Faults faults) {
    this(world, scheduler, actor, name, faults, new Process());
  }

  SimStore(
      World world,
      Scheduler scheduler,
      Scheduler.Actor actor,
      String name,
      Faults faults,
      Process process) {
    this.world = world;
    this.scheduler = scheduler;
    this.actor = actor;
    this.name = name;
    this.faults = faults;
    this.random = new Random(faults.seed());
    this.process = process;
  }

  boolean isDead() {
    return process.dead;
  }

  /** The requests this store has sent, or tried to. */
  synchronized int calls() {
    return calls;
  }

  private <T> T call(String what, Effect<T> effect) throws StoreException {
    if (process.dead) {
      throw new Crash(name);
    }
    if (scheduler != null) {
      scheduler.pause(actor);
      // Another thread of this process paused it: nothing is sent until it goes on.
      if (process.paused) {
        scheduler.blockUntil(actor, () -> !process.paused || process.dead);
      }
      if (process.dead) {
        throw new Crash(name);
      }
    }
    int n;
    double roll;
    int tick;
    synchronized (this) {
      n = ++calls;
      roll = random.nextDouble();
      tick = faults.tickMillis() > 0 ? random.nextInt(faults.tickMillis()) : 0;
    }
    if (n == faults.pauseAt() && scheduler != null) {
      pauseProcess();
    }
    if (process.dead) {
      throw new Crash(name);
    }
    world.memory.advanceClock(tick);
    if (TRACE) {
      System.out.println("  " + name + " #" + n + " " + what);
    }
    if (n == faults.crashAt()) {
      process.dead = true;
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
    world.observer.afterRequest(name, what);
    if (roll < faults.transientRate() + faults.lostAnswerRate()) {
      throw new StoreException(ErrorKind.TRANSIENT, 0, "simulated lost answer of " + what, null);
    }
    return result;
  }

  /**
   * The process stops: none of its threads sends anything until the store's clock has moved on by
   * the pause, or until no other actor can go on, when the pause ends by itself.
   */
  private void pauseProcess() {
    long resumeAt = world.memory.clockMillis() + faults.pauseMillis();
    process.paused = true;
    if (TRACE) {
      System.out.println("  " + name + " pauses until " + resumeAt);
    }
    scheduler.sleepUntil(actor, () -> world.memory.clockMillis() >= resumeAt);
    long behind = resumeAt - world.memory.clockMillis();
    if (behind > 0) {
      world.memory.advanceClock(behind);
    }
    process.paused = false;
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
