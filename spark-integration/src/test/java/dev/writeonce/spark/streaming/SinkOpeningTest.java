package dev.writeonce.spark.streaming;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.json.ManifestFormats;
import dev.writeonce.core.model.PendingUpload;
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
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
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

  private static final String BUCKET = "bucket";

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
    // A sink of its own per test: the settle's cache is static, keyed by the sink.
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
          .append("\",\"size\":15,\"isDir\":false,\"modificationTime\":1,")
          .append("\"blockReplication\":1,\"blockSize\":1,\"action\":\"add\"}");
    }
    return text.toString();
  }

  /** A reader (or the query's start) opens the sink's log, and reads batch 0's entry. */
  private void openSinkLog() throws IOException {
    WriteonceCheckpointFileManager log =
        new WriteonceCheckpointFileManager(
            new Path("s3a://" + BUCKET + "/" + sink + "_spark_metadata"), conf);
    try (var in = log.open(new Path("s3a://" + BUCKET + "/" + sink + "_spark_metadata/0"))) {
      assertThat(new String(in.readAllBytes(), StandardCharsets.UTF_8)).contains(run0);
    }
  }

  /** A run that lost batch 0 left its record and an open upload: opening the sink aborts it. */
  private PendingUpload aLoserOfBatchZero() throws IOException {
    String loser = UUID.randomUUID().toString();
    PendingUpload upload = openUpload(sink + "part-00000-" + loser + ".c000.snappy.parquet");
    loserRecord = sink + "_writeonce/streaming/0-" + loser + ".json";
    put(loserRecord, record("0-" + loser, List.of(upload)));
    return upload;
  }

  private String loserRecord;

  private void assertSettled(PendingUpload loser) {
    assertThat(store.openUploads(BUCKET)).noneMatch(u -> u.uploadId().equals(loser.uploadId()));
    assertThat(store.keys(BUCKET)).doesNotContain(loserRecord);
  }

  private StoreGateway gateway() throws IOException {
    return S3StoreGateway.forFileSystem(new Path("s3a://" + BUCKET + "/").getFileSystem(conf));
  }

  /** An open upload of one part, as a task of the protocol leaves it. */
  private PendingUpload openUpload(String key) throws IOException {
    StoreGateway gateway = gateway();
    String uploadId = gateway.createUpload(key);
    UploadPart part =
        gateway.uploadPart(
            key, uploadId, 1, ByteBuffer.wrap("rows".getBytes(StandardCharsets.UTF_8)));
    return new PendingUpload(BUCKET, key, uploadId, List.of(part), "attempt_1");
  }

  private static String record(String batchAndRun, List<PendingUpload> uploads) {
    TaskManifest manifest = new TaskManifest("stream-" + batchAndRun, "batch-1", uploads, Map.of());
    return new String(ManifestFormats.toJson(manifest), StandardCharsets.UTF_8);
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
    put(
        sink + "_writeonce/streaming/0-" + loser + ".json",
        record("0-" + loser, List.of(elsewhere)));

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
    String key = sink + "part-00000-" + winner + ".c000.snappy.parquet";
    PendingUpload upload = openUpload(key);
    put(
        sink + "_writeonce/streaming/1-" + winner + ".json",
        record("1-" + winner, List.of(upload)));
    put(sink + "_spark_metadata/1", entry(key));
    gateway().abortUpload(key, upload.uploadId()); // the lifecycle rule

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
    String key = sink + "part-00000-" + winner + ".c000.snappy.parquet";
    PendingUpload upload = openUpload(key);
    put(
        sink + "_writeonce/streaming/1-" + winner + ".json",
        record("1-" + winner, List.of(upload)));
    put(sink + "_spark_metadata/1", entry(key));

    Set<String> writes =
        Set.of(
            "PutObject",
            "CompleteMultipartUpload",
            "AbortMultipartUpload",
            "DeleteObjects",
            "DeleteObject");
    hook =
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

    hook = RequestHook.NONE;
    openSinkLog();
    assertThat(store.object(BUCKET, key)).isPresent();
    assertThat(store.keys(BUCKET)).noneMatch(k -> k.contains("_writeonce/"));
  }
}
