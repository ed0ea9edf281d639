package dev.writeonce.spark;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.shim.RenameShimFileSystem;
import dev.writeonce.shim.ShimConfig;
import dev.writeonce.teststore.BucketView;
import dev.writeonce.teststore.EachStore;
import dev.writeonce.teststore.S3Api;
import dev.writeonce.teststore.StoreLifecycle;
import dev.writeonce.teststore.TestStore;
import dev.writeonce.teststore.Traffic;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Spark's own commit protocol (no commitProtocolClass: HadoopMapReduceCommitProtocol over
 * FileOutputCommitter v1) through the rename shim, against the same writes on plain S3A in the same
 * session: the shim is switched per bucket with {@link ShimConfig#ENABLED}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@EachStore
class SparkShimIT implements StoreLifecycle {

  private static final Logger LOG = LoggerFactory.getLogger(SparkShimIT.class);

  /** The store of the current run, set by {@link #startOn}. */
  private TestStore store;

  private TestStore store() {
    return store;
  }

  private SparkSession spark;

  @Override
  public void startOn(TestStore store) throws Exception {
    this.store = store;
    SparkSession.Builder builder =
        SparkSessions.plainBuilder("local[2,2]", store())
            .config("spark.hadoop.fs.s3a.impl", RenameShimFileSystem.class.getName())
            .config("spark.sql.shuffle.partitions", "4");
    // FileOutputCommitter writes empty objects (_SUCCESS, markers) with or without the shim.
    store()
        .emptyObjectSettings()
        .forEach((key, value) -> builder.config("spark.hadoop." + key, value));
    spark = builder.getOrCreate();
  }

  @Override
  public void stopOn(TestStore store) throws Exception {
    if (spark != null) {
      spark.stop();
    }
  }

  /** Rows whose hashes do not compress: a few MiB of Parquet in four files. */
  private Dataset<Row> rows(long count, int partitions) {
    return spark
        .range(count)
        .selectExpr(
            "id",
            "sha2(CAST(id AS STRING), 256) AS h1",
            "sha2(CAST(id * 7 AS STRING), 512) AS h2",
            "CAST(id % 5 AS INT) AS day")
        .repartition(partitions);
  }

  /** One write, on a new bucket, with or without the shim. */
  record Write(BucketView view, Map<String, Long> files, Traffic traffic) {
    long dataBytes() {
      return files.values().stream().mapToLong(Long::longValue).sum();
    }
  }

  private interface Writer {
    void write(String uri);
  }

  private Write write(String hint, boolean shim, Writer writer) throws Exception {
    String bucket = store().newBucket("spark-shim-" + hint);
    BucketView view = new BucketView(store(), bucket);
    spark.conf().set(ShimConfig.ENABLED, Boolean.toString(shim));
    Traffic before = store().meter().read();
    writer.write(view.uri("out/"));
    Traffic traffic = store().meter().read().minus(before);
    LOG.info("{} {}: {}", hint, shim ? "through the shim" : "on plain S3A", traffic);
    return new Write(view, dataFiles(view), traffic);
  }

  private static Map<String, Long> dataFiles(BucketView view) {
    Map<String, Long> files = new TreeMap<>();
    for (String key : view.keys("out/")) {
      if (!key.endsWith("_SUCCESS") && !key.endsWith("/")) {
        files.put(key, view.size(key));
      }
    }
    return files;
  }

  private void assertWrittenOnce(Write write) {
    Traffic t = write.traffic();
    assertThat(t.requests(S3Api.COPY_OBJECT)).as("COPY").isZero();
    assertThat(t.requests(S3Api.DELETE_OBJECT)).as("DeleteObject").isZero();
    assertThat(t.requests(S3Api.COMPLETE_MULTIPART_UPLOAD)).isEqualTo(write.files().size());
    assertThat(t.bytesReceived())
        .as("bytes the store received against %d bytes of output", write.dataBytes())
        .isBetween(write.dataBytes(), (long) (write.dataBytes() * 1.02));
    assertThat(write.view().keys(""))
        .as("nothing left of Spark's staging or FileOutputCommitter's attempts")
        .noneMatch(key -> key.contains("_temporary") || key.contains(".spark-staging"));
    assertThat(write.view().openUploads(write.files().keySet())).isEmpty();
  }

  private void assertSameRows(Write plain, Write shim) {
    Dataset<Row> expected = spark.read().parquet(plain.view().uri("out/"));
    Dataset<Row> actual = spark.read().parquet(shim.view().uri("out/"));
    assertThat(actual.count()).isEqualTo(expected.count());
    assertThat(actual.exceptAll(expected).count()).isZero();
    assertThat(expected.exceptAll(actual).count()).isZero();
    assertThat(shim.files()).hasSameSizeAs(plain.files());
  }

  @Test
  void parquetThroughSparksDefaultProtocolMatchesPlainS3aWithoutCopyingData() throws Exception {
    Dataset<Row> data = rows(150_000, 4);
    Write plain = write("plain", false, uri -> data.write().parquet(uri));
    Write shim = write("shim", true, uri -> data.write().parquet(uri));

    assertThat(plain.traffic().requests(S3Api.COPY_OBJECT))
        .as("plain S3A: FileOutputCommitter v1 copies every file twice")
        .isEqualTo(2L * plain.files().size());
    assertSameRows(plain, shim);
    assertThat(shim.files()).hasSize(4);
    assertWrittenOnce(shim);
  }

  @Test
  void partitionedParquetThroughSparksDefaultProtocolMatchesPlainS3a() throws Exception {
    Dataset<Row> data = rows(150_000, 3);
    Write plain = write("plain-part", false, uri -> data.write().partitionBy("day").parquet(uri));
    Write shim = write("shim-part", true, uri -> data.write().partitionBy("day").parquet(uri));

    assertSameRows(plain, shim);
    assertThat(shim.files().keySet()).anyMatch(key -> key.startsWith("out/day=4/"));
    assertThat(shim.files()).hasSize(15);
    assertWrittenOnce(shim);
  }

  @Test
  void dynamicPartitionOverwriteThroughTheShimReplacesOnlyThePartitionsWritten() throws Exception {
    String bucket = store().newBucket("spark-shim-dynamic");
    BucketView view = new BucketView(store(), bucket);
    spark.conf().set(ShimConfig.ENABLED, "true");
    rows(100_000, 2).write().partitionBy("day").parquet(view.uri("out/"));
    Map<String, String> before = view.etags("out/");
    List<String> replaced =
        before.keySet().stream().filter(k -> k.matches("out/day=[12]/.*")).toList();

    spark.conf().set("spark.sql.sources.partitionOverwriteMode", "dynamic");
    Dataset<Row> update =
        spark
            .range(60_000)
            .selectExpr(
                "id + 1000000 AS id",
                "sha2(CAST(id AS STRING), 256) AS h1",
                "concat('new-', id) AS h2",
                "CAST(1 + id % 2 AS INT) AS day")
            .repartition(2);
    Traffic start = store().meter().read();
    try {
      update.write().mode("overwrite").partitionBy("day").parquet(view.uri("out/"));
    } finally {
      spark.conf().set("spark.sql.sources.partitionOverwriteMode", "static");
    }
    Traffic overwrite = store().meter().read().minus(start);
    LOG.info("dynamic overwrite through the shim: {}", overwrite);

    Map<String, String> after = view.etags("out/");
    Map<String, String> untouchedBefore = new TreeMap<>(before);
    untouchedBefore.keySet().removeIf(k -> k.matches("out/day=[12]/.*") || k.endsWith("_SUCCESS"));
    Map<String, String> untouchedAfter = new TreeMap<>(after);
    untouchedAfter.keySet().removeIf(k -> k.matches("out/day=[12]/.*") || k.endsWith("_SUCCESS"));
    assertThat(untouchedAfter).as("days 0, 3 and 4 untouched").isEqualTo(untouchedBefore);
    assertThat(after.keySet()).doesNotContainAnyElementsOf(replaced);

    Dataset<Row> back = spark.read().parquet(view.uri("out/"));
    assertThat(back.where("day IN (1, 2)").where("h2 NOT LIKE 'new-%'").count()).isZero();
    assertThat(back.where("day IN (1, 2)").count()).isEqualTo(60_000);
    assertThat(back.where("day NOT IN (1, 2)").count()).isEqualTo(60_000);

    Write write = new Write(view, filesOf(view, "out/day=[12]/.*"), overwrite);
    assertThat(overwrite.requests(S3Api.COPY_OBJECT)).isZero();
    assertThat(overwrite.requests(S3Api.CREATE_MULTIPART_UPLOAD))
        .as("an upload per file, none for the _SUCCESS inside Spark's staging directory")
        .isEqualTo(write.files().size());
    assertThat(overwrite.requests(S3Api.COMPLETE_MULTIPART_UPLOAD)).isEqualTo(write.files().size());
    assertThat(overwrite.requests(S3Api.ABORT_MULTIPART_UPLOAD)).isZero();
    assertThat(overwrite.bytesReceived())
        .isBetween(write.dataBytes(), (long) (write.dataBytes() * 1.02));
    // The replaced partitions' old files are the only data deleted, in bulk, never one by one.
    assertThat(overwrite.requests(S3Api.DELETE_OBJECT)).isZero();
    assertThat(view.keys(""))
        .noneMatch(key -> key.contains("_temporary") || key.contains(".spark-staging"));
    assertThat(view.openUploads(write.files().keySet())).isEmpty();
  }

  private static Map<String, Long> filesOf(BucketView view, String pattern) {
    Map<String, Long> files = new TreeMap<>(dataFiles(view));
    files.keySet().removeIf(key -> !key.matches(pattern));
    return files;
  }
}
