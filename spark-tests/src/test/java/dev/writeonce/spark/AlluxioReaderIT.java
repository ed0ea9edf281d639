package dev.writeonce.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.model.CommitStatistics;
import dev.writeonce.core.model.SuccessData;
import dev.writeonce.spark.AlluxioCluster.FileSeen;
import dev.writeonce.spark.AlluxioCluster.Observation;
import dev.writeonce.teststore.BucketView;
import dev.writeonce.teststore.EachStore;
import dev.writeonce.teststore.S3Api;
import dev.writeonce.teststore.StoreLifecycle;
import dev.writeonce.teststore.TestStore;
import dev.writeonce.teststore.Traffic;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
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
 * Alluxio in front of the store: Spark writes a partitioned table to {@code s3a://} while a reader
 * in a real Alluxio cluster, whose root is the same bucket, lists and reads the table again and
 * again with metadata sync on every listing. Through writeonce the reader sees the old table until
 * the commit point and nothing but committed files after it; through FileOutputCommitter v1 on S3A
 * it sees what that protocol leaves in the table while it runs, for comparison. Each run's figures
 * go to {@code target/alluxio-<store>.md}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@EachStore
class AlluxioReaderIT implements StoreLifecycle {

  private static final Logger LOG = LoggerFactory.getLogger(AlluxioReaderIT.class);
  private static final String FOC_PROTOCOL =
      "org.apache.spark.sql.execution.datasources.SQLHadoopMapReduceCommitProtocol";

  @TempDir static Path scratch;

  private TestStore store;
  private SparkSession spark;
  private AlluxioCluster alluxio;
  private String bucket;
  private BucketView view;
  private int table;

  @Override
  public void startOn(TestStore store) throws Exception {
    this.store = store;
    bucket = store.newBucket("alluxio");
    view = new BucketView(store, bucket);
    alluxio = AlluxioCluster.start(store, bucket, Path.of("target"));
    SparkSession.Builder builder =
        SparkSessions.plainBuilder("local[2,2]", store)
            .config("spark.sql.shuffle.partitions", "4")
            .config(
                "spark.hadoop." + CommitterConfig.STAGING_DIR,
                scratch.resolve("staging").toString());
    store
        .emptyObjectSettings()
        .forEach((key, value) -> builder.config("spark.hadoop." + key, value));
    spark = builder.getOrCreate();
    Files.deleteIfExists(report());
  }

  @Override
  public void stopOn(TestStore store) throws Exception {
    if (spark != null) {
      spark.stop();
    }
    if (alluxio != null) {
      alluxio.close();
    }
  }

  @BeforeEach
  void newTable() {
    table++;
  }

  private Path report() {
    return Path.of("target", "alluxio-" + store.name() + ".md");
  }

  private void report(String line) throws IOException {
    LOG.info("{}: {}", store.name(), line);
    Files.writeString(
        report(),
        line + "\n",
        StandardCharsets.UTF_8,
        StandardOpenOption.CREATE,
        StandardOpenOption.APPEND);
  }

  /** Rows spread over 4 partition directories, from tasks that each take a while. */
  private Dataset<Row> rows(long from, long count, long taskMillis) {
    UDF1<Long, Long> slow =
        id -> {
          TaskContext task = TaskContext.get();
          if (task != null && id % 250 == 0) {
            Thread.sleep(taskMillis / 4);
          }
          return id;
        };
    return spark
        .range(from, from + count)
        .repartition(4)
        .select(
            functions.udf(slow, DataTypes.LongType).apply(functions.col("id")).as("id"),
            functions.expr("sha2(CAST(id AS STRING), 256)").as("h"),
            functions.expr("CAST(id % 4 AS INT)").as("p"));
  }

  private void useWriteonce() {
    spark
        .conf()
        .set("spark.sql.sources.commitProtocolClass", WriteonceCommitProtocol.class.getName());
    spark.conf().set("writeonce.committer", "directory");
  }

  private void useFileOutputCommitterV1() {
    spark.conf().set("spark.sql.sources.commitProtocolClass", FOC_PROTOCOL);
    spark.conf().set("mapreduce.fileoutputcommitter.algorithm.version", "1");
  }

  /** Whether a key is data a reader takes: no path segment below the table starts with _ or '.'. */
  private static boolean isData(String tablePrefix, String key) {
    for (String segment : key.substring(tablePrefix.length()).split("/")) {
      if (segment.startsWith("_") || segment.startsWith(".")) {
        return false;
      }
    }
    return true;
  }

  /** The data files of the table in the store, with the SHA-256 of their bytes. */
  private Map<String, String> dataInStore(String prefix) throws Exception {
    Map<String, String> files = new TreeMap<>();
    for (String key : view.keys(prefix)) {
      if (isData(prefix, key) && !key.endsWith("/")) {
        byte[] bytes =
            store.adminClient().getObjectAsBytes(b -> b.bucket(bucket).key(key)).asByteArray();
        files.put(
            key, HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes)));
      }
    }
    return files;
  }

  /** What the reader saw of the table's data, as keys under the bucket with their hashes. */
  private static Map<String, String> dataSeen(String prefix, Observation observation) {
    Map<String, String> seen = new TreeMap<>();
    for (FileSeen file : observation.files().values()) {
      String key = file.path().substring(1);
      if (isData(prefix, key)) {
        seen.put(key, file.sha256());
      }
    }
    return seen;
  }

  private static Set<String> hiddenSeen(String prefix, Observation observation) {
    Set<String> hidden = new TreeSet<>();
    for (FileSeen file : observation.files().values()) {
      String key = file.path().substring(1);
      if (!isData(prefix, key)) {
        hidden.add(key.substring(prefix.length()));
      }
    }
    return hidden;
  }

  /** What one watched write showed the reader. */
  private record Watched(
      List<Observation> observations,
      Map<String, String> before,
      Map<String, String> after,
      Traffic traffic,
      long writeStart,
      long writeEnd) {

    Set<String> added() {
      Set<String> added = new TreeSet<>(after.keySet());
      added.removeAll(before.keySet());
      return added;
    }
  }

  private interface Write {
    void run(String uri) throws Exception;
  }

  private Watched watch(String prefix, Write write) throws Exception {
    Map<String, String> before = dataInStore(prefix);
    Path file = scratch.resolve("observations-" + store.name() + "-" + table + ".jsonl");
    // Read while no listing runs: Ceph RGW's usage log must settle to be read.
    Traffic start = store.meter().read();
    alluxio.watch("/" + prefix, file, 0);
    long writeStart = System.currentTimeMillis();
    try {
      write.run(view.uri(prefix));
    } finally {
      long writeEnd = System.currentTimeMillis();
      List<Observation> observations = alluxio.unwatch(file);
      // The reader's own requests (listings, reads) are in these counts too; it never copies.
      Traffic traffic = store.meter().read().minus(start);
      lastWatched =
          new Watched(observations, before, dataInStore(prefix), traffic, writeStart, writeEnd);
    }
    return lastWatched;
  }

  private Watched lastWatched;

  /**
   * What the listings of one write showed: how many showed part of the new files and for how long
   * (from the first such listing's start to the last one's end), how many showed
   * FileOutputCommitter's {@code _temporary/}, and every hidden path seen.
   */
  private record Summary(int partial, String partialSpan, int withTemporary, Set<String> hidden) {}

  /** Up to 8 of the hidden paths seen, ids and attempt numbers masked. */
  private void reportHidden(String write, Summary summary) throws IOException {
    report(
        "hidden paths seen through Alluxio during "
            + write
            + ": "
            + summary.hidden().stream()
                .map(k -> k.replaceAll("[0-9a-f-]{36}", "<uuid>").replaceAll("_[0-9]{4,}", "_N"))
                .distinct()
                .limit(8)
                .toList());
  }

  private static Summary summarize(String prefix, Watched watched) {
    Set<String> added = watched.added();
    int partial = 0;
    int withTemporary = 0;
    long firstPartial = Long.MAX_VALUE;
    long lastPartial = Long.MIN_VALUE;
    Set<String> hidden = new TreeSet<>();
    for (Observation observation : watched.observations()) {
      Set<String> hiddenNow = hiddenSeen(prefix, observation);
      hidden.addAll(hiddenNow);
      if (hiddenNow.stream().anyMatch(k -> k.startsWith("_temporary/"))) {
        withTemporary++;
      }
      Set<String> newSeen = new TreeSet<>(dataSeen(prefix, observation).keySet());
      newSeen.retainAll(added);
      if (!newSeen.isEmpty() && newSeen.size() < added.size()) {
        partial++;
        firstPartial = Math.min(firstPartial, observation.listStart());
        lastPartial = Math.max(lastPartial, observation.listEnd());
      }
    }
    String span = partial == 0 ? "none seen" : "at least " + (lastPartial - firstPartial) + " ms";
    return new Summary(partial, span, withTemporary, hidden);
  }

  @Test
  void throughWriteonceAReaderSeesTheOldTableUntilTheCommitPointAndOnlyCommittedBytesAfter()
      throws Exception {
    String prefix = "writeonce-" + table + "/events/";
    useWriteonce();
    rows(0, 2000, 0).write().partitionBy("p").parquet(view.uri(prefix));
    Map<String, String> old = dataInStore(prefix);
    assertThat(alluxio.snapshot("/" + prefix, scratch.resolve("old-" + table + ".json")))
        .satisfies(o -> assertThat(dataSeen(prefix, o)).isEqualTo(old));

    Watched watched =
        watch(
            prefix,
            uri -> rows(2000, 2000, 2000).write().mode("append").partitionBy("p").parquet(uri));

    SuccessData success = SparkSessions.success(view, prefix);
    long completeMillis = success.metrics().get(CommitStatistics.stageMillis("complete"));
    long commitPointEnd =
        success.timestamp()
            - completeMillis
            - success.metrics().getOrDefault(CommitStatistics.stageMillis("replace"), 0L);
    long commitPointStart =
        commitPointEnd - success.metrics().get(CommitStatistics.stageMillis("commit-point"));
    Set<String> added = watched.added();
    assertThat(added).as("the job added files").isNotEmpty();
    assertThat(watched.traffic().requests(S3Api.COPY_OBJECT)).as("COPY").isZero();

    Map<String, String> committed = new TreeMap<>(watched.after());
    int beforeCommitPoint = 0;
    for (Observation observation : watched.observations()) {
      Map<String, String> seen = dataSeen(prefix, observation);
      assertThat(committed)
          .as("every data file seen is committed output, with its committed bytes")
          .containsAllEntriesOf(seen);
      assertThat(seen.keySet()).as("the old table stays whole").containsAll(old.keySet());
      Set<String> newSeen = new TreeSet<>(seen.keySet());
      newSeen.removeAll(old.keySet());
      if (observation.listEnd() < commitPointStart) {
        beforeCommitPoint++;
        assertThat(newSeen).as("before the commit point: the old table only").isEmpty();
      }
    }
    Summary summary = summarize(prefix, watched);
    assertThat(summary.hidden())
        .as("no pending file and no temporary directory: only the library's records")
        .allMatch(key -> key.startsWith("_writeonce/") || key.equals("_SUCCESS"));
    assertThat(beforeCommitPoint).as("observations before the commit point").isPositive();

    Observation last = alluxio.snapshot("/" + prefix, scratch.resolve("after-" + table + ".json"));
    assertThat(dataSeen(prefix, last))
        .as("after the commit: every file through Alluxio, byte for byte")
        .isEqualTo(committed);

    report(
        String.format(
            Locale.ROOT,
            "| %s | writeonce directory committer | %d | %d | %d | %d | %s | %d ms | %d | %d |",
            store.name(),
            watched.observations().size(),
            beforeCommitPoint,
            summary.withTemporary(),
            summary.partial(),
            summary.partialSpan(),
            completeMillis,
            watched.traffic().requests(S3Api.COPY_OBJECT),
            added.size()));
    reportHidden("the writeonce write", summary);

    // A job that fails is aborted: the reader never sees any of its data.
    Map<String, String> beforeFailure = dataInStore(prefix);
    UDF1<Long, Long> failing =
        id -> {
          if (id == 5000) {
            throw new IllegalStateException("this task always fails");
          }
          return id;
        };
    assertThatThrownBy(
            () ->
                watch(
                    prefix,
                    uri ->
                        spark
                            .range(4000, 6000)
                            .repartition(4)
                            .select(
                                functions
                                    .udf(failing, DataTypes.LongType)
                                    .apply(functions.col("id"))
                                    .as("id"),
                                functions.expr("CAST(id % 4 AS INT)").as("p"))
                            .write()
                            .mode("append")
                            .partitionBy("p")
                            .parquet(uri)))
        .hasStackTraceContaining("this task always fails");
    for (Observation observation : lastWatched.observations()) {
      assertThat(dataSeen(prefix, observation))
          .as("nothing of the aborted job")
          .isEqualTo(beforeFailure);
    }
    assertThat(lastWatched.after()).isEqualTo(beforeFailure);
  }

  @Test
  void throughFileOutputCommitterV1TheSameReaderSeesWhatThatProtocolLeavesInTheTable()
      throws Exception {
    String prefix = "foc-" + table + "/events/";
    useFileOutputCommitterV1();
    rows(0, 2000, 0).write().partitionBy("p").parquet(view.uri(prefix));
    Map<String, String> old = dataInStore(prefix);

    Watched watched =
        watch(
            prefix,
            uri -> rows(2000, 2000, 2000).write().mode("append").partitionBy("p").parquet(uri));

    Set<String> added = watched.added();
    Summary summary = summarize(prefix, watched);
    assertThat(added).isNotEmpty();
    assertThat(watched.traffic().requests(S3Api.COPY_OBJECT))
        .as("FileOutputCommitter v1 on S3A copies every file twice")
        .isGreaterThanOrEqualTo(2L * added.size());
    Observation last = alluxio.snapshot("/" + prefix, scratch.resolve("after-" + table + ".json"));
    assertThat(dataSeen(prefix, last)).isEqualTo(watched.after());

    report(
        String.format(
            Locale.ROOT,
            "| %s | FileOutputCommitter v1 on S3A | %d | - | %d | %d | %s | - | %d | %d |",
            store.name(),
            watched.observations().size(),
            summary.withTemporary(),
            summary.partial(),
            summary.partialSpan(),
            watched.traffic().requests(S3Api.COPY_OBJECT),
            added.size()));
    reportHidden("the FileOutputCommitter write", summary);
  }

  @Test
  void writingThroughAlluxioCopiesEveryFileWhereWriteonceOnS3aWritesEachOnce() throws Exception {
    int tasks = 4;
    int filesPerTask = 5;
    int bytes = 256 * 1024;
    String through = "through-" + table + "/events/";
    Traffic before = store.meter().read();
    alluxio.fileOutputCommitterWrite(alluxio.uri() + through, tasks, filesPerTask, bytes);
    Traffic viaAlluxio = store.meter().read().minus(before);
    Map<String, String> written = dataInStore(through);
    assertThat(written).hasSize(tasks * filesPerTask);
    assertThat(viaAlluxio.requests(S3Api.COPY_OBJECT))
        .as("Alluxio renames by COPY and DELETE: at least one copy of every file")
        .isGreaterThanOrEqualTo(written.size());
    Observation seen =
        alluxio.snapshot("/" + through, scratch.resolve("through-" + table + ".json"));
    assertThat(dataSeen(through, seen)).isEqualTo(written);

    String direct = "direct-" + table + "/events/";
    useWriteonce();
    before = store.meter().read();
    spark
        .range(0, 4000)
        .repartition(tasks)
        .selectExpr("id", "sha2(CAST(id AS STRING), 256) AS h", "CAST(id % 5 AS INT) AS p")
        .write()
        .partitionBy("p")
        .parquet(view.uri(direct));
    Traffic viaWriteonce = store.meter().read().minus(before);
    Map<String, String> committed = dataInStore(direct);
    assertThat(committed).hasSize(tasks * filesPerTask);
    assertThat(viaWriteonce.requests(S3Api.COPY_OBJECT)).isZero();
    Observation read = alluxio.snapshot("/" + direct, scratch.resolve("direct-" + table + ".json"));
    assertThat(dataSeen(direct, read))
        .as("read through Alluxio, byte for byte")
        .isEqualTo(committed);

    report(
        String.format(
            Locale.ROOT,
            "| %s | FileOutputCommitter v1 through alluxio:// (THROUGH) | %d | %.1f | %d | %.2f |",
            store.name(),
            written.size(),
            viaAlluxio.totalRequests() / (double) written.size(),
            viaAlluxio.requests(S3Api.COPY_OBJECT),
            viaAlluxio.bytesReceived() / (double) (written.size() * (long) bytes)));
    report(
        String.format(
            Locale.ROOT,
            "| %s | writeonce directory committer to s3a://, read through Alluxio | %d | %.1f | %d |"
                + " - |",
            store.name(),
            committed.size(),
            viaWriteonce.totalRequests() / (double) committed.size(),
            viaWriteonce.requests(S3Api.COPY_OBJECT)));
    report("requests through Alluxio by type: " + viaAlluxio);
  }
}
