package dev.writeonce.spark.streaming;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.json.ManifestFormats;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.TaskIntent;
import dev.writeonce.core.model.TaskManifest;
import dev.writeonce.core.model.UploadPart;
import dev.writeonce.core.store.S3StoreGateway;
import dev.writeonce.core.store.StoreGateway;
import dev.writeonce.core.testing.s3.Handling;
import dev.writeonce.core.testing.s3.MemoryS3;
import dev.writeonce.core.testing.s3.MemoryS3ClientFactory;
import dev.writeonce.core.testing.s3.MemoryS3Settings;
import dev.writeonce.core.testing.s3.RequestHook;
import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A settle of the sink (a reader opening it, a batch's setup) racing a run that commits: it finds
 * the run by its intents before the run's record and log entry exist, and must leave the run's
 * uploads to it. Faults found by review, kept as the schedules that found them.
 */
class SinkSettleRaceTest {

  private static final String BUCKET = "bucket";
  private static final String ATTEMPT = "attempt_202611291520_0001_m_000000_0";

  private final MemoryS3 store = new MemoryS3();
  private volatile RequestHook hook = RequestHook.NONE;
  private String endpoint;
  private Configuration conf;
  private String sink;
  private String run0;

  @BeforeEach
  void start() throws IOException {
    endpoint = MemoryS3ClientFactory.register(store, request -> hook.before(request));
    conf = MemoryS3Settings.s3aConfiguration(endpoint);
    store.createBucket(BUCKET);
    sink = "sinks/" + UUID.randomUUID() + "/";
    run0 = UUID.randomUUID().toString();
    String file = sink + "part-00000-" + run0 + ".c000.snappy.parquet";
    store.putObject(BUCKET, file, "rows of batch 0".getBytes(StandardCharsets.UTF_8));
    put(sink + "_spark_metadata/0", entry(file));
  }

  @AfterEach
  void stop() {
    MemoryS3ClientFactory.unregister(endpoint);
  }

  private void put(String key, String text) {
    store.putObject(BUCKET, key, text.getBytes(StandardCharsets.UTF_8));
  }

  private static String entry(String... keys) {
    StringBuilder text = new StringBuilder("v1");
    for (String key : keys) {
      text.append("\n{\"path\":\"s3a://")
          .append(BUCKET)
          .append('/')
          .append(key)
          .append("\",\"size\":4,\"isDir\":false,\"modificationTime\":1,")
          .append("\"blockReplication\":1,\"blockSize\":1,\"action\":\"add\"}");
    }
    return text.toString();
  }

  private Destination destination() {
    return Destination.of(URI.create("s3a://" + BUCKET + "/" + sink));
  }

  /** A reader (or the query's start) opens the sink's log. */
  private void openSinkLog() throws IOException {
    new WriteonceCheckpointFileManager(
        new Path("s3a://" + BUCKET + "/" + sink + "_spark_metadata"), conf);
  }

  private StoreGateway gateway() throws IOException {
    return S3StoreGateway.forFileSystem(new Path("s3a://" + BUCKET + "/").getFileSystem(conf));
  }

  private PendingUpload openUpload(String key, String attempt) throws IOException {
    StoreGateway gateway = gateway();
    String uploadId = gateway.createUpload(key);
    UploadPart part =
        gateway.uploadPart(
            key, uploadId, 1, ByteBuffer.wrap("rows".getBytes(StandardCharsets.UTF_8)));
    return new PendingUpload(BUCKET, key, uploadId, List.of(part), attempt);
  }

  private static String record(String jobId, List<PendingUpload> uploads) {
    TaskManifest manifest = new TaskManifest(jobId, "batch-1", uploads, Map.of());
    return new String(ManifestFormats.toJson(manifest), StandardCharsets.UTF_8);
  }

  private void intent(String jobId, String attempt, String... keys) {
    byte[] json = ManifestFormats.toJson(new TaskIntent(jobId, attempt, List.of(keys)));
    store.putObject(
        BUCKET, sink + "_writeonce/jobs/" + jobId + "/intents/" + attempt + ".json", json);
  }

  /**
   * DATA LOSS. A live run A is committing batch 1 while a reader opens the sink's log. The reader
   * lists {@code _writeonce/} after A's task wrote its intent and before A's driver wrote its
   * record; A then writes the record and the log entry; the reader then reads the entry, which
   * names A. settleRun takes the run as committed with no record (no committed uploads, no
   * committed attempts) and removeAfterCommit aborts every upload the intents name, which are
   * exactly the uploads the entry lists. A's completion then fails: the log lists a file that can
   * never exist.
   */
  @Test
  void aReaderRacingACommittingRunLeavesTheUploadsTheEntryLists() throws IOException {
    String runA = UUID.randomUUID().toString();
    String jobA = WriteonceStreamingCommitProtocol.recordsJobId(1, runA);
    String key = sink + "part-00000-" + runA + ".c000.snappy.parquet";
    PendingUpload upload = openUpload(key, ATTEMPT);
    intent(jobA, ATTEMPT, key); // A's task: intent, then its upload; the task committed

    AtomicBoolean listed = new AtomicBoolean();
    AtomicBoolean aCommitted = new AtomicBoolean();
    hook =
        request -> {
          if (request.operation().startsWith("ListObjects")
              && request.key() != null
              && request.key().contains("_writeonce/")) {
            listed.set(true);
          } else if (listed.get()
              && request.key() != null
              && request.key().equals(sink + "_spark_metadata/1")
              && aCommitted.compareAndSet(false, true)) {
            // A's driver, meanwhile: its record, then its log entry (the commit point).
            put(sink + "_writeonce/streaming/1-" + runA + ".json", record(jobA, List.of(upload)));
            put(sink + "_spark_metadata/1", entry(key));
          }
          return Handling.PROCEED;
        };

    openSinkLog(); // a reader of the sink, in any process
    hook = RequestHook.NONE;
    assertThat(aCommitted).isTrue();

    // The reader finished the batch from the run's record, read once the entry named the run;
    // the run's own completion then confirms it.
    assertThat(store.object(BUCKET, key)).isPresent();
    StreamingRecords.complete(gateway(), destination(), 1, List.of(upload));
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
    String jobA = WriteonceStreamingCommitProtocol.recordsJobId(1, runA);
    String key = sink + "part-00000-" + runA + ".c000.snappy.parquet";
    PendingUpload upload = openUpload(key, ATTEMPT);
    intent(jobA, ATTEMPT, key);
    AtomicBoolean listed = new AtomicBoolean();
    AtomicBoolean aCommitted = new AtomicBoolean();
    hook =
        request -> {
          if (request.operation().startsWith("ListObjects")
              && request.key() != null
              && request.key().contains("_writeonce/")) {
            listed.set(true);
          } else if (listed.get()
              && sink.concat("_spark_metadata/1").equals(request.key())
              && aCommitted.compareAndSet(false, true)) {
            put(sink + "_writeonce/streaming/1-" + runA + ".json", record(jobA, List.of(upload)));
            put(sink + "_spark_metadata/1", entry(key));
          }
          return Handling.PROCEED;
        };

    // Any settler that is not run A: a reader in another process (settle("", true)) here.
    new StreamingRecords(gateway(), destination()).settle(UUID.randomUUID().toString(), true);
    hook = RequestHook.NONE;

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
    put(sink + "_spark_metadata/1", entry());
    assertThat(new StreamingRecords(gateway(), destination()).ownerOfEntry(1, runA))
        .isEqualTo(StreamingRecords.Owner.EMPTY);
  }
}
