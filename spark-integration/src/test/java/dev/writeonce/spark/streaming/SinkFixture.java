package dev.writeonce.spark.streaming;

import dev.writeonce.core.json.ManifestFormats;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.TaskIntent;
import dev.writeonce.core.model.TaskManifest;
import dev.writeonce.core.model.UploadPart;
import dev.writeonce.core.store.S3StoreGateway;
import dev.writeonce.core.store.StoreGateway;
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
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;

/**
 * A file sink on the in-memory S3 behind S3A, as the sink's unit tests set it up: batch 0 committed
 * and complete by {@link #run0}, and the objects a run of a batch leaves (its uploads, its record,
 * its tasks' intents, its log entry) written by hand. Each fixture has a sink of its own: the
 * counts of the sink's settles are kept per sink for the JVM.
 */
final class SinkFixture implements AutoCloseable {

  static final String BUCKET = "bucket";

  final MemoryS3 store = new MemoryS3();

  /** What the store does to each request; none by default. */
  volatile RequestHook hook = RequestHook.NONE;

  final String endpoint;
  final Configuration conf;

  /** The sink's prefix in the bucket, ending with a slash. */
  final String sink = "sinks/" + UUID.randomUUID() + "/";

  /** The run that committed batch 0. */
  final String run0 = UUID.randomUUID().toString();

  SinkFixture() {
    endpoint = MemoryS3ClientFactory.register(store, request -> hook.before(request));
    conf = MemoryS3Settings.s3aConfiguration(endpoint);
    store.createBucket(BUCKET);
    String file = dataFile(0, run0);
    put(file, "rows");
    put(sink + "_spark_metadata/0", entry(file));
  }

  @Override
  public void close() {
    MemoryS3ClientFactory.unregister(endpoint);
  }

  void put(String key, String text) {
    store.putObject(BUCKET, key, text.getBytes(StandardCharsets.UTF_8));
  }

  /** The key of a run's data file, as the protocol names it. */
  String dataFile(int split, String run) {
    return sink
        + String.format(java.util.Locale.ROOT, "part-%05d-%s.c000.snappy.parquet", split, run);
  }

  /** A sink log entry listing the keys, as Spark's FileStreamSinkLog writes it. */
  static String entry(String... keys) {
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

  Destination destination() {
    return Destination.of(URI.create("s3a://" + BUCKET + "/" + sink));
  }

  Path sinkLog() {
    return new Path("s3a://" + BUCKET + "/" + sink + "_spark_metadata");
  }

  /** A reader (or the query's start) opens the sink's log, which settles the sink. */
  WriteonceCheckpointFileManager openSinkLog() throws IOException {
    return new WriteonceCheckpointFileManager(sinkLog(), conf);
  }

  StoreGateway gateway() throws IOException {
    return S3StoreGateway.forFileSystem(new Path("s3a://" + BUCKET + "/").getFileSystem(conf));
  }

  /** An open upload of one part, as a task of the protocol leaves it. */
  PendingUpload openUpload(String key, String attempt) throws IOException {
    StoreGateway gateway = gateway();
    String uploadId = gateway.createUpload(key);
    UploadPart part =
        gateway.uploadPart(
            key, uploadId, 1, ByteBuffer.wrap("rows".getBytes(StandardCharsets.UTF_8)));
    return new PendingUpload(BUCKET, key, uploadId, List.of(part), attempt);
  }

  /** The key of a run's record of a batch. */
  String recordKey(long batch, String run) {
    return sink + WriteonceStreamingCommitProtocol.RECORDS + batch + "-" + run + ".json";
  }

  /** Writes a run's record of a batch, naming its uploads; returns its key. */
  String record(long batch, String run, List<PendingUpload> uploads) {
    String key = recordKey(batch, run);
    TaskManifest manifest =
        new TaskManifest(
            WriteonceStreamingCommitProtocol.recordsJobId(batch, run),
            "batch-" + batch,
            uploads,
            Map.of());
    put(key, new String(ManifestFormats.toJson(manifest), StandardCharsets.UTF_8));
    return key;
  }

  /** Writes a task attempt's intent for a run of a batch, as the directory committer does. */
  void intent(long batch, String run, String attempt, String... keys) {
    String jobId = WriteonceStreamingCommitProtocol.recordsJobId(batch, run);
    byte[] json = ManifestFormats.toJson(new TaskIntent(jobId, attempt, List.of(keys)));
    store.putObject(
        BUCKET, sink + "_writeonce/jobs/" + jobId + "/intents/" + attempt + ".json", json);
  }

  /**
   * A local Spark session for tests that drive the sink's log and protocol themselves, as Spark's
   * file sink does, outside any stage of Spark's: the checkpoint file manager set, tasks staged
   * under {@code staging}.
   */
  static org.apache.spark.sql.classic.SparkSession.Builder sparkSession(
      String name, java.nio.file.Path staging) {
    return org.apache.spark.sql.classic.SparkSession.builder()
        .master("local[1]")
        .appName(name)
        .config("spark.ui.enabled", "false")
        .config("spark.hadoop.outputCommitCoordination.enabled", "false")
        .config(
            WriteonceCheckpointFileManager.SETTING, WriteonceCheckpointFileManager.class.getName())
        .config(dev.writeonce.core.config.CommitterConfig.STAGING_DIR, staging.toString());
  }
}
