package dev.writeonce.spark;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.magic.MagicS3AFileSystem;
import dev.writeonce.teststore.BucketView;
import dev.writeonce.teststore.S3Api;
import dev.writeonce.teststore.TestStore;
import dev.writeonce.teststore.Traffic;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.TaskContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Spark with executors in JVMs of their own ({@code local-cluster}: a master and two workers in the
 * test JVM, each worker starting an executor process), so commit messages cross processes and the
 * executors' filesystems are not the driver's.
 *
 * <p>Speculation cannot be shown here: Spark launches no speculative copy on a host that already
 * runs an attempt of the task, and these executors share one host.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AbstractSparkClusterIT {

  protected abstract TestStore store();

  @TempDir static Path scratch;

  private SparkSession spark;

  @BeforeAll
  void startCluster() throws Exception {
    Files.createDirectories(Path.of(System.getProperty("spark.test.home")));
    SparkSession.Builder builder =
        SparkSession.builder()
            .master("local-cluster[2,1,1024]")
            .appName("writeonce-cluster-it")
            .config("spark.ui.enabled", "false")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.executorEnv.SPARK_LOCAL_IP", "127.0.0.1")
            .config("spark.executor.memory", "1g")
            .config("spark.task.maxFailures", "2")
            .config(
                "spark.sql.sources.commitProtocolClass", WriteonceCommitProtocol.class.getName())
            .config("spark.hadoop.fs.s3a.impl", MagicS3AFileSystem.class.getName())
            .config(
                "spark.hadoop." + CommitterConfig.STAGING_DIR,
                scratch.resolve("staging").toString());
    for (Map.Entry<String, String> setting : store().configure(new Configuration(false))) {
      builder.config("spark.hadoop." + setting.getKey(), setting.getValue());
    }
    spark = builder.getOrCreate();
    spark
        .udf()
        .register(
            "failFirstAttemptOfPartition0",
            (UDF1<Long, Long>)
                id -> {
                  TaskContext task = TaskContext.get();
                  if (task.partitionId() == 0 && task.attemptNumber() == 0 && id > 200) {
                    throw new IllegalStateException("injected failure of an executor's attempt");
                  }
                  return id;
                },
            DataTypes.LongType);
  }

  @AfterAll
  void stopCluster() {
    if (spark != null) {
      spark.stop();
    }
  }

  /** Counts failed task attempts and the executors tasks ran on. */
  static final class AttemptListener extends SparkListener {
    final LongAdder failed = new LongAdder();
    final Set<String> executors = ConcurrentHashMap.newKeySet();

    @Override
    public void onTaskEnd(SparkListenerTaskEnd end) {
      if (end.taskInfo().failed()) {
        failed.increment();
      }
      executors.add(end.taskInfo().executorId());
    }
  }

  @Test
  void executorsInTheirOwnJvmsCommitThroughTheDriverAndARetriedAttemptWritesOnce()
      throws Exception {
    for (String committer : List.of("directory", "magic")) {
      String bucket = store().newBucket("cluster-" + committer);
      BucketView view = new BucketView(store(), bucket);
      spark.conf().set("writeonce.committer", committer);
      Dataset<Row> data =
          spark
              .range(0, 4000, 1, 8)
              .selectExpr("failFirstAttemptOfPartition0(id) AS id", "concat('row-', id) AS name");

      AttemptListener listener = new AttemptListener();
      spark.sparkContext().addSparkListener(listener);
      Traffic before = store().meter().read();
      try {
        data.write().parquet(view.uri("out/"));
        spark.sparkContext().listenerBus().waitUntilEmpty();
      } finally {
        spark.sparkContext().removeSparkListener(listener);
      }
      Traffic write = store().meter().read().minus(before);

      assertThat(listener.executors)
          .as("tasks ran in executor JVMs")
          .hasSize(2)
          .doesNotContain("driver");
      assertThat(listener.failed.sum()).as("failed first attempts").isEqualTo(1);
      List<String> files = view.keys("out/").stream().filter(k -> k.endsWith(".parquet")).toList();
      assertThat(files).as("%s: one file per partition", committer).hasSize(8);
      List<Row> back = spark.read().parquet(view.uri("out/")).collectAsList();
      assertThat(back).hasSize(4000);
      assertThat(back.stream().map(r -> r.getLong(0)).distinct().count()).isEqualTo(4000);
      assertThat(write.requests(S3Api.COPY_OBJECT)).isZero();
      assertThat(write.requests(S3Api.COMPLETE_MULTIPART_UPLOAD)).isEqualTo(8);
      assertThat(view.openUploads(files)).as("the failed attempt aborted its upload").isEmpty();
    }
  }
}
