package dev.writeonce.core.lease;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.errors.ErrorKind;
import dev.writeonce.core.errors.LeaseLostException;
import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.json.InsertLockFormat;
import dev.writeonce.core.model.InsertLock;
import dev.writeonce.core.store.RequestType;
import dev.writeonce.core.store.StoreGateway;
import dev.writeonce.core.testing.ForwardingStore;
import dev.writeonce.core.testing.InMemoryStore;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The insert lock against an in-memory store whose clock the test moves: waiting for a live holder,
 * taking over a lapsed lock exactly once, answers lost on the way, and a holder that learns it was
 * taken over.
 */
class LeaseLockTest {

  private static final String KEY = "warehouse/t/" + LeaseLock.OBJECT_NAME;
  private static final String URI = "s3a://bucket/" + KEY;
  private static final long LEASE = 10_000;
  private static final long WAIT = 60_000;
  private static final String WAIT_SETTING = "writeonce.test.wait";

  private final InMemoryStore memory = new InMemoryStore("bucket");
  private final List<String> progress = new ArrayList<>();

  private LeaseLock acquire(StoreGateway store, String statement, LeaseLock.Pause p)
      throws IOException {
    return LeaseLock.acquire(
        request(store, statement), LeaseLock.Timing.manual(memory::clockMillis, p));
  }

  private LeaseLock.Request request(StoreGateway store, String statement) {
    return new LeaseLock.Request(
        store,
        KEY,
        URI,
        "s3a://bucket/warehouse/t",
        statement,
        LEASE,
        WAIT,
        WAIT_SETTING,
        "add files to",
        "Statements that add files to one table run one at a time.",
        progress::add);
  }

  private LeaseLock acquire(String statement, LeaseLock.Pause p) throws IOException {
    return acquire(memory, statement, p);
  }

  private static LeaseLock.Pause neverWaits() {
    return millis -> {
      throw new AssertionError("did not expect to wait");
    };
  }

  private InsertLock stored() throws IOException {
    return InsertLockFormat.fromJson(memory.content(KEY), URI);
  }

  @Test
  void aStatementWaitsWhileAnotherHoldsTheLockAndTakesItOnceReleased() throws Exception {
    LeaseLock first = acquire("statement-1", neverWaits());
    AtomicInteger pauses = new AtomicInteger();

    LeaseLock second =
        acquire(
            "statement-2",
            millis -> {
              memory.advanceClock(millis);
              if (pauses.incrementAndGet() == 3) {
                first.release();
              }
            });

    assertThat(pauses).hasValue(3);
    assertThat(stored().holder()).isEqualTo("statement-2");
    assertThat(second.lock().uuid()).isEqualTo(stored().uuid());
    assertThat(progress)
        .hasSize(1)
        .allMatch(line -> line.startsWith("waiting for statement statement-1"))
        .allMatch(line -> line.contains(WAIT_SETTING));
    second.release();
    assertThat(memory.keys()).isEmpty();
  }

  @Test
  void aLockWhoseHolderStoppedRenewingIsTakenOverAfterItsLeaseAndItsHolderLearnsItLostIt()
      throws Exception {
    LeaseLock stalled = acquire("statement-1", neverWaits());

    LeaseLock taker = acquire("statement-2", millis -> memory.advanceClock(millis));

    assertThat(stored().holder()).isEqualTo("statement-2");
    assertThat(progress).last().asString().startsWith("took over the lock " + URI);
    assertThat(progress).last().asString().contains("which lapsed at");

    stalled.renew();
    assertThat(stalled.isLost()).isTrue();
    stalled.release();
    assertThat(stored().holder())
        .as("a holder that lost the lock never removes the taker's")
        .isEqualTo("statement-2");
    taker.release();
    assertThat(memory.keys()).isEmpty();
  }

  @Test
  void aHolderThatRenewsKeepsTheLockAndTheWaiterGivesUpNamingItAndTheSetting() throws Exception {
    LeaseLock live = acquire("statement-1", neverWaits());

    assertThatThrownBy(
            () ->
                acquire(
                    "statement-2",
                    millis -> {
                      memory.advanceClock(millis);
                      live.renew();
                    }))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("statement statement-1")
        .hasMessageContaining(URI)
        .hasMessageContaining(WAIT_SETTING)
        .hasMessageContaining("lapses at");

    assertThat(live.isLost()).isFalse();
    assertThat(stored().holder()).isEqualTo("statement-1");
    assertThat(progress).as("one report: the wait ran out before the next one").hasSize(1);
  }

  @Test
  void twoWaitersCannotBothTakeOverOneLapsedLock() throws Exception {
    acquire("dead-statement", neverWaits());
    memory.advanceClock(LEASE + 1);
    List<LeaseLock> third = new ArrayList<>();
    AtomicInteger takeovers = new AtomicInteger();
    StoreGateway racing =
        new ForwardingStore(memory) {
          @Override
          public String replaceObject(String key, byte[] data, String etag) throws StoreException {
            if (takeovers.incrementAndGet() == 1) {
              // Another waiter read the same lapsed lock and takes it over first.
              try {
                third.add(acquire(memory, "statement-3", neverWaits()));
              } catch (IOException e) {
                throw new AssertionError(e);
              }
            }
            return super.replaceObject(key, data, etag);
          }
        };
    AtomicInteger pauses = new AtomicInteger();

    LeaseLock second =
        acquire(
            racing,
            "statement-2",
            millis -> {
              assertThat(new String(memory.content(KEY))).contains("\"statement-3\"");
              memory.advanceClock(millis);
              if (pauses.incrementAndGet() == 2) {
                third.get(0).release();
              }
            });

    assertThat(takeovers)
        .as("statement-2's takeover was refused: the lock had changed")
        .hasValue(1);
    assertThat(pauses).as("so it waited for statement-3").hasValue(2);
    assertThat(stored().holder()).isEqualTo("statement-2");
    assertThat(second.lock().uuid()).isEqualTo(stored().uuid());
  }

  @Test
  void aLockWriteWhoseAnswerWasLostIsRecognisedAsOwnAndSoIsALostRenewal() throws Exception {
    AtomicInteger lostAnswers = new AtomicInteger();
    StoreGateway losing =
        new ForwardingStore(memory) {
          @Override
          public String putObject(String key, byte[] data, boolean ifNoneMatch)
              throws StoreException {
            super.putObject(key, data, ifNoneMatch);
            lostAnswers.incrementAndGet();
            throw new StoreException(ErrorKind.TRANSIENT, 500, "answer lost", null);
          }

          @Override
          public String replaceObject(String key, byte[] data, String etag) throws StoreException {
            String written = super.replaceObject(key, data, etag);
            if (lostAnswers.incrementAndGet() == 2) {
              throw new StoreException(ErrorKind.TRANSIENT, 500, "answer lost", null);
            }
            return written;
          }
        };

    LeaseLock held = acquire(losing, "statement-1", neverWaits());
    assertThat(stored().uuid()).isEqualTo(held.lock().uuid());

    memory.advanceClock(LEASE / 4);
    held.renew(); // lands, answer lost: the holder keeps the old ETag
    memory.advanceClock(LEASE / 4);
    held.renew(); // 412 on the old ETag; read back: still this acquisition's
    assertThat(held.isLost()).isFalse();
    memory.advanceClock(LEASE / 4);
    long puts = memory.counters().get(RequestType.PUT_OBJECT);
    held.renew();
    assertThat(memory.counters().get(RequestType.PUT_OBJECT)).isEqualTo(puts + 1);
    assertThat(held.isLost()).isFalse();
    held.release();
    held.release();
    assertThat(memory.keys()).isEmpty();
  }

  @Test
  void anObjectThatIsNotALockIsNotOverwrittenAndTheErrorNamesIt() throws Exception {
    memory.putObject(KEY, "written by another tool".getBytes(), false);

    assertThatThrownBy(() -> acquire("statement-1", neverWaits()))
        .isInstanceOf(IOException.class)
        .hasMessageContaining(URI)
        .hasMessageContaining("not a writeonce lock");
    assertThat(new String(memory.content(KEY))).isEqualTo("written by another tool");
  }

  @Test
  void aHolderPausedPastItsLeaseNeverDeletesTheLockOfTheStatementThatTookItOver() throws Exception {
    LeaseLock paused = acquire("statement-1", neverWaits());
    LeaseLock taker = acquire("statement-2", millis -> memory.advanceClock(millis));

    // The paused holder resumes, finishes its statement and releases, with no renewal since.
    paused.release();

    assertThat(stored().holder())
        .as("the lock stays the taker's: a third statement cannot enter while it runs")
        .isEqualTo("statement-2");
    assertThatThrownBy(() -> acquire("statement-3", neverWaits()))
        .as("a third statement has to wait")
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("did not expect to wait");
    taker.release();
    assertThat(memory.keys()).isEmpty();
  }

  @Test
  void aWaiterWhoseClockRunsMinutesAheadNeverTakesOverALiveLock() throws Exception {
    LeaseLock live = acquire("statement-1", neverWaits());
    long eightMinutes = 8 * 60_000L;

    assertThatThrownBy(
            () ->
                LeaseLock.acquire(
                    request(memory, "statement-2"),
                    LeaseLock.Timing.manual(
                        () -> memory.clockMillis() + eightMinutes,
                        millis -> {
                          memory.advanceClock(millis);
                          live.renew();
                        })))
        .hasMessageContaining("statement statement-1");
    assertThat(live.isLost()).isFalse();
    assertThat(stored().holder()).isEqualTo("statement-1");
  }

  @Test
  void aReleaseJustBeforeTheLeaseLapsesLeavesTheLockToLapseRatherThanRaceATakeover()
      throws Exception {
    LeaseLock late = acquire("statement-1", neverWaits());
    memory.advanceClock(LEASE - 1);

    late.release();

    assertThat(stored().holder()).isEqualTo("statement-1");
    LeaseLock next = acquire("statement-2", millis -> memory.advanceClock(millis));
    assertThat(stored().holder()).isEqualTo("statement-2");
    next.release();
    assertThat(memory.keys()).isEmpty();
  }

  @Test
  void aFenceRenewsTheLockConditionallyAndLetsTheHolderAct() throws Exception {
    LeaseLock held = acquire("statement-1", neverWaits());
    String before = memory.headObject(KEY).orElseThrow().etag();
    memory.advanceClock(LEASE / 2);

    held.fence("call the metastore");

    assertThat(memory.headObject(KEY).orElseThrow().etag()).isNotEqualTo(before);
    assertThat(memory.headObject(KEY).orElseThrow().lastModifiedMillis())
        .as("the lease counts from the fence's renewal")
        .isEqualTo(memory.clockMillis());
    held.release();
    assertThat(memory.keys()).isEmpty();
  }

  @Test
  void aHolderPausedPastItsLeaseFailsItsFenceNamingTheStatementThatTookItOver() throws Exception {
    LeaseLock paused = acquire("statement-1", neverWaits());
    LeaseLock taker = acquire("statement-2", millis -> memory.advanceClock(millis));

    // No renewal noticed the takeover: the paused holder learns of it at its fence.
    assertThat(paused.isLost()).isFalse();
    assertThatThrownBy(() -> paused.fence("call the metastore"))
        .isInstanceOf(LeaseLostException.class)
        .hasMessageContaining("statement statement-1 no longer holds the lock " + URI)
        .hasMessageContaining("taken over by statement statement-2")
        .hasMessageContaining("does not call the metastore");
    assertThat(stored().holder()).isEqualTo("statement-2");
    paused.release();
    assertThat(stored().holder()).isEqualTo("statement-2");
    taker.release();
    assertThat(memory.keys()).isEmpty();
  }

  @Test
  void aFenceAfterTheTakerReleasedTheLockFailsAndCreatesNoLock() throws Exception {
    LeaseLock paused = acquire("statement-1", neverWaits());
    acquire("statement-2", millis -> memory.advanceClock(millis)).release();

    assertThatThrownBy(() -> paused.fence("call the metastore"))
        .isInstanceOf(LeaseLostException.class)
        .hasMessageContaining("which has since released it");
    assertThat(memory.keys()).isEmpty();
  }

  @Test
  void aFenceWhoseRenewalsFailWithServerErrorsRefusesToAct() throws Exception {
    AtomicInteger refusals = new AtomicInteger();
    StoreGateway failing =
        new ForwardingStore(memory) {
          @Override
          public String replaceObject(String key, byte[] data, String etag) throws StoreException {
            refusals.incrementAndGet();
            throw new StoreException(ErrorKind.TRANSIENT, 503, "SlowDown", null);
          }
        };
    LeaseLock held = acquire(failing, "statement-1", neverWaits());

    held.renew(); // a background renewal failing with a 503 is only logged
    assertThat(held.isLost()).isFalse();
    assertThatThrownBy(() -> held.fence("call the metastore"))
        .isInstanceOf(LeaseLostException.class)
        .hasMessageContaining("could not renew the lock " + URI)
        .hasMessageContaining("SlowDown")
        .hasMessageContaining("does not call the metastore");
    assertThat(refusals).hasValue(4);
    held.release();
    assertThat(memory.keys()).isEmpty();
  }

  @Test
  void aFenceWhoseRenewalLandedWithItsAnswerLostRecognisesItAndActs() throws Exception {
    AtomicInteger writes = new AtomicInteger();
    StoreGateway losing =
        new ForwardingStore(memory) {
          @Override
          public String replaceObject(String key, byte[] data, String etag) throws StoreException {
            String written = super.replaceObject(key, data, etag);
            if (writes.incrementAndGet() == 1) {
              throw new StoreException(ErrorKind.TRANSIENT, 0, "connection reset", null);
            }
            return written;
          }
        };
    LeaseLock held = acquire(losing, "statement-1", neverWaits());

    held.fence("call the metastore");

    assertThat(writes).as("the lost one, then one on the ETag read back").hasValue(2);
    assertThat(held.isLost()).isFalse();
    held.release();
    assertThat(memory.keys()).isEmpty();
  }

  @Test
  void aFenceWhoseRenewalTakesMostOfTheLeaseRefusesToAct() throws Exception {
    StoreGateway slow =
        new ForwardingStore(memory) {
          @Override
          public String replaceObject(String key, byte[] data, String etag) throws StoreException {
            memory.advanceClock(LEASE * 3 / 4);
            return super.replaceObject(key, data, etag);
          }
        };
    LeaseLock held = acquire(slow, "statement-1", neverWaits());

    assertThatThrownBy(() -> held.fence("call the metastore"))
        .isInstanceOf(LeaseLostException.class)
        .hasMessageContaining("the renewal took 75")
        .hasMessageContaining("more than the 7500 ms of its lease it uses");
    held.release();
  }
}
