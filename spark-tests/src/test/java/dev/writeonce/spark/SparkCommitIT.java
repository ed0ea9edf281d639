package dev.writeonce.spark;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.model.SuccessData;
import dev.writeonce.magic.MagicS3AFileSystem;
import dev.writeonce.teststore.BucketView;
import dev.writeonce.teststore.EachStore;
import dev.writeonce.teststore.S3Api;
import dev.writeonce.teststore.StoreLifecycle;
import dev.writeonce.teststore.TestStore;
import dev.writeonce.teststore.Traffic;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Real Spark (local mode, two task slots, two attempts per task) writing through {@link
 * WriteonceCommitProtocol} to a real store, with the store's own counters as the witness.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@EachStore
class SparkCommitIT implements StoreLifecycle {

  private static final Logger LOG = LoggerFactory.getLogger(SparkCommitIT.class);
  private static final List<String> COMMITTERS = List.of("directory", "magic");

  /** The store of the current run, set by {@link #startOn}. */
  private TestStore store;

  private TestStore store() {
    return store;
  }

  @TempDir static Path scratch;

  private SparkSession spark;
  private String bucket;
  private BucketView view;

  @Override
  public void startOn(TestStore store) throws Exception {
    this.store = store;
    spark =
        SparkSessions.builder("local[2,2]", store(), scratch)
            .config("spark.sql.shuffle.partitions", "4")
            .getOrCreate();
  }

  @Override
  public void stopOn(TestStore store) throws Exception {
    if (spark != null) {
      spark.stop();
    }
  }

  @BeforeEach
  void newBucket() throws Exception {
    bucket = store().newBucket("spark");
    view = new BucketView(store(), bucket);
    spark.conf().set("spark.sql.sources.partitionOverwriteMode", "static");
  }

  private Dataset<Row> rows(int count, int partitions) {
    return spark
        .range(count)
        .selectExpr("id", "concat('row-', id) AS name", "CAST(id % 10 AS INT) AS p")
        .repartition(partitions);
  }

  private static List<String> sorted(Dataset<Row> data) {
    return data.orderBy("id").collectAsList().stream().map(Row::toString).toList();
  }

  private List<String> dataFiles(String prefix) {
    return view.keys(prefix).stream()
        .filter(k -> !k.endsWith("_SUCCESS") && !k.contains("/_writeonce/"))
        .toList();
  }

  @Test
  void everyFormatWithEachCommitterReadsBackWithoutCopyOrGet() throws Exception {
    Dataset<Row> data = rows(1000, 4);
    for (String committer : COMMITTERS) {
      spark.conf().set("writeonce.committer", committer);
      for (String format : List.of("parquet", "orc", "json", "csv")) {
        String dir = format + "-" + committer + "/";
        Traffic before = store().meter().read();
        data.write().format(format).option("header", "true").save(view.uri(dir));
        Traffic write = store().meter().read().minus(before);
        LOG.info("{}: {} through {}: {}", store().name(), format, committer, write);

        List<String> files = dataFiles(dir);
        assertThat(files).as("%s %s files", format, committer).hasSize(4);
        assertThat(write.requests(S3Api.COPY_OBJECT)).isZero();
        // Spark checks the output path once (HEAD); job setup reads the commit point once, the
        // commit the job record and the _SUCCESS it replaces once each (RGW counts HEAD as a
        // GET): no room for a data GET on either store.
        assertThat(write.requests(S3Api.GET_OBJECT) + write.requests(S3Api.HEAD_OBJECT))
            .isLessThanOrEqualTo(4);
        assertThat(write.requests(S3Api.COMPLETE_MULTIPART_UPLOAD)).isEqualTo(files.size());
        // Per file: create, part, complete. Per task: the intent PUT of the directory committer
        // (the magic committer sends none); one file per task here. Per job: Spark's check of
        // the output path (HEAD, LIST), the check for unfinished jobs (LIST), the job record
        // (PUT and a GET of the commit point at setup; GET and PUT at commit; PUT when
        // finished), the job manifest (PUT), _SUCCESS (GET of the one it replaces, PUT),
        // cleanup (LIST, 2 DELETE).
        assertThat(write.totalRequests()).isLessThanOrEqualTo(4L * files.size() + 15);
        assertThat(view.openUploads(files)).isEmpty();
        Dataset<Row> back =
            spark
                .read()
                .format(format)
                .option("header", "true")
                .schema(data.schema())
                .load(view.uri(dir));
        assertThat(sorted(back)).as("%s %s", format, committer).isEqualTo(sorted(data));
        SuccessData success = SparkSessions.success(view, dir);
        assertThat(success.committer()).isEqualTo(committer);
        assertThat(success.metrics()).containsEntry("writeonce.files", 4L);
      }
    }
  }

  @Test
  void dynamicPartitionOverwriteReplacesOnlyThePartitionsWritten() throws Exception {
    for (String committer : COMMITTERS) {
      spark.conf().set("writeonce.committer", committer);
      String dir = "dynamic-" + committer + "/";
      rows(1000, 4).write().partitionBy("p").parquet(view.uri(dir));
      Map<String, String> before = view.etags(dir);

      spark.conf().set("spark.sql.sources.partitionOverwriteMode", "dynamic");
      Dataset<Row> update =
          spark
              .range(100)
              .selectExpr(
                  "id + 5000 AS id", "concat('new-', id) AS name", "CAST(1 + id % 3 AS INT) AS p");
      Traffic start = store().meter().read();
      update.repartition(2).write().mode("overwrite").partitionBy("p").parquet(view.uri(dir));
      Traffic overwrite = store().meter().read().minus(start);
      spark.conf().set("spark.sql.sources.partitionOverwriteMode", "static");

      assertThat(overwrite.requests(S3Api.COPY_OBJECT)).isZero();
      Map<String, String> after = view.etags(dir);
      Map<String, String> untouchedBefore = new TreeMap<>(before);
      untouchedBefore.keySet().removeIf(k -> k.matches(".*/p=[123]/.*") || k.endsWith("_SUCCESS"));
      Map<String, String> untouchedAfter = new TreeMap<>(after);
      untouchedAfter.keySet().removeIf(k -> k.matches(".*/p=[123]/.*") || k.endsWith("_SUCCESS"));
      assertThat(untouchedAfter)
          .as("7 partitions untouched")
          .isEqualTo(untouchedBefore)
          .hasSize(7 * 4);

      Dataset<Row> back = spark.read().parquet(view.uri(dir));
      assertThat(back.where("p IN (1, 2, 3)").where("name NOT LIKE 'new-%'").count()).isZero();
      assertThat(back.where("p IN (1, 2, 3)").count()).isEqualTo(100);
      assertThat(back.where("p NOT IN (1, 2, 3)").count()).isEqualTo(700);
    }
  }

  /** Runs two writes at once, each on its own thread; returns what each threw, or null. */
  private static List<Throwable> concurrently(Runnable first, Runnable second) throws Exception {
    ExecutorService threads = Executors.newFixedThreadPool(2);
    try {
      CountDownLatch start = new CountDownLatch(1);
      List<Future<Throwable>> outcomes = new ArrayList<>();
      for (Runnable write : List.of(first, second)) {
        outcomes.add(
            threads.submit(
                () -> {
                  start.await();
                  try {
                    write.run();
                    return null;
                  } catch (RuntimeException e) {
                    return e;
                  }
                }));
      }
      start.countDown();
      List<Throwable> thrown = new ArrayList<>();
      for (Future<Throwable> outcome : outcomes) {
        thrown.add(outcome.get(5, TimeUnit.MINUTES));
      }
      return thrown;
    } finally {
      threads.shutdownNow();
    }
  }

  @Test
  void twoConcurrentAppendsToDifferentPartitionsBothCommitEveryRowOnce() throws Exception {
    spark.conf().set("writeonce.committer", "directory");
    String dir = "concurrent/";
    Dataset<Row> low = rows(600, 3).where("p < 5");
    Dataset<Row> high = rows(600, 3).where("p >= 5").selectExpr("id + 10000 AS id", "name", "p");

    List<Throwable> thrown =
        concurrently(
            () -> low.write().mode("append").partitionBy("p").parquet(view.uri(dir)),
            () -> high.write().mode("append").partitionBy("p").parquet(view.uri(dir)));

    assertThat(thrown).containsOnlyNulls();
    Dataset<Row> back = spark.read().parquet(view.uri(dir));
    assertThat(back.count()).isEqualTo(600);
    assertThat(back.select("id").distinct().count()).isEqualTo(600);
    assertThat(back.where("p < 5 AND id >= 10000").count()).isZero();
    List<String> files = dataFiles(dir);
    assertThat(view.openUploads(files)).isEmpty();
    assertThat(view.keys(dir + "_writeonce/")).as("both jobs removed their records").isEmpty();
  }

  @Test
  void twoConcurrentJobsInFailModeOnOneDestinationLetExactlyOneWrite() throws Exception {
    spark.conf().set("writeonce.committer", "directory");
    spark.conf().set("writeonce.conflict-mode", "fail");
    String dir = "exclusive/";
    try {
      Dataset<Row> first = rows(300, 2).selectExpr("id", "'first' AS name", "p");
      Dataset<Row> second = rows(500, 2).selectExpr("id", "'second' AS name", "p");
      List<Throwable> thrown =
          // Both append, so Spark's own check of the path (which sees the other job's records)
          // does not decide: writeonce's fail mode does.
          concurrently(
              () -> first.write().mode("append").parquet(view.uri(dir)),
              () -> second.write().mode("append").parquet(view.uri(dir)));

      assertThat(thrown).as("exactly one job fails").containsOnlyOnce((Throwable) null);
      Throwable failure = thrown.get(0) != null ? thrown.get(0) : thrown.get(1);
      assertThat(failure).hasStackTraceContaining("writeonce.conflict-mode is fail");
      String winner = thrown.get(0) == null ? "first" : "second";
      Dataset<Row> back = spark.read().parquet(view.uri(dir));
      assertThat(back.where("name = '" + winner + "'").count())
          .isEqualTo(winner.equals("first") ? 300 : 500);
      assertThat(back.count())
          .as("nothing of the losing job")
          .isEqualTo(winner.equals("first") ? 300 : 500);
      assertThat(view.openUploads(dataFiles(dir))).isEmpty();
      assertThat(view.keys(dir + "_writeonce/")).isEmpty();
    } finally {
      spark.conf().set("writeonce.conflict-mode", "append");
    }
  }

  @Test
  void anOverwriteDeletesTheOldDataOnlyAfterTheCommitPoint() throws Exception {
    for (String committer : COMMITTERS) {
      spark.conf().set("writeonce.committer", committer);
      String dir = "overwrite-" + committer + "/";
      rows(100, 2).write().parquet(view.uri(dir));
      List<String> old = dataFiles(dir);
      String replacedJob = SparkSessions.success(view, dir).jobId();

      Traffic start = store().meter().read();
      rows(30, 3).write().mode("overwrite").parquet(view.uri(dir));
      Traffic overwrite = store().meter().read().minus(start);

      assertThat(overwrite.requests(S3Api.COPY_OBJECT)).isZero();
      assertThat(dataFiles(dir)).hasSize(3).doesNotContainAnyElementsOf(old);
      assertThat(spark.read().parquet(view.uri(dir)).count()).isEqualTo(30);
      SuccessData success = SparkSessions.success(view, dir);
      assertThat(success.metrics())
          .as("the old files were deleted by the job commit, after its commit point")
          .containsEntry("writeonce.replaced.deleted", (long) old.size());
      assertThat(success.finishedJobs())
          .as("_SUCCESS replaced, not deleted: it names the job whose output was replaced")
          .extracting(dev.writeonce.core.model.FinishedJob::jobId)
          .containsExactly(replacedJob);
    }
  }

  @Test
  void aTaskThatFailsItsFirstAttemptWritesItsRowsExactlyOnce() throws Exception {
    spark
        .udf()
        .register(
            "failFirstAttemptOfPartition1",
            (UDF1<Long, Long>)
                id -> {
                  TaskContext task = TaskContext.get();
                  if (task.partitionId() == 1 && task.attemptNumber() == 0) {
                    throw new IllegalStateException("injected failure of the first attempt");
                  }
                  return id;
                },
            DataTypes.LongType);
    for (String committer : COMMITTERS) {
      spark.conf().set("writeonce.committer", committer);
      String dir = "retry-" + committer + "/";
      Dataset<Row> data =
          spark.range(400).repartition(4).selectExpr("failFirstAttemptOfPartition1(id) AS id");
      data.write().parquet(view.uri(dir));

      List<Row> back = spark.read().parquet(view.uri(dir)).orderBy("id").collectAsList();
      assertThat(back).hasSize(400);
      assertThat(back.stream().map(r -> r.getLong(0)).distinct().count()).isEqualTo(400);
      assertThat(dataFiles(dir)).hasSize(4);
      assertThat(view.openUploads(dataFiles(dir))).isEmpty();
    }
  }

  @Test
  void theDirectoryCommitterUploadsEachFileOnceAsSparkClosesIt() throws Exception {
    spark.conf().set("writeonce.committer", "directory");
    spark.conf().set("writeonce.staging.upload-on-close", "true");
    spark.conf().set("writeonce.staging.upload-on-close.min-size", "0");
    try {
      String dir = "on-close/";
      // 2 tasks, each writing its 5 partitions one after another.
      Dataset<Row> data =
          spark.range(1000).selectExpr("id", "CAST(id % 5 AS INT) AS p").repartition(2);
      Traffic before = store().meter().read();
      data.write().partitionBy("p").parquet(view.uri(dir));
      Traffic write = store().meter().read().minus(before);
      LOG.info("{}: 10 files uploaded as they closed: {}", store().name(), write);

      List<String> files = dataFiles(dir);
      assertThat(files).hasSize(10);
      assertThat(write.requests(S3Api.CREATE_MULTIPART_UPLOAD))
          .as("one upload per file: %s", write)
          .isEqualTo(10);
      assertThat(write.requests(S3Api.COMPLETE_MULTIPART_UPLOAD)).isEqualTo(10);
      assertThat(write.requests(S3Api.COPY_OBJECT)).isZero();
      // Per file: create, part, complete and at most one intent PUT; per job as above.
      assertThat(write.totalRequests()).isLessThanOrEqualTo(4L * files.size() + 15);
      assertThat(view.openUploads(files)).isEmpty();
      assertThat(sorted(spark.read().parquet(view.uri(dir)).select("id", "p")))
          .isEqualTo(sorted(data));
    } finally {
      spark.conf().unset("writeonce.staging.upload-on-close");
      spark.conf().unset("writeonce.staging.upload-on-close.min-size");
    }
  }

  @Test
  void twoThousandFilesReachTheDriverInCommitMessagesWithNoRecordsInTheStore() throws Exception {
    spark.conf().set("writeonce.committer", "magic");
    String dir = "many/";
    Dataset<Row> data =
        spark
            .range(20_000)
            .selectExpr("id", "CAST(id % 100 AS INT) AS p")
            .repartition(20, functions.col("id"));
    Traffic start = store().meter().read();
    data.write().partitionBy("p").parquet(view.uri(dir));
    Traffic write = store().meter().read().minus(start);

    List<String> files = dataFiles(dir);
    assertThat(files).hasSize(2000);
    assertThat(view.keys(dir)).hasSize(2001); // and _SUCCESS: no task or job records
    assertThat(write.requests(S3Api.COMPLETE_MULTIPART_UPLOAD)).isEqualTo(2000);
    assertThat(write.requests(S3Api.COPY_OBJECT)).isZero();
    // PUT per job: the job record three times, the job manifest and _SUCCESS; per task, one
    // intent (20 tasks). No per-file object.
    assertThat(write.requests(S3Api.PUT_OBJECT) - write.requests(S3Api.UPLOAD_PART))
        .isLessThanOrEqualTo(5 + 20 + (store().name().equals("ceph-rgw") ? 2000 : 0));
    SuccessData success = SparkSessions.success(view, dir);
    assertThat(success.metrics()).containsEntry("writeonce.files", 2000L);
  }

  @Test
  void sparksOutputMetricsCountTheFilesAndBytesStored() throws Exception {
    for (String committer : COMMITTERS) {
      spark.conf().set("writeonce.committer", committer);
      String dir = "metrics-" + committer + "/";
      LongAccumulatorListener listener = new LongAccumulatorListener();
      spark.sparkContext().addSparkListener(listener);
      try {
        rows(2000, 4).write().parquet(view.uri(dir));
        spark.sparkContext().listenerBus().waitUntilEmpty();
      } finally {
        spark.sparkContext().removeSparkListener(listener);
      }
      long stored = dataFiles(dir).stream().mapToLong(view::size).sum();
      assertThat(listener.bytesWritten.sum()).as("%s bytes written", committer).isEqualTo(stored);
      assertThat(listener.recordsWritten.sum()).isEqualTo(2000);
    }
  }

  /** Sums the output metrics of every finished task. */
  static final class LongAccumulatorListener extends org.apache.spark.scheduler.SparkListener {
    final java.util.concurrent.atomic.LongAdder bytesWritten =
        new java.util.concurrent.atomic.LongAdder();
    final java.util.concurrent.atomic.LongAdder recordsWritten =
        new java.util.concurrent.atomic.LongAdder();

    @Override
    public void onTaskEnd(org.apache.spark.scheduler.SparkListenerTaskEnd end) {
      if (end.taskMetrics() != null) {
        bytesWritten.add(end.taskMetrics().outputMetrics().bytesWritten());
        recordsWritten.add(end.taskMetrics().outputMetrics().recordsWritten());
      }
    }
  }

  @Test
  void theMagicCommitterWithoutItsFilesystemFailsAtSetupNamingTheSetting() throws Exception {
    spark.conf().set("writeonce.committer", "magic");
    Dataset<Row> data = rows(10, 1);
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () ->
                data.write()
                    .option("fs.s3a.impl", "org.apache.hadoop.fs.s3a.S3AFileSystem")
                    .parquet(view.uri("plain-s3a/")))
        .hasStackTraceContaining("fs.s3a.impl")
        .hasStackTraceContaining(MagicS3AFileSystem.class.getName());
    assertThat(view.keys("")).isEmpty();
  }

  @Test
  void tablesInTheCatalogTakeInsertIntoInsertOverwriteAndCtas() throws Exception {
    spark.conf().set("writeonce.committer", "directory");
    String location = view.uri("warehouse/sales");
    spark.sql("DROP TABLE IF EXISTS sales");
    spark.sql(
        "CREATE TABLE sales (id BIGINT, name STRING) USING parquet LOCATION '" + location + "'");
    spark.sql("INSERT INTO sales SELECT id, concat('a', id) FROM range(10)");
    spark.sql("INSERT INTO sales SELECT id, concat('b', id) FROM range(10, 15)");
    assertThat(spark.table("sales").count()).isEqualTo(15);

    Traffic start = store().meter().read();
    spark.sql("INSERT OVERWRITE TABLE sales SELECT id, concat('c', id) FROM range(3)");
    Traffic overwrite = store().meter().read().minus(start);
    assertThat(spark.table("sales").count()).isEqualTo(3);
    assertThat(overwrite.requests(S3Api.COPY_OBJECT)).isZero();

    spark.sql("DROP TABLE IF EXISTS sales_copy");
    spark.sql(
        "CREATE TABLE sales_copy USING parquet LOCATION '"
            + view.uri("warehouse/sales_copy")
            + "' AS SELECT * FROM sales");
    assertThat(spark.table("sales_copy").count()).isEqualTo(3);
    spark.range(4).selectExpr("id", "'d' AS name").write().mode("append").saveAsTable("sales_copy");
    assertThat(spark.table("sales_copy").count()).isEqualTo(7);
    spark.sql("DROP TABLE sales");
    spark.sql("DROP TABLE sales_copy");
  }
}
