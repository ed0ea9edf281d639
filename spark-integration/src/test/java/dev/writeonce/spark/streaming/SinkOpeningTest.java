package dev.writeonce.spark.streaming;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.testing.s3.Handling;
import dev.writeonce.core.testing.s3.RequestHook;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * Opening a file sink's log (the query's start, every Spark reader of the sink: the manager's
 * constructor on {@code <sink>/_spark_metadata}) settles what dead runs left, and never keeps a
 * reader out: a record it cannot settle is logged and left, the others are settled.
 *
 * <p>Each test holds a sink whose batch 0 is committed and complete, and one thing left under
 * {@code _writeonce/} about another batch.
 */
class SinkOpeningTest {

  private static final String BUCKET = SinkFixture.BUCKET;

  private final SinkFixture fixture = new SinkFixture();
  private final dev.writeonce.core.testing.s3.MemoryS3 store = fixture.store;
  private final String sink = fixture.sink;

  @AfterEach
  void stop() {
    fixture.close();
  }

  private void put(String key, String text) {
    fixture.put(key, text);
  }

  /** A reader (or the query's start) opens the sink's log, and reads batch 0's entry. */
  private void openSinkLog() throws IOException {
    WriteonceCheckpointFileManager log = fixture.openSinkLog();
    try (var in = log.open(new Path(fixture.sinkLog(), "0"))) {
      assertThat(new String(in.readAllBytes(), StandardCharsets.UTF_8)).contains(fixture.run0);
    }
  }

  /** A run that lost batch 0 left its record and an open upload: opening the sink aborts it. */
  private PendingUpload aLoserOfBatchZero() throws IOException {
    String loser = UUID.randomUUID().toString();
    PendingUpload upload = openUpload(fixture.dataFile(0, loser));
    loserRecord = fixture.record(0, loser, List.of(upload));
    return upload;
  }

  private String loserRecord;

  private void assertSettled(PendingUpload loser) {
    assertThat(store.openUploads(BUCKET)).noneMatch(u -> u.uploadId().equals(loser.uploadId()));
    assertThat(store.keys(BUCKET)).doesNotContain(loserRecord);
  }

  private PendingUpload openUpload(String key) throws IOException {
    return fixture.openUpload(key, "attempt_1");
  }

  @Test
  void aMalformedRecordIsLeftAndTheSinkOpensAndTheOtherRecordsAreSettled() throws IOException {
    // A run that lost batch 0 left a record that cannot be read (a truncated or foreign object).
    String malformed = sink + "_writeonce/streaming/0-" + UUID.randomUUID() + ".json";
    put(malformed, "{\"format\":");
    PendingUpload loser = aLoserOfBatchZero();

    openSinkLog();
    openSinkLog();

    assertThat(store.keys(BUCKET)).contains(malformed);
    assertSettled(loser);
  }

  @Test
  void aMalformedIntentIsLeftAndTheSinkOpens() throws IOException {
    // A task attempt of a run that lost batch 0 left an intent that cannot be read.
    String intent =
        sink + "_writeonce/jobs/stream-0-" + UUID.randomUUID() + "/intents/attempt_1.json";
    put(intent, "not json");
    PendingUpload loser = aLoserOfBatchZero();

    openSinkLog();

    assertThat(store.keys(BUCKET)).contains(intent);
    assertSettled(loser);
  }

  @Test
  void aRecordNamingAnUploadOutsideTheSinkIsLeftAndTouchesNothingThere() throws IOException {
    PendingUpload elsewhere = openUpload("elsewhere/part-00000.parquet");
    String loser = UUID.randomUUID().toString();
    fixture.record(0, loser, List.of(elsewhere));

    openSinkLog();

    // Nothing outside the sink is touched, and the record stays for an operator to look at.
    assertThat(store.openUploads(BUCKET)).anyMatch(u -> u.uploadId().equals(elsewhere.uploadId()));
    assertThat(store.keys(BUCKET)).contains(sink + "_writeonce/streaming/0-" + loser + ".json");
  }

  /**
   * A run won batch 1 and died before its completions; its uploads were then aborted by a bucket
   * lifecycle rule (AbortIncompleteMultipartUpload) before anyone opened the sink. Batch 1's rows
   * are lost, and its record says so to whoever looks; batch 0 is still read.
   */
  @Test
  void aWonBatchWhoseUploadsALifecycleRuleAbortedKeepsItsRecordAndTheSinkOpens()
      throws IOException {
    String winner = UUID.randomUUID().toString();
    String key = fixture.dataFile(0, winner);
    PendingUpload upload = openUpload(key);
    fixture.record(1, winner, List.of(upload));
    put(sink + "_spark_metadata/1", SinkFixture.entry(key));
    fixture.gateway().abortUpload(key, upload.uploadId()); // the lifecycle rule

    for (int open = 0; open < 3; open++) {
      openSinkLog();
    }
    assertThat(store.keys(BUCKET)).contains(sink + "_writeonce/streaming/1-" + winner + ".json");
  }

  /**
   * A reader with read-only credentials (a consumer of the sink) opens it while a run that won
   * batch 1 and died has left its record: it cannot finish the batch, and reads all the same; a
   * reader that may write finishes it.
   */
  @Test
  void aReaderWithReadOnlyCredentialsOpensTheSinkAndAWriterFinishesTheBatchLater()
      throws IOException {
    String winner = UUID.randomUUID().toString();
    String key = fixture.dataFile(0, winner);
    PendingUpload upload = openUpload(key);
    fixture.record(1, winner, List.of(upload));
    put(sink + "_spark_metadata/1", SinkFixture.entry(key));

    Set<String> writes =
        Set.of(
            "PutObject",
            "CompleteMultipartUpload",
            "AbortMultipartUpload",
            "DeleteObjects",
            "DeleteObject");
    fixture.hook =
        request -> {
          if (writes.contains(request.operation())) {
            throw (S3Exception)
                S3Exception.builder()
                    .statusCode(403)
                    .awsErrorDetails(
                        AwsErrorDetails.builder()
                            .errorCode("AccessDenied")
                            .serviceName("S3")
                            .build())
                    .message("Access Denied")
                    .build();
          }
          return Handling.PROCEED;
        };

    openSinkLog();
    assertThat(store.object(BUCKET, key)).isEmpty();

    fixture.hook = RequestHook.NONE;
    openSinkLog();
    assertThat(store.object(BUCKET, key)).isPresent();
    assertThat(store.keys(BUCKET)).noneMatch(k -> k.contains("_writeonce/"));
  }

  /**
   * Found by review: a task attempt of the run that won batch 1 reaches the store after the batch
   * finished (an executor taken for lost that went on): its intent, then its upload of the same
   * key. Every opening left them, and the sink was never settled again. The next opening aborts the
   * upload and removes the intent; the batch's file stays.
   */
  @Test
  void anAttemptThatLandsAfterItsBatchFinishedIsSettledByTheNextOpening() throws IOException {
    String winner = UUID.randomUUID().toString();
    String key = fixture.dataFile(0, winner);
    PendingUpload committed = openUpload(key);
    fixture.intent(1, winner, "attempt_1", key);
    String record = fixture.record(1, winner, List.of(committed));
    put(sink + "_spark_metadata/1", SinkFixture.entry(key));
    StreamingRecords.complete(fixture.gateway(), fixture.destination(), 1, List.of(committed));
    StreamingRecords.removeAfterCommit(
        fixture.gateway(),
        fixture.destination(),
        record,
        WriteonceStreamingCommitProtocol.recordsJobId(1, winner),
        winner,
        Set.of("attempt_1"),
        List.of(committed));
    fixture.intent(1, winner, "attempt_0", key);
    PendingUpload late = fixture.openUpload(key, "attempt_0");

    openSinkLog();

    assertThat(store.openUploads(BUCKET)).noneMatch(u -> u.uploadId().equals(late.uploadId()));
    assertThat(store.keys(BUCKET)).noneMatch(k -> k.contains("_writeonce/"));
    assertThat(store.getObject(BUCKET, key)).isPresent();
    assertThat(StreamingRecords.isSettled(fixture.destination())).isTrue();
  }

  /**
   * A batch is run R's in the log, R's record is gone, and the file the entry lists is not there
   * (its record removed before the completions, or the file deleted since); R's intent names it.
   */
  private String aListedFileWithoutItsObject(int batch, boolean open) throws IOException {
    String run = UUID.randomUUID().toString();
    String key = sink + "at=12%3A00/part-00000-" + run + ".c000.snappy.parquet";
    PendingUpload upload = openUpload(key);
    fixture.intent(batch, run, "attempt_1", key);
    put(
        sink + "_spark_metadata/" + batch,
        SinkFixture.entry(key)
            .replace(
                "s3a://" + BUCKET + "/" + key,
                StreamingRecords.listedPath(fixture.destination(), key)));
    if (!open) {
      fixture.gateway().abortUpload(key, upload.uploadId()); // a lifecycle rule
    }
    return run;
  }

  /**
   * Found by review: an open upload of a listed file that is not there is left, with the run's
   * intents: it may be the batch's own, if someone removed the record before the completions.
   */
  @Test
  void anOpenUploadOfAListedFileThatIsNotThereIsLeftWithItsRunsIntents() throws IOException {
    String run = aListedFileWithoutItsObject(1, true);

    openSinkLog();

    assertThat(store.openUploads(BUCKET)).anyMatch(u -> u.key().contains(run));
    assertThat(store.keys(BUCKET)).anyMatch(k -> k.contains(run + "/intents/"));
    assertThat(StreamingRecords.isSettled(fixture.destination())).isFalse();
  }

  /**
   * Found by review: with nothing of it open (a user deleted old output, a lifecycle rule aborted
   * the upload) there is nothing to keep, and the run's intents no longer hold the sink unsettled
   * for ever.
   */
  @Test
  void aListedFileThatIsNotThereWithNothingOpenLetsTheSinkSettle() throws IOException {
    aListedFileWithoutItsObject(1, false);

    openSinkLog();

    assertThat(store.keys(BUCKET)).noneMatch(k -> k.contains("_writeonce/"));
    assertThat(StreamingRecords.isSettled(fixture.destination())).isTrue();
  }

  /**
   * Found by review: the entry lists B (partition value "12:00", directory "at=12%3A00") and a late
   * attempt names A (partition value "12%3A00", directory "at=12%253A00"), whose key as it is reads
   * like B's listed path. Only the listed path counts: A is not listed, and its upload is aborted.
   */
  @Test
  void aKeyIsListedOnlyByItsEncodedPath() throws IOException {
    String run = UUID.randomUUID().toString();
    String listed = sink + "at=12%3A00/part-00000-" + run + ".c000.snappy.parquet";
    String late = sink + "at=12%253A00/part-00000-" + run + ".c000.snappy.parquet";
    put(listed, "rows");
    put(
        sink + "_spark_metadata/1",
        SinkFixture.entry(listed)
            .replace(
                "s3a://" + BUCKET + "/" + listed,
                StreamingRecords.listedPath(fixture.destination(), listed)));
    fixture.intent(1, run, "attempt_0", late);
    PendingUpload upload = openUpload(late);

    openSinkLog();

    assertThat(store.openUploads(BUCKET)).noneMatch(u -> u.uploadId().equals(upload.uploadId()));
    assertThat(store.keys(BUCKET)).noneMatch(k -> k.contains("_writeonce/"));
  }
}
