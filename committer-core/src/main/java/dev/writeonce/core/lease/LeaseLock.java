package dev.writeonce.core.lease;

import dev.writeonce.core.errors.ErrorKind;
import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.errors.LeaseLostException;
import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.json.InsertLockFormat;
import dev.writeonce.core.model.InsertLock;
import dev.writeonce.core.model.JobRecord;
import dev.writeonce.core.store.OwnedObjects;
import dev.writeonce.core.store.PeekedObject;
import dev.writeonce.core.store.StoreGateway;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ScheduledFuture;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A lock on one object of the store, held under a lease ({@link InsertLock}): taken with a
 * conditional create ({@code If-None-Match: *}), renewed every quarter of its lease and taken over,
 * once lapsed on the store's clock, with a conditional overwrite ({@code If-Match} on the ETag the
 * waiter read), so that two waiters can never both take over one lapsed lock. A write whose answer
 * was lost is resolved by reading the lock back: it names this acquisition.
 *
 * <p>A lease is not a fence: a holder paused past its lease (a long GC, a frozen container) or
 * whose renewals failed may believe it still holds a lock that another statement has taken over.
 * Actions in the store that the lock orders are conditional themselves or harmless when repeated;
 * an action outside the store (a metastore call) is preceded, as late as possible, by {@link
 * #fence}: one renewal conditional on this holder's last ETag that must succeed, sent less than the
 * lease minus a safety margin before the action.
 *
 * <p>Used for the rename shim's insert locks and for the publication lock of a table in metastore
 * publish mode.
 */
public final class LeaseLock {

  /** The lock's object name in the directory it locks: hidden from Hive's and Spark's listings. */
  public static final String OBJECT_NAME = InsertLockFormat.OBJECT_NAME;

  private static final Logger LOG = LoggerFactory.getLogger(LeaseLock.class);

  /**
   * Holders whose scheduled renewals a test holds back, as a frozen process would miss them; the
   * fence still writes. Nothing in the library sets it.
   */
  public static volatile Predicate<String> renewalsHeldBack = holder -> false;

  private static final long FIRST_PAUSE_MILLIS = 200;
  private static final long LONGEST_PAUSE_MILLIS = 5_000;
  private static final long REPORT_EVERY_MILLIS = 60_000;
  private static final int LOCK_BYTES = 4_096;

  /** Conditional renewals a fence tries when the store fails transiently. */
  private static final int FENCE_ATTEMPTS = 3;

  /** Waits between polls; tests pass one that advances their clock instead. */
  @FunctionalInterface
  public interface Pause {
    void pause(long millis) throws InterruptedException;
  }

  /** Starts a held lock's renewals; returns what stops them. */
  @FunctionalInterface
  public interface Renewals {
    Runnable schedule(long periodMillis, Runnable renewal);
  }

  /**
   * What a lock needs of its process: a clock of elapsed milliseconds (never compared with the
   * store's timestamps), a way to wait, and its renewals. Tests and the simulation give their own.
   */
  public record Timing(LongSupplier clock, Pause pause, Renewals renewals) {

    /** The process's monotonic clock, sleeping, and the shared {@link Renewer}. */
    public static final Timing PROCESS =
        new Timing(
            () -> System.nanoTime() / 1_000_000,
            Thread::sleep,
            (period, renewal) -> {
              ScheduledFuture<?> scheduled = Renewer.every(period, renewal);
              return () -> scheduled.cancel(false);
            });

    /** A clock and pause of the caller's, with renewals left to the caller ({@link #renew()}). */
    public static Timing manual(LongSupplier clock, Pause pause) {
      return new Timing(clock, pause, (period, renewal) -> () -> {});
    }
  }

  /**
   * One lock to take.
   *
   * @param key the lock's object
   * @param uri the lock's object as a URI, for messages
   * @param destination what the lock guards, as a URI, written into the lock for operators
   * @param holder the statement taking it
   * @param waitMillis how long to wait for a live holder before giving up
   * @param waitSetting the setting that bounds the wait, for messages
   * @param purpose what the holder does under the lock, for messages ("add files to")
   * @param why one sentence: why statements take this lock one at a time
   * @param progress told when the statement starts waiting, every minute while it waits, and when
   *     it takes over a lapsed lock
   */
  public record Request(
      StoreGateway store,
      String key,
      String uri,
      String destination,
      String holder,
      long leaseMillis,
      long waitMillis,
      String waitSetting,
      String purpose,
      String why,
      Consumer<String> progress) {}

  private final StoreGateway store;
  private final String key;
  private final String uri;
  private final LongSupplier clock;

  /** Guards the fields below; never held while a request is on the wire. */
  private final Object mutex = new Object();

  private InsertLock lock;
  private String etag;
  private boolean released;
  private boolean lost;

  /** The lock as read back when it was found to be another's; null when it was gone. */
  private InsertLock takenBy;

  private volatile Runnable stopRenewals = () -> {};

  private LeaseLock(
      StoreGateway store,
      String key,
      String uri,
      LongSupplier clock,
      InsertLock lock,
      String etag) {
    this.store = store;
    this.key = key;
    this.uri = uri;
    this.clock = clock;
    this.lock = lock;
    this.etag = etag;
  }

  /**
   * Takes the lock, waiting while another statement holds it and its lease is live, and starts
   * renewing it on the process's {@link Renewer}.
   *
   * @throws IOException when the wait runs out (naming the holder), or the store fails
   */
  public static LeaseLock acquire(Request request) throws IOException {
    return acquire(request, Timing.PROCESS);
  }

  /** {@link #acquire(Request)} with the caller's clock, pause and renewals. */
  public static LeaseLock acquire(Request request, Timing timing) throws IOException {
    StoreGateway store = request.store();
    LongSupplier clock = timing.clock();
    long started = clock.getAsLong();
    InsertLock mine = newLock(request);
    long nextPause = FIRST_PAUSE_MILLIS;
    long lastReport = Long.MIN_VALUE;
    int[] lostAnswers = {0};
    LeaseLock held = null;
    while (held == null) {
      Optional<String> created = tryCreate(store, request.key(), mine, lostAnswers);
      if (created.isPresent()) {
        held = new LeaseLock(store, request.key(), request.uri(), clock, mine, created.get());
        break;
      }
      Optional<PeekedObject> current = store.peekObject(request.key(), LOCK_BYTES, any -> true);
      if (current.isEmpty()) {
        continue; // released in between, or a write whose answer was lost never landed
      }
      InsertLock other = read(current.get(), request.uri());
      if (other.uuid().equals(mine.uuid())) {
        // A create whose answer was lost.
        held =
            new LeaseLock(
                store, request.key(), request.uri(), clock, mine, current.get().info().etag());
        break;
      }
      long now = clock.getAsLong();
      // The lapse is judged on the store's clock: its Last-Modified against the time the store
      // gave its answer to this read, never against this host's clock, whose skew is unknown.
      long lapsesAt = current.get().info().lastModifiedMillis() + other.leaseMillis();
      if (store.storeNowMillis() >= lapsesAt) {
        held = takeOver(request, clock, mine, current.get(), other, lapsesAt).orElse(null);
        continue; // when empty: renewed, released or taken over by another waiter in between
      }
      long waited = now - started;
      if (waited >= request.waitMillis()) {
        throw new IOException(
            LeaseLockMessages.waitedTooLong(request, other, lapsesAt, request.waitMillis()));
      }
      if (lastReport == Long.MIN_VALUE || now - lastReport >= REPORT_EVERY_MILLIS) {
        lastReport = now;
        request.progress().accept(LeaseLockMessages.waiting(request, other, waited));
      }
      pause(timing.pause(), nextPause, request.uri());
      nextPause = Math.min(nextPause * 2, LONGEST_PAUSE_MILLIS);
    }
    held.stopRenewals = timing.renewals().schedule(request.leaseMillis() / 4, held::renew);
    return held;
  }

  private static InsertLock newLock(Request request) {
    long now = System.currentTimeMillis();
    String uuid = UUID.randomUUID().toString();
    return new InsertLock(
        request.holder(),
        uuid,
        JobRecord.thisHost(),
        request.destination(),
        now,
        now,
        request.leaseMillis());
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
  private static Optional<LeaseLock> takeOver(
      Request request,
      LongSupplier clock,
      InsertLock mine,
      PeekedObject lapsed,
      InsertLock other,
      long lapsesAt)
      throws IOException {
    InsertLock taking = mine.renewedAt(System.currentTimeMillis());
    try {
      String written =
          request
              .store()
              .replaceObject(request.key(), InsertLockFormat.toJson(taking), lapsed.info().etag());
      String line = LeaseLockMessages.tookOver(request, other, lapsesAt);
      LOG.warn("{}: {}", taking.holder(), line);
      request.progress().accept(line);
      return Optional.of(
          new LeaseLock(request.store(), request.key(), request.uri(), clock, taking, written));
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
              + " is not a writeonce lock ("
              + e.getMessage()
              + "); it was written by another tool. Remove it, once no statement writes to"
              + " that table, and run the statement again",
          e);
    }
  }

  /** The lock as this holder last wrote it. */
  public InsertLock lock() {
    synchronized (mutex) {
      return lock;
    }
  }

  /** Whether another statement took the lock over, as far as this holder has learnt. */
  public boolean isLost() {
    synchronized (mutex) {
      return lost;
    }
  }

  /**
   * Rewrites the lock, conditional on its last ETag. A renewal whose answer was lost is recognised
   * when the lock read back is still this acquisition's; otherwise another statement took it over,
   * the lock is lost and is never written or removed by this holder again. A renewal that fails
   * otherwise is only logged: the next one tries again, and {@link #fence} proves the lock before
   * anything depends on it.
   */
  void renew() {
    InsertLock holder;
    synchronized (mutex) {
      if (released || lost) {
        return;
      }
      holder = lock;
    }
    if (renewalsHeldBack.test(holder.holder())) {
      return;
    }
    try {
      write();
    } catch (StoreException e) {
      if (!e.is(ErrorKind.PRECONDITION_FAILED)) {
        LOG.warn(
            "{}: renewing the lock {} failed ({}); the next renewal tries again",
            holder.holder(),
            uri,
            e.getMessage());
        return;
      }
      try {
        recognise();
      } catch (IOException readBack) {
        LOG.warn(
            "{}: reading back the lock {} failed ({})",
            holder.holder(),
            uri,
            readBack.getMessage());
      }
    } catch (RuntimeException e) {
      // The store's client is closed: the file system that held this lock is gone.
      LOG.debug("{}: lock renewal stops: {}", holder.holder(), e.toString());
      synchronized (mutex) {
        released = true;
      }
      stopRenewals.run();
    }
  }

  /**
   * Writes the lock again, conditional on its last ETag. No request is sent under the monitor: a
   * renewal and a fence may race, and the store's condition orders them; the loser is refused,
   * reads the lock back and finds it still this acquisition's.
   */
  private void write() throws StoreException {
    InsertLock next;
    String expected;
    synchronized (mutex) {
      // Every write changes the body, so that its ETag changes and a waiter's takeover
      // conditional on the ETag it read fails once the holder has written again, however close
      // the two writes.
      next = lock.renewedAt(Math.max(System.currentTimeMillis(), lock.renewedAtMillis() + 1));
      expected = etag;
    }
    String written = store.replaceObject(key, InsertLockFormat.toJson(next), expected);
    synchronized (mutex) {
      if (etag.equals(expected)) {
        etag = written;
        lock = next;
      }
    }
  }

  /**
   * After a conditional write was refused: true when the lock read back is still this acquisition's
   * (a write whose answer was lost landed; its ETag is taken), else marks the lock lost.
   */
  private boolean recognise() throws IOException {
    Optional<PeekedObject> current = store.peekObject(key, LOCK_BYTES, any -> true);
    InsertLock found = null;
    if (current.isPresent()) {
      try {
        found = read(current.get(), uri);
      } catch (IOException notALock) {
        found = null;
      }
    }
    InsertLock mine;
    synchronized (mutex) {
      mine = lock;
      if (found != null && found.uuid().equals(lock.uuid())) {
        etag = current.get().info().etag();
        return true;
      }
      lost = true;
      takenBy = found;
    }
    stopRenewals.run();
    LOG.error(
        "{}: the lock {} was taken over by another statement{}: this session did not renew it"
            + " within its lease of {} ms (a long pause of the process, or renewals that failed)",
        mine.holder(),
        uri,
        found == null ? "" : " (" + found.holder() + ")",
        mine.leaseMillis());
    return false;
  }

  /**
   * Proves, right before an action outside the store that only the lock's holder may take, that
   * this holder holds the lock and will for a while yet: one renewal conditional on the last ETag
   * that must succeed, sent less than the lease minus its safety margin ago when it returns.
   * Retries a transient failure (twice); a renewal whose answer was lost is recognised by reading
   * back.
   *
   * @param action what the holder is about to do, for the message ("call the metastore")
   * @throws LeaseLostException when another statement took the lock over, or this holder cannot
   *     prove it still holds it; the action must not be taken
   */
  public void fence(String action) throws IOException {
    InsertLock holder;
    synchronized (mutex) {
      if (released) {
        throw new IllegalStateException("the lock " + uri + " was released before " + action);
      }
      holder = lock;
    }
    String failure = null;
    StoreException cause = null;
    for (int attempt = 0; attempt < FENCE_ATTEMPTS && !isLost(); attempt++) {
      long sent = clock.getAsLong();
      try {
        write();
      } catch (StoreException e) {
        if (e.is(ErrorKind.PRECONDITION_FAILED)) {
          recognise(); // ours after all: the next attempt writes on the ETag read back
          continue;
        }
        if (!e.is(ErrorKind.TRANSIENT)) {
          throw e;
        }
        failure = e.getMessage();
        cause = e;
        continue;
      }
      long age = clock.getAsLong() - sent;
      long usable = holder.leaseMillis() - safetyMargin(holder);
      if (age < usable) {
        return;
      }
      failure =
          "the renewal took " + age + " ms, more than the " + usable + " ms of its lease it uses";
      cause = null;
    }
    synchronized (mutex) {
      if (lost) {
        throw new LeaseLostException(LeaseLockMessages.lost(holder.holder(), uri, action, takenBy));
      }
    }
    throw new LeaseLostException(
        "statement "
            + holder.holder()
            + " could not renew the lock "
            + uri
            + " before it would "
            + action
            + " ("
            + failure
            + "): it cannot prove that it still holds the lock, so it does not "
            + action
            + ". Run the statement again once the store answers",
        cause);
  }

  /**
   * Stops renewing and leaves the lock to lapse: no one takes it over for a lease from its last
   * renewal. For a holder whose last action outside the store may still land (a call whose answer
   * was lost), so that the next holder does not act before it.
   */
  public void abandon() {
    synchronized (mutex) {
      if (released) {
        return;
      }
      released = true;
    }
    stopRenewals.run();
    LOG.info("{}: the lock {} is left to lapse", lock().holder(), uri);
  }

  /**
   * Stops renewing and removes the lock, unless it was lost. A failed removal leaves the lock to
   * lapse: the next statement takes it over after the lease.
   */
  public void release() {
    InsertLock holder;
    synchronized (mutex) {
      if (released) {
        return;
      }
      released = true;
      holder = lock;
    }
    stopRenewals.run();
    if (isLost()) {
      return;
    }
    try {
      // Only while it is still this acquisition's, and not about to lapse: a holder that was
      // paused past its lease may have been taken over without a renewal noticing.
      OwnedObjects.ReadBack outcome =
          OwnedObjects.deleteIfOwned(
              store,
              key,
              this::isThisAcquisition,
              (info, storeNow) ->
                  storeNow
                      < info.lastModifiedMillis() + holder.leaseMillis() - safetyMargin(holder));
      if (outcome == OwnedObjects.ReadBack.NOT_OURS) {
        LOG.warn(
            "{}: the lock {} is no longer this statement's, or was about to lapse: left for the"
                + " statement that took it over, or to lapse",
            holder.holder(),
            uri);
      }
    } catch (IOException | RuntimeException e) {
      LOG.warn(
          "{}: removing the lock {} failed ({}); the next statement waits until it lapses, {} ms"
              + " after its last renewal",
          holder.holder(),
          uri,
          e.getMessage(),
          holder.leaseMillis());
    }
  }

  private boolean isThisAcquisition(byte[] body) {
    try {
      return InsertLockFormat.fromJson(body, uri).uuid().equals(lock().uuid());
    } catch (FormatException e) {
      return false;
    }
  }

  /**
   * How much of the lease a holder never uses: a quarter of it. A release stops deleting that long
   * before the lease lapses, so that a takeover, which needs the lapse, cannot land between the
   * read-back and the delete on a store that ignores {@code If-Match} on DELETE; and a {@link
   * #fence} fails when its renewal took longer than the rest, so that the action it guards starts
   * with at least that long before anyone may take the lock over.
   */
  private static long safetyMargin(InsertLock lock) {
    return lock.leaseMillis() / 4;
  }
}
