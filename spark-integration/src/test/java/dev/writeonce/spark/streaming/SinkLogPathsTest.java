package dev.writeonce.spark.streaming;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.testing.s3.Handling;
import dev.writeonce.core.testing.s3.MemoryS3;
import dev.writeonce.core.testing.s3.MemoryS3ClientFactory;
import dev.writeonce.core.testing.s3.MemoryS3Settings;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.apache.spark.internal.io.FileCommitProtocol.TaskCommitMessage;
import org.apache.spark.internal.io.FileNameSpec;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.execution.streaming.sinks.FileStreamSinkLog;
import org.apache.spark.sql.execution.streaming.sinks.SinkFileStatus;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import scala.Option;

/**
 * The sink log lists each file as Spark's own sink does, by its Hadoop path URL-encoded, which
 * Spark's readers decode ({@code SinkFileStatus.toFileStatus}): a partition directory holding a
 * character Spark escapes ("%3A" for ':', as in every timestamp partition) or a space is read at
 * the object's key. Found by review: the log listed the key as it was, so the first was read at a
 * key that does not exist and the second made the whole log unreadable.
 */
class SinkLogPathsTest {

  private static final String BUCKET = "bucket";
  private static SparkSession spark;
  private static MemoryS3 store;
  private static String endpoint;

  @org.junit.jupiter.api.io.TempDir static java.nio.file.Path staging;

  @BeforeAll
  static void start() {
    store = new MemoryS3();
    store.createBucket(BUCKET);
    endpoint = MemoryS3ClientFactory.register(store, request -> Handling.PROCEED);
    spark = SinkFixture.sparkSession("sink-log-paths", staging).getOrCreate();
    Configuration settings = new Configuration(false);
    MemoryS3Settings.apply(settings, endpoint);
    settings.setInt("writeonce.commit.threads", 1);
    for (Map.Entry<String, String> setting : settings) {
      spark.conf().set(setting.getKey(), setting.getValue());
    }
  }

  @AfterAll
  static void stop() {
    if (spark != null) {
      spark.stop();
    }
    MemoryS3ClientFactory.unregister(endpoint);
  }

  /** One batch of one task writing one file into the partition directory Spark gives. */
  private static FileStreamSinkLog commitOneBatch(String sink, String partitionDir)
      throws Exception {
    FileStreamSinkLog log =
        new FileStreamSinkLog(
            FileStreamSinkLog.VERSION(), spark, sink + "_spark_metadata", Option.empty());
    Job job = Job.getInstance(spark.sessionState().newHadoopConf());
    WriteonceStreamingCommitProtocol protocol = new WriteonceStreamingCommitProtocol("0", sink);
    protocol.setupManifestOptions(log, 0);
    protocol.setupJob(job);
    TaskAttemptContext context =
        new TaskAttemptContextImpl(
            new Configuration(job.getConfiguration()),
            new TaskAttemptID("paths", 0, TaskType.MAP, 0, 0));
    protocol.setupTask(context);
    String file =
        protocol.newTaskTempFile(
            context, Option.apply(partitionDir), new FileNameSpec("", ".c000.txt"));
    Path path = new Path(file);
    try (OutputStream out = path.getFileSystem(context.getConfiguration()).create(path, true)) {
      out.write("rows".getBytes(StandardCharsets.UTF_8));
    }
    TaskCommitMessage message = protocol.commitTask(context);
    protocol.onTaskCommit(message);
    List<TaskCommitMessage> messages = new ArrayList<>(List.of(message));
    protocol.commitJob(job, scala.jdk.javaapi.CollectionConverters.asScala(messages).toList());
    return log;
  }

  private static String dataKey(String sinkPrefix) {
    TreeSet<String> keys = new TreeSet<>();
    store
        .objects(BUCKET, sinkPrefix)
        .keySet()
        .forEach(
            key -> {
              String name = key.substring(sinkPrefix.length());
              if (!name.startsWith("_spark_metadata/") && !name.startsWith("_writeonce/")) {
                keys.add(key);
              }
            });
    assertThat(keys).hasSize(1);
    return keys.first();
  }

  /** One batch written into the partition directory is read by Spark's reader at its key. */
  private static void assertReadAtItsKey(String partition) throws Exception {
    String prefix = "sinks/" + UUID.randomUUID() + "/";
    FileStreamSinkLog log = commitOneBatch("s3a://" + BUCKET + "/" + prefix, partition);

    String key = dataKey(prefix);
    assertThat(key).contains("/" + partition + "/");
    SinkFileStatus[] listed = log.allFiles();
    assertThat(listed).hasSize(1);
    Path read = listed[0].toFileStatus().getPath(); // what every Spark reader of the sink opens
    assertThat(read.toUri().getPath()).isEqualTo("/" + key);
    FileSystem fs = read.getFileSystem(spark.sessionState().newHadoopConf());
    assertThat(fs.exists(read)).isTrue();
  }

  @Test
  void aPartitionWithAnEscapedColonIsListedWhereItsReadersFindIt() throws Exception {
    assertReadAtItsKey("p=12%3A00");
  }

  @Test
  void aPartitionWithASpaceLeavesTheLogReadable() throws Exception {
    assertReadAtItsKey("city=New York");
  }
}
