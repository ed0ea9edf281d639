package dev.writeonce.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.publish.Publication;
import dev.writeonce.teststore.BucketView;
import dev.writeonce.teststore.EachStore;
import dev.writeonce.teststore.S3Api;
import dev.writeonce.teststore.StoreLifecycle;
import dev.writeonce.teststore.TestStore;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Metastore publish mode on a Hive-catalog table (Spark's built-in metastore client, Derby), with a
 * reader thread that goes through the metastore while statements run: every observation must be one
 * of the snapshots the statements committed. The same series without the mode gives the contrast.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@EachStore
class MetastorePublishIT implements StoreLifecycle {

  private static final Logger LOG = LoggerFactory.getLogger(MetastorePublishIT.class);
  private static final String DATABASE = "oracle";

  @TempDir static Path scratch;

  private TestStore store;
  private SparkSession spark;
  private int tables;

  @Override
  public void startOn(TestStore store) throws Exception {
    this.store = store;
    Path metastore = scratch.resolve("metastore-" + store.name());
    spark =
        SparkSessions.builder("local[2]", store, scratch)
            .config("spark.sql.catalogImplementation", "hive")
            .config("spark.sql.warehouse.dir", scratch.resolve("warehouse").toUri().toString())
            .config(
                "spark.hadoop.javax.jdo.option.ConnectionURL",
                "jdbc:derby:;databaseName=" + metastore + ";create=true")
            .config("spark.sql.shuffle.partitions", "2")
            .getOrCreate();
    spark.sql("CREATE DATABASE IF NOT EXISTS " + DATABASE);
  }

  @Override
  public void stopOn(TestStore store) throws Exception {
    if (spark != null) {
      spark.stop();
      SparkSession.clearActiveSession();
      SparkSession.clearDefaultSession();
    }
  }

  @AfterEach
  void noCut() {
    Publication.stepHook = step -> {};
  }

  /** A fresh partitioned Parquet table at the root of a fresh bucket. */
  private Table newTable(String mode, String grace) throws Exception {
    String bucket = store.newBucket("publish");
    String name = "events_" + (++tables);
    String location = new BucketView(store, bucket).uri("events");
    spark.sql(
        "CREATE TABLE "
            + DATABASE
            + "."
            + name
            + " (id BIGINT, v STRING, p INT) USING parquet PARTITIONED BY (p) LOCATION '"
            + location
            + "'");
    spark.conf().set("writeonce.publish", mode);
    spark.conf().set("writeonce.publish.grace", grace);
    MetastoreReader reader =
        new MetastoreReader(
            spark.sharedState().externalCatalog(),
            DATABASE,
            name,
            new org.apache.hadoop.fs.Path(location),
            spark.sparkContext().hadoopConfiguration());
    return new Table(DATABASE + "." + name, new BucketView(store, bucket), reader);
  }

  private record Table(String name, BucketView view, MetastoreReader reader) {}

  /** A second session of the application, with this session's mode, grace and lease. */
  private SparkSession otherSession() {
    SparkSession other = spark.newSession();
    for (String setting :
        List.of(
            Publication.MODE,
            Publication.GRACE,
            dev.writeonce.core.config.CommitterConfig.JOB_LEASE)) {
      if (spark.conf().contains(setting)) {
        other.conf().set(setting, spark.conf().get(setting));
      }
    }
    return other;
  }

  /** Two sessions append {@code rows[0]} and {@code rows[1]} rows to one partition at once. */
  private void concurrentAppends(Table table, int partition, int[] rows) throws Exception {
    List<SparkSession> sessions = List.of(spark, otherSession());
    java.util.concurrent.ExecutorService pool =
        java.util.concurrent.Executors.newFixedThreadPool(2);
    try {
      List<java.util.concurrent.Future<?>> statements = new ArrayList<>();
      for (int i = 0; i < 2; i++) {
        SparkSession session = sessions.get(i);
        int count = rows[i];
        statements.add(
            pool.submit(
                () -> {
                  SparkSession.setActiveSession(session);
                  session.sql(
                      "INSERT INTO "
                          + table.name()
                          + " SELECT id, 'row', "
                          + partition
                          + " FROM range("
                          + count
                          + ")");
                }));
      }
      for (java.util.concurrent.Future<?> statement : statements) {
        statement.get();
      }
    } finally {
      pool.shutdown();
    }
  }

  /** One statement: its verb and the rows it writes to each partition. */
  private void run(Table table, String verb, Map<Integer, Integer> rowsByPartition) {
    run(table, verb, rowsByPartition, 2);
  }

  /** One statement from {@code tasks} tasks, each writing a file to each partition. */
  private void run(Table table, String verb, Map<Integer, Integer> rowsByPartition, int tasks) {
    Dataset<Row> rows = null;
    for (Map.Entry<Integer, Integer> partition : rowsByPartition.entrySet()) {
      Dataset<Row> part =
          spark
              .range(partition.getValue())
              .selectExpr("id", "'row' AS v", "CAST(" + partition.getKey() + " AS INT) AS p");
      rows = rows == null ? part : rows.union(part);
    }
    rows.repartition(tasks).createOrReplaceTempView("source");
    switch (verb) {
      case "insert" -> spark.sql("INSERT INTO " + table.name() + " SELECT id, v, p FROM source");
      case "overwrite", "dynamic" -> {
        spark
            .conf()
            .set(
                "spark.sql.sources.partitionOverwriteMode",
                verb.equals("dynamic") ? "dynamic" : "static");
        spark.sql(
            "INSERT OVERWRITE TABLE "
                + table.name()
                + " PARTITION (p) SELECT id, v, p FROM source");
      }
      default -> throw new IllegalArgumentException(verb);
    }
  }

  /** The k-th statement of the series: kinds in turn, partitions and row counts varying. */
  private void statement(Table table, int k) {
    String verb = List.of("insert", "overwrite", "dynamic").get(k % 3);
    Map<Integer, Integer> rows = new TreeMap<>();
    int[] partitions =
        switch (verb) {
          case "insert" -> new int[] {k % 5, (k + 1) % 5};
          case "overwrite" -> new int[] {k % 5, (k + 2) % 5, (k + 3) % 5};
          default -> new int[] {(k + 1) % 5, (k + 4) % 5};
        };
    for (int p : partitions) {
      rows.put(p, 3 + (k * 7 + p * 3) % 23);
    }
    // One task: a file per partition per statement keeps each observation cheap, so that the
    // readers look at each statement many times.
    run(table, verb, rows, 1);
  }

  private record OracleResult(
      int statements, int observations, int mismatched, int failedReads, int snapshots) {}

  /**
   * Runs the series while a reader thread observes, until the reader made {@code wanted}
   * observations; each is then checked against the snapshots committed.
   */
  private OracleResult oracle(String mode, int wanted, int minStatements) throws Exception {
    Table table = newTable(mode, "20s");
    statement(table, 1); // a table with rows in three partitions before anyone reads
    Set<Map<String, Long>> committed = new HashSet<>();
    committed.add(table.reader().observe().rowsByPartition());
    List<MetastoreReader.Observation> seen =
        java.util.Collections.synchronizedList(new ArrayList<>());
    AtomicBoolean done = new AtomicBoolean();
    List<Throwable> readerFailure = java.util.Collections.synchronizedList(new ArrayList<>());
    // Three readers, so that each statement is watched at more instants.
    List<Thread> readers = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      Thread reader =
          new Thread(
              () -> {
                try {
                  while (!done.get()) {
                    seen.add(table.reader().observe());
                  }
                } catch (Throwable e) {
                  readerFailure.add(e);
                }
              },
              "metastore-reader-" + i);
      reader.start();
      readers.add(reader);
    }
    int statements = 0;
    try {
      // The statements and the observations wanted, each kind of statement in turn.
      while ((seen.size() < wanted || statements < minStatements)
          && statements < 300
          && readerFailure.isEmpty()) {
        Map<String, Long> before = table.reader().observe().rowsByPartition();
        int k = statements++;
        List<Map<String, Long>> expected = new ArrayList<>();
        if (k % 4 == 3) {
          // Two sessions append to one partition at once: each order is a snapshot, and the
          // table keeps both statements' rows.
          String partition = "p=" + (k % 5);
          int[] rows = {2 + k % 7, 9 + k % 5};
          concurrentAppends(table, k % 5, rows);
          for (int[] added : new int[][] {{rows[0]}, {rows[1]}}) {
            Map<String, Long> one = new TreeMap<>(before);
            one.merge(partition, (long) added[0], Long::sum);
            committed.add(one);
          }
          Map<String, Long> both = new TreeMap<>(before);
          both.merge(partition, (long) rows[0] + rows[1], Long::sum);
          expected.add(both);
        } else {
          statement(table, k);
        }
        // The writer alone between statements: this is the snapshot the statement committed.
        MetastoreReader.Observation quiet = table.reader().observe();
        assertThat(quiet.failed()).as("a quiet read of %s", table.name()).isFalse();
        if (!expected.isEmpty()) {
          assertThat(quiet.rowsByPartition())
              .as("after two appends at once to %s", table.name())
              .isEqualTo(expected.get(0));
        }
        committed.add(quiet.rowsByPartition());
      }
    } finally {
      done.set(true);
      for (Thread reader : readers) {
        reader.join();
      }
    }
    assertThat(readerFailure).isEmpty();
    int mismatched = 0;
    int failed = 0;
    for (MetastoreReader.Observation observation : List.copyOf(seen)) {
      if (observation.failed()) {
        failed++;
        mismatched++;
      } else if (!committed.contains(observation.rowsByPartition())) {
        mismatched++;
        if (mismatched <= 3) {
          LOG.info("{}: mixed observation {}", mode, observation.rowsByPartition());
        }
      }
    }
    OracleResult result =
        new OracleResult(statements, seen.size(), mismatched, failed, committed.size());
    LOG.info("Reader oracle on {}, {}={}: {}", store.name(), "writeonce.publish", mode, result);
    return result;
  }

  @Test
  void aMetastoreReaderSeesEveryStatementWholeInPublishMode() throws Exception {
    OracleResult result = oracle("metastore", 1000, 12);
    assertThat(result.observations()).isGreaterThanOrEqualTo(1000);
    assertThat(result.statements()).isGreaterThanOrEqualTo(12);
    assertThat(result.mismatched()).as("%s", result).isZero();
  }

  @Test
  void withoutTheModeTheSameReaderIsCountedAsTheContrast() throws Exception {
    OracleResult result = oracle("files", 300, 6);
    assertThat(result.observations()).isGreaterThanOrEqualTo(300);
    assertThat(result.statements()).isGreaterThanOrEqualTo(6);
    assertThat(result.mismatched()).isBetween(0, result.observations());
  }

  @Test
  void aCutBeforeTheMetastoreCallLeavesTheTableAsItWasAndAfterItTheNewSnapshotWhole()
      throws Exception {
    for (String cut : List.of("committed", "copied", "published", "retired")) {
      Table table = newTable("metastore", "0s");
      run(table, "insert", Map.of(0, 4, 1, 5, 2, 6));
      Map<String, Long> before = table.reader().observe().rowsByPartition();
      Publication.stepHook =
          step -> {
            if (step.equals(cut)) {
              throw new IllegalStateException("cut at " + step);
            }
          };
      assertThatThrownBy(() -> run(table, "insert", Map.of(0, 10, 1, 20)))
          .as("cut at %s", cut)
          .hasStackTraceContaining("cut at " + cut);
      Publication.stepHook = step -> {};
      Map<String, Long> after = table.reader().observe().rowsByPartition();
      Map<String, Long> whole = Map.of("p=0", 14L, "p=1", 25L, "p=2", 6L);
      if (cut.equals("committed") || cut.equals("copied")) {
        assertThat(after).as("cut at %s", cut).isEqualTo(before);
      } else {
        assertThat(after).as("cut at %s", cut).isEqualTo(whole);
      }
      // The next statements remove what is due (grace 0 here): nothing they remove is read. What
      // a statement superseded without writing its final record is recorded by the first
      // statement after the cut and removed by the second.
      run(table, "insert", Map.of(3, 7));
      run(table, "insert", Map.of(4, 1));
      Map<String, Long> next = new TreeMap<>(after);
      next.put("p=3", 7L);
      next.put("p=4", 1L);
      assertThat(table.reader().observe().rowsByPartition()).as("cut at %s", cut).isEqualTo(next);
      List<String> generations = table.view().keys("events/_generations/");
      List<String> live = liveLocations(table);
      List<String> unread =
          generations.stream()
              .filter(k -> !k.contains("/_retired/"))
              .filter(k -> live.stream().noneMatch(k::startsWith))
              .toList();
      // A cut at published left its pending record: its files are named, so its call landed,
      // and what it superseded went with the grace like the others.
      assertThat(unread).as("cut at %s: files no location names", cut).isEmpty();
      assertThat(table.view().openUploadsUnder("events/")).isEmpty();
    }
  }

  @Test
  void anUnpartitionedTableMovesToEachStatementsGenerationAndDropsTheOldOnes() throws Exception {
    String bucket = store.newBucket("plain");
    BucketView view = new BucketView(store, bucket);
    String name = DATABASE + ".plain_" + (++tables);
    spark.sql(
        "CREATE TABLE "
            + name
            + " (id BIGINT, v STRING) USING parquet LOCATION '"
            + view.uri("plain")
            + "'");
    spark.conf().set("writeonce.publish", "metastore");
    spark.conf().set("writeonce.publish.grace", "0s");
    String[] statements = {
      "INSERT INTO %s SELECT id, 'a' FROM range(5)",
      "INSERT INTO %s SELECT id, 'b' FROM range(7)",
      "INSERT OVERWRITE TABLE %s SELECT id, 'c' FROM range(3)",
      "INSERT INTO %s SELECT id, 'd' FROM range(2)"
    };
    long[] rows = {5, 12, 3, 5, 9};
    String[] dbAndTable = name.split("\\.");
    List<String> generations = new ArrayList<>();
    for (int i = 0; i < rows.length; i++) {
      if (i < statements.length) {
        spark.sql(String.format(statements[i], name));
      } else {
        // The DataFrame API into the existing table goes the same way.
        spark.range(4).selectExpr("id", "'e' AS v").write().mode("append").saveAsTable(name);
      }
      assertThat(spark.table(name).count()).as("after statement %d", i).isEqualTo(rows[i]);
      java.net.URI location =
          spark.sharedState().externalCatalog().getTable(dbAndTable[0], dbAndTable[1]).location();
      assertThat(location.getPath()).startsWith("/plain/_generations/");
      generations.add(location.getPath().substring(1) + "/");
    }
    String live =
        spark
                .sharedState()
                .externalCatalog()
                .getTable(dbAndTable[0], dbAndTable[1])
                .location()
                .getPath()
                .substring(1)
            + "/";
    // Grace 0: each statement removed what the ones before it superseded; what the last one
    // superseded waits for the next statement.
    List<String> unread =
        view.keys("plain/").stream()
            .filter(k -> !k.startsWith(live))
            .filter(k -> !k.contains("/_retired/") && !k.endsWith("_SUCCESS"))
            // The directory the metastore made for this external table stays: the table does
            // not own its location, so nothing outside its generations is removed.
            .filter(k -> !k.equals("plain/"))
            .toList();
    assertThat(unread)
        .isNotEmpty()
        .allMatch(k -> k.startsWith(generations.get(generations.size() - 2)));
  }

  /**
   * The same dynamic overwrite of 8 partitions, with and without the mode: the same uploads, no
   * COPY, no data deleted (the superseded files wait for the grace period). Figures for
   * docs/benchmarks/metastore-publish.md.
   */
  @Test
  void anOverwriteInPublishModeMakesTheSameUploadsAndDeletesNoData() throws Exception {
    Map<String, dev.writeonce.teststore.Traffic> traffic = statementInBothModes("dynamic");
    dev.writeonce.teststore.Traffic files = traffic.get("files");
    dev.writeonce.teststore.Traffic published = traffic.get("metastore");
    for (S3Api api :
        List.of(
            S3Api.CREATE_MULTIPART_UPLOAD, S3Api.UPLOAD_PART, S3Api.COMPLETE_MULTIPART_UPLOAD)) {
      assertThat(published.requests(api)).as("%s", api).isEqualTo(files.requests(api));
    }
    assertThat(published.requests(S3Api.COPY_OBJECT)).isZero();
    // Both remove the job's records in one batch; only the overwrite in place deletes data too.
    assertThat(published.requests(S3Api.DELETE_OBJECTS))
        .isLessThan(files.requests(S3Api.DELETE_OBJECTS));
    // The table's publication lock and its fence before the call; the publication's record: its
    // claim at job setup and again before the completions, its own generation before the call,
    // what it superseded after.
    assertThat(published.requests(S3Api.PUT_OBJECT))
        .isEqualTo(files.requests(S3Api.PUT_OBJECT) + 6);
  }

  /**
   * One statement of 8 partitions of 100 rows (2 tasks, 16 files) over a table holding the same 8
   * partitions, in each mode; logs its time and the store's requests (with the publication's
   * profile, logged by the publication itself).
   */
  private Map<String, dev.writeonce.teststore.Traffic> statementInBothModes(String verb)
      throws Exception {
    Map<String, dev.writeonce.teststore.Traffic> traffic = new TreeMap<>();
    for (String mode : List.of("files", "metastore")) {
      Table table = newTable(mode, "1h");
      Map<Integer, Integer> rows = new TreeMap<>();
      for (int p = 0; p < 8; p++) {
        rows.put(p, 100);
      }
      run(table, "insert", rows);
      dev.writeonce.teststore.Traffic before = store.meter().read();
      long start = System.nanoTime();
      run(table, verb, rows);
      long millis = (System.nanoTime() - start) / 1_000_000;
      dev.writeonce.teststore.Traffic statement = store.meter().read().minus(before);
      traffic.put(mode, statement);
      LOG.info(
          "{} of 8 partitions (16 files) on {}, writeonce.publish={}: {} ms, {}",
          verb.equals("insert") ? "Append" : "Overwrite",
          store.name(),
          mode,
          millis,
          statement);
      assertThat(table.reader().observe().rowsByPartition())
          .hasSize(8)
          .allSatisfy((p, n) -> assertThat(n).isEqualTo(verb.equals("insert") ? 200L : 100L));
    }
    return traffic;
  }

  /**
   * An append to partitions that hold files: the mode publishes a new generation of each, so it
   * copies what the partitions held (16 files), inside the store, in parallel; the uploads are the
   * same as in place.
   */
  @Test
  void anAppendInPublishModeCopiesWhatItsPartitionsHeldAndMakesTheSameUploads() throws Exception {
    Map<String, dev.writeonce.teststore.Traffic> traffic = statementInBothModes("insert");
    dev.writeonce.teststore.Traffic files = traffic.get("files");
    dev.writeonce.teststore.Traffic published = traffic.get("metastore");
    for (S3Api api :
        List.of(
            S3Api.CREATE_MULTIPART_UPLOAD, S3Api.UPLOAD_PART, S3Api.COMPLETE_MULTIPART_UPLOAD)) {
      assertThat(published.requests(api)).as("%s", api).isEqualTo(files.requests(api));
    }
    assertThat(files.requests(S3Api.COPY_OBJECT)).isZero();
    assertThat(published.requests(S3Api.COPY_OBJECT)).isEqualTo(16);
  }

  @Test
  void twoAppendsToOnePartitionAtOnceFromTwoSessionsKeepEveryRowOfBoth() throws Exception {
    Table table = newTable("metastore", "1h");
    run(table, "insert", Map.of(0, 5, 1, 5));
    // The first publication to copy pauses before its metastore call: without the table's lock
    // the other would copy the same files meanwhile and its call would drop the first's rows.
    AtomicBoolean paused = new AtomicBoolean();
    Publication.stepHook =
        step -> {
          if (step.equals("copied") && paused.compareAndSet(false, true)) {
            try {
              Thread.sleep(2_000);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
        };
    concurrentAppends(table, 0, new int[] {7, 11});
    assertThat(paused).isTrue();
    assertThat(table.reader().observe().rowsByPartition()).isEqualTo(Map.of("p=0", 23L, "p=1", 5L));
    assertThat(table.view().keys("events/_generations/"))
        .noneMatch(k -> k.endsWith(dev.writeonce.core.lease.LeaseLock.OBJECT_NAME));
  }

  /**
   * A statement's lease lapses between its copy and its metastore call (its renewals held back, as
   * in a frozen process); another session's append takes the lock over and publishes. The first
   * fails, the winner's rows stay, and nothing of the loser's is left.
   */
  @Test
  void aStatementWhoseLeaseLapsesMidStatementFailsAndTheWinnersRowsStay() throws Exception {
    Table table = newTable("metastore", "0s");
    spark.conf().set(dev.writeonce.core.config.CommitterConfig.JOB_LEASE, "2s");
    try {
      run(table, "insert", Map.of(0, 5, 1, 5));
      SparkSession winner = otherSession();
      AtomicBoolean paused = new AtomicBoolean();
      java.util.concurrent.atomic.AtomicReference<Throwable> winnerFailure =
          new java.util.concurrent.atomic.AtomicReference<>();
      Publication.stepHook =
          step -> {
            if (!step.equals("copied") || !paused.compareAndSet(false, true)) {
              return;
            }
            dev.writeonce.core.lease.LeaseLock.renewalsHeldBack = holder -> true;
            Thread other =
                new Thread(
                    () -> {
                      try {
                        SparkSession.setActiveSession(winner);
                        winner.sql(
                            "INSERT INTO " + table.name() + " SELECT id, 'w', 0 FROM range(11)");
                      } catch (Throwable e) {
                        winnerFailure.set(e);
                      }
                    },
                    "winner");
            other.start();
            try {
              other.join(120_000);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            } finally {
              dev.writeonce.core.lease.LeaseLock.renewalsHeldBack = holder -> false;
            }
          };
      assertThatThrownBy(
              () -> spark.sql("INSERT INTO " + table.name() + " SELECT id, 'l', 0 FROM range(7)"))
          .hasStackTraceContaining("does not");
      Publication.stepHook = step -> {};
      assertThat(paused).isTrue();
      assertThat(winnerFailure.get()).isNull();
      assertThat(table.reader().observe().rowsByPartition())
          .isEqualTo(Map.of("p=0", 16L, "p=1", 5L));
      // Grace 0: the next statement removes what is due; nothing but named generations and
      // their records is left, and no upload stays open.
      run(table, "insert", Map.of(2, 1));
      List<String> live = liveLocations(table);
      assertThat(
              table.view().keys("events/_generations/").stream()
                  .filter(k -> !k.contains("/_retired/")))
          .allMatch(k -> live.stream().anyMatch(k::startsWith));
      assertThat(table.view().openUploadsUnder("events/")).isEmpty();
    } finally {
      dev.writeonce.core.lease.LeaseLock.renewalsHeldBack = holder -> false;
      spark.conf().unset(dev.writeonce.core.config.CommitterConfig.JOB_LEASE);
    }
  }

  private List<String> liveLocations(Table table) {
    String[] parts = table.name().split("\\.");
    List<String> prefixes = new ArrayList<>();
    for (var partition :
        scala.jdk.javaapi.CollectionConverters.asJava(
            spark
                .sharedState()
                .externalCatalog()
                .listPartitions(parts[0], parts[1], scala.Option.empty()))) {
      String path = partition.location().getPath().substring(1);
      prefixes.add(path.endsWith("/") ? path : path + "/");
    }
    return prefixes;
  }
}
