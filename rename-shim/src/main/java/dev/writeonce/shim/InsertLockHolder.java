package dev.writeonce.shim;

import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.json.InsertLockFormat;
import dev.writeonce.core.model.InsertLock;
import dev.writeonce.core.model.JobRecord;
import dev.writeonce.core.store.ErrorKind;
import dev.writeonce.core.store.OwnedObjects;
import dev.writeonce.core.store.PeekedObject;
import dev.writeonce.core.store.StoreGateway;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Instant;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A held {@link InsertLock}: taken with a conditional create ({@code If-None-Match: *}), renewed
 * every quarter of its lease and taken over, once lapsed, with a conditional overwrite ({@code
 * If-Match} on the ETag the waiter read), so that two waiters can never both take over one lapsed
 * lock. A write whose answer was lost is resolved by reading the lock back: it names this
 * acquisition.
 */
public final class InsertLockHolder {

  /** The lock's object name in the directory it locks: hidden from Hive's and Spark's listings. */
  public static final String OBJECT_NAME = InsertLockFormat.OBJECT_NAME;

  private static final Logger LOG = LoggerFactory.getLogger(InsertLockHolder.class);

  private static final long FIRST_PAUSE_MILLIS = 200;
  private static final long LONGEST_PAUSE_MILLIS = 5_000;
  private static final long REPORT_EVERY_MILLIS = 60_000;
  private static final int LOCK_BYTES = 4_096;

  /** One daemon thread renews every insert lock of the process; a renewal is one small PUT. */
  private static final ScheduledThreadPoolExecutor RENEWER = renewer();

  /** Waits between polls; tests pass one that advances their clock instead. */
  @FunctionalInterface
  interface Pause {
    void pause(long millis) throws InterruptedException;
  }

  private final StoreGateway store;
  private final String key;
  private final String uri;
  private final Object mutex = new Object();
  private InsertLock lock;
  private String etag;
  private boolean released;
  private boolean lost;
  private volatile ScheduledFuture<?> renewal;

  private InsertLockHolder(
      StoreGateway store, String key, String uri, InsertLock lock, String etag) {
    this.store = store;
    this.key = key;
    this.uri = uri;
    this.lock = lock;
    this.etag = etag;
  }

  private static ScheduledThreadPoolExecutor renewer() {
    ScheduledThreadPoolExecutor renewer =
        new ScheduledThreadPoolExecutor(
            1,
            runnable -> {
              Thread thread = new Thread(runnable, "writeonce-insert-lock");
              thread.setDaemon(true);
              return thread;
            });
    renewer.setRemoveOnCancelPolicy(true);
    return renewer;
  }

  /**
   * Takes the insert lock of the directory at {@code directoryKey}, waiting up to {@link
   * ShimConfig#INSERT_WAIT} for a live holder, and starts renewing it.
   */
  static InsertLockHolder acquireIn(
      StoreGateway gateway,
      String directoryKey,
      String statement,
      long leaseMillis,
      long waitMillis,
      Consumer<String> progress)
      throws IOException {
    String key = (directoryKey.isEmpty() ? "" : directoryKey + "/") + OBJECT_NAME;
    String bucket = "s3a://" + gateway.bucket() + "/";
    return acquire(
        gateway,
        key,
        bucket + key,
        bucket + directoryKey,
        statement,
        leaseMillis,
        waitMillis,
        ShimConfig.INSERT_WAIT,
        progress);
  }

  /**
   * Takes the lock at {@code key}, waiting while another statement holds it and its lease is live,
   * and starts renewing it.
   *
   * @param uri the lock's object as a URI, for messages
   * @param destination the locked directory as a URI, written into the lock for operators
   * @param holder the statement taking it
   * @param waitMillis how long to wait for a live holder before giving up
   * @param waitSetting the setting that bounds the wait, for messages
   * @param progress told when the statement starts waiting, every minute while it waits, and when
   *     it takes over a lapsed lock
   * @throws IOException when the wait runs out (naming the holder), or the store fails
   */
  public static InsertLockHolder acquire(
      StoreGateway store,
      String key,
      String uri,
      String destination,
      String holder,
      long leaseMillis,
      long waitMillis,
      String waitSetting,
      Consumer<String> progress)
      throws IOException {
    InsertLockHolder held =
        acquire(
            store,
            key,
            uri,
            destination,
            holder,
            leaseMillis,
            waitMillis,
            waitSetting,
            progress,
            System::currentTimeMillis,
            Thread::sleep);
    long period = Math.max(1, leaseMillis / 4);
    held.renewal =
        RENEWER.scheduleWithFixedDelay(held::renew, period, period, TimeUnit.MILLISECONDS);
    return held;
  }

  /** Takes the lock without starting its renewal: {@link #renew()} is then the caller's. */
  static InsertLockHolder acquire(
      StoreGateway store,
      String key,
      String uri,
      String destination,
      String holder,
      long leaseMillis,
      long waitMillis,
      String waitSetting,
      Consumer<String> progress,
      LongSupplier clock,
      Pause pause)
      throws IOException {
    long started = clock.getAsLong();
    InsertLock mine = newLock(holder, destination, leaseMillis, started);
    long nextPause = FIRST_PAUSE_MILLIS;
    long lastReport = Long.MIN_VALUE;
    int[] lostAnswers = {0};
    while (true) {
      Optional<String> created = tryCreate(store, key, mine, lostAnswers);
      if (created.isPresent()) {
        return new InsertLockHolder(store, key, uri, mine, created.get());
      }
      Optional<PeekedObject> current = store.peekObject(key, LOCK_BYTES, any -> true);
      if (current.isEmpty()) {
        continue; // released in between, or a write whose answer was lost never landed
      }
      InsertLock other = read(current.get(), uri);
      if (other.uuid().equals(mine.uuid())) {
        return new InsertLockHolder(store, key, uri, mine, current.get().info().etag());
      }
      long now = clock.getAsLong();
      // The lapse is judged on the store's clock: its Last-Modified against the time the store
      // gave its answer to this read, never against this host's clock, whose skew is unknown.
      long lapsesAt = current.get().info().lastModifiedMillis() + other.leaseMillis();
      if (store.storeNowMillis() >= lapsesAt) {
        Optional<InsertLockHolder> taken =
            takeOver(
                store, key, uri, mine.renewedAt(now), current.get(), other, lapsesAt, progress);
        if (taken.isPresent()) {
          return taken.get();
        }
        continue; // renewed, released or taken over by another waiter in between
      }
      long waited = now - started;
      if (waited >= waitMillis) {
        throw new IOException(
            InsertLockMessages.waitedTooLong(
                holder, destination, uri, other, lapsesAt, waitMillis, waitSetting));
      }
      if (lastReport == Long.MIN_VALUE || now - lastReport >= REPORT_EVERY_MILLIS) {
        lastReport = now;
        progress.accept(
            InsertLockMessages.waiting(other, destination, waited, waitMillis, waitSetting));
      }
      pause(pause, nextPause, uri);
      nextPause = Math.min(nextPause * 2, LONGEST_PAUSE_MILLIS);
    }
  }

  private static InsertLock newLock(String holder, String destination, long leaseMillis, long now) {
    String uuid = UUID.randomUUID().toString();
    return new InsertLock(holder, uuid, JobRecord.thisHost(), destination, now, now, leaseMillis);
  }

  /**
   * Creates the lock if there is none: its ETag, or empty when it exists or the answer was lost
   * (the caller reads the lock back). A fourth lost answer is thrown.
   */
  private static Optional<String> tryCreate(
      StoreGateway store, String key, InsertLock mine, int[] lostAnswers) throws StoreException {
    try {
      return Optional.of(store.putObject(key, InsertLockFormat.toJson(mine), true));
    } catch (StoreException e) {
      if (e.is(ErrorKind.TRANSIENT) && ++lostAnswers[0] > 3) {
        throw e;
      }
      if (!e.is(ErrorKind.PRECONDITION_FAILED) && !e.is(ErrorKind.TRANSIENT)) {
        throw e;
      }
      return Optional.empty();
    }
  }

  private static void pause(Pause pause, long millis, String uri) throws IOException {
    try {
      pause.pause(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted waiting for " + uri);
    }
  }

  /** Takes over a lapsed lock, conditional on the ETag read; empty when it changed meanwhile. */
  private static Optional<InsertLockHolder> takeOver(
      StoreGateway store,
      String key,
      String uri,
      InsertLock taking,
      PeekedObject lapsed,
      InsertLock other,
      long lapsesAt,
      Consumer<String> progress)
      throws IOException {
    try {
      String written =
          store.replaceObject(key, InsertLockFormat.toJson(taking), lapsed.info().etag());
      String line =
          "took over the insert lock "
              + uri
              + " of statement "
              + other.holder()
              + " (host "
              + other.host()
              + "), which lapsed at "
              + Instant.ofEpochMilli(lapsesAt)
              + ": its session stopped renewing it";
      LOG.warn("{}: {}", taking.holder(), line);
      progress.accept(line);
      return Optional.of(new InsertLockHolder(store, key, uri, taking, written));
    } catch (StoreException e) {
      if (!e.is(ErrorKind.PRECONDITION_FAILED)) {
        throw e;
      }
      return Optional.empty();
    }
  }

  private static InsertLock read(PeekedObject object, String uri) throws IOException {
    byte[] body = object.matchingBody().orElse(new byte[0]);
    try {
      return InsertLockFormat.fromJson(body, uri);
    } catch (FormatException e) {
      throw new IOException(
          uri
              + " is not a writeonce insert lock ("
              + e.getMessage()
              + "); it was written by another tool. Remove it, once no statement adds files to"
              + " that directory, and run the statement again",
          e);
    }
  }

  /** The lock as this holder last wrote it. */
  public InsertLock lock() {
    synchronized (mutex) {
      return lock;
    }
  }

  /** Whether another statement took the lock over because a renewal came too late. */
  public boolean isLost() {
    synchronized (mutex) {
      return lost;
    }
  }

  /**
   * Rewrites the lock, conditional on its last ETag. A renewal whose answer was lost is recognised
   * when the lock read back is still this acquisition's; otherwise another statement took it over,
   * the lock is lost and is never written or removed by this holder again.
   */
  void renew() {
    synchronized (mutex) {
      if (released || lost) {
        return;
      }
      InsertLock next = lock.renewedAt(System.currentTimeMillis());
      try {
        etag = store.replaceObject(key, InsertLockFormat.toJson(next), etag);
        lock = next;
      } catch (StoreException e) {
        if (!e.is(ErrorKind.PRECONDITION_FAILED)) {
          LOG.warn(
              "{}: renewing the insert lock {} failed ({}); the next renewal tries again",
              lock.holder(),
              uri,
              e.getMessage());
          return;
        }
        recognise();
      } catch (RuntimeException e) {
        // The store's client is closed: the file system that held this lock is gone.
        LOG.debug("{}: insert lock renewal stops: {}", lock.holder(), e.toString());
        released = true;
        cancelRenewal();
      }
    }
  }

  private void recognise() {
    try {
      Optional<PeekedObject> current = store.peekObject(key, LOCK_BYTES, any -> true);
      if (current.isPresent() && read(current.get(), uri).uuid().equals(lock.uuid())) {
        etag = current.get().info().etag(); // an earlier renewal landed; its answer was lost
        return;
      }
    } catch (IOException e) {
      LOG.warn(
          "{}: reading back the insert lock {} failed ({})", lock.holder(), uri, e.getMessage());
      return;
    }
    lost = true;
    cancelRenewal();
    LOG.error(
        "{}: the insert lock {} was taken over by another statement: this session did not renew"
            + " it within its lease of {} ms (a long pause of the process?). The two statements"
            + " may choose the same file names; check that statement's result",
        lock.holder(),
        uri,
        lock.leaseMillis());
  }

  /**
   * Stops renewing and removes the lock, unless it was lost. A failed removal leaves the lock to
   * lapse: the next statement takes it over after the lease.
   */
  public void release() {
    synchronized (mutex) {
      if (released) {
        return;
      }
      released = true;
      cancelRenewal();
      if (lost) {
        return;
      }
      try {
        // Only while it is still this acquisition's, and not about to lapse: a holder that was
        // paused past its lease may have been taken over without a renewal noticing.
        OwnedObjects.Outcome outcome =
            OwnedObjects.deleteIfOwned(
                store,
                key,
                body -> isThisAcquisition(body),
                (info, storeNow) ->
                    storeNow < info.lastModifiedMillis() + lock.leaseMillis() - safetyMargin());
        if (outcome == OwnedObjects.Outcome.NOT_OURS) {
          LOG.warn(
              "{}: the insert lock {} is no longer this statement's, or was about to lapse: left"
                  + " for the statement that took it over, or to lapse",
              lock.holder(),
              uri);
        }
      } catch (IOException | RuntimeException e) {
        LOG.warn(
            "{}: removing the insert lock {} failed ({}); the next statement that adds files there"
                + " waits until it lapses, {} ms after its last renewal",
            lock.holder(),
            uri,
            e.getMessage(),
            lock.leaseMillis());
      }
    }
  }

  private boolean isThisAcquisition(byte[] body) {
    try {
      return InsertLockFormat.fromJson(body, uri).uuid().equals(lock.uuid());
    } catch (FormatException e) {
      return false;
    }
  }

  /**
   * How long before the lease lapses a release stops deleting: a quarter of the lease, so that a
   * takeover, which needs the lapse, cannot land between the read-back and the delete on a store
   * that ignores {@code If-Match} on DELETE unless that delete takes longer than this to arrive.
   */
  private long safetyMargin() {
    return lock.leaseMillis() / 4;
  }

  private void cancelRenewal() {
    ScheduledFuture<?> scheduled = renewal;
    if (scheduled != null) {
      scheduled.cancel(false);
    }
  }
}
