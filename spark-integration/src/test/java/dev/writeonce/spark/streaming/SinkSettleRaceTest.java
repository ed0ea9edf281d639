package dev.writeonce.spark.streaming;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.testing.s3.Handling;
import dev.writeonce.core.testing.s3.RequestHook;
import java.io.IOException;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A settle of the sink (a reader opening it, a batch's setup) racing a run that commits: it finds
 * the run by its intents before the run's record and log entry exist, and must leave the run's
 * uploads to it. Faults found by review, kept as the schedules that found them.
 */
class SinkSettleRaceTest {

  private static final String BUCKET = SinkFixture.BUCKET;
  private static final String ATTEMPT = "attempt_202611291520_0001_m_000000_0";

  private final SinkFixture fixture = new SinkFixture();
  private final dev.writeonce.core.testing.s3.MemoryS3 store = fixture.store;
  private final String sink = fixture.sink;

  @AfterEach
  void stop() {
    fixture.close();
  }

  /**
   * Run A's driver, meanwhile: its record, then its log entry (the commit point), once the settle
   * listed {@code _writeonce/} and asks for batch 1's entry.
   */
  private AtomicBoolean aCommitsBatchOneAfterTheSettleListed(String runA, PendingUpload upload) {
    AtomicBoolean listed = new AtomicBoolean();
    AtomicBoolean aCommitted = new AtomicBoolean();
    fixture.hook =
        request -> {
          if (request.operation().startsWith("ListObjects")
              && request.key() != null
              && request.key().contains("_writeonce/")) {
            listed.set(true);
          } else if (listed.get()
              && sink.concat("_spark_metadata/1").equals(request.key())
              && aCommitted.compareAndSet(false, true)) {
            fixture.record(1, runA, List.of(upload));
            fixture.put(sink + "_spark_metadata/1", SinkFixture.entry(upload.key()));
          }
          return Handling.PROCEED;
        };
    return aCommitted;
  }

  @Test
  void aReaderRacingACommittingRunLeavesTheUploadsTheEntryLists() throws IOException {
    String runA = UUID.randomUUID().toString();
    String key = fixture.dataFile(0, runA);
    PendingUpload upload = fixture.openUpload(key, ATTEMPT);
    fixture.intent(1, runA, ATTEMPT, key); // A's task: intent, then its upload; the task committed
    AtomicBoolean aCommitted = aCommitsBatchOneAfterTheSettleListed(runA, upload);

    fixture.openSinkLog(); // a reader of the sink, in any process
    fixture.hook = RequestHook.NONE;
    assertThat(aCommitted).isTrue();

    // The reader finished the batch from the run's record, read once the entry named the run;
    // the run's own completion then confirms it.
    assertThat(store.object(BUCKET, key)).isPresent();
    StreamingRecords.complete(fixture.gateway(), fixture.destination(), 1, List.of(upload));
    assertThat(store.object(BUCKET, key)).isPresent();
  }

  /**
   * The same race, seen from StreamingRecords directly (what a batch's setupJob or
   * settleAfterCommit, or any reader, runs): a run found by its intents alone, whose entry names
   * it, has every intent-named upload aborted although nothing completed them.
   */
  @Test
  void aRunFoundByItsIntentsAloneIsFinishedFromItsRecordOnceTheEntryNamesIt() throws IOException {
    String runA = UUID.randomUUID().toString();
    String key = fixture.dataFile(0, runA);
    PendingUpload upload = fixture.openUpload(key, ATTEMPT);
    fixture.intent(1, runA, ATTEMPT, key);
    AtomicBoolean aCommitted = aCommitsBatchOneAfterTheSettleListed(runA, upload);

    // Any settler that is not run A: a reader in another process (settle("", true)) here.
    new StreamingRecords(fixture.gateway(), fixture.destination())
        .settle(UUID.randomUUID().toString(), true);
    fixture.hook = RequestHook.NONE;

    assertThat(aCommitted).isTrue();
    // The record, written before the entry, was read: the run's upload is completed.
    assertThat(store.object(BUCKET, key)).isPresent();
    assertThat(store.openUploads(BUCKET)).noneMatch(u -> u.uploadId().equals(upload.uploadId()));
  }

  /**
   * A batch whose entry lists no file (every task wrote nothing) names no run: a run that must ask
   * whose it is (a 412 whose writer could not be read) has nothing to lose to it.
   */
  @Test
  void anEmptyBatchsEntryIsNoOnesToLose() throws IOException {
    String runA = UUID.randomUUID().toString();
    fixture.put(sink + "_spark_metadata/1", SinkFixture.entry());
    assertThat(new StreamingRecords(fixture.gateway(), fixture.destination()).ownerOfEntry(1, runA))
        .isEqualTo(StreamingRecords.Owner.EMPTY);
  }
}
