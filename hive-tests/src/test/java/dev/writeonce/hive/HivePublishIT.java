package dev.writeonce.hive;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.publish.Publication;
import dev.writeonce.hive.EmbeddedHive.Engine;
import dev.writeonce.teststore.BucketView;
import dev.writeonce.teststore.EachStore;
import dev.writeonce.teststore.S3Api;
import dev.writeonce.teststore.StoreLifecycle;
import dev.writeonce.teststore.TestStore;
import dev.writeonce.teststore.Traffic;
import java.io.BufferedReader;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.metastore.HiveMetaStoreClient;
import org.apache.hadoop.hive.metastore.IMetaStoreClient;
import org.apache.hadoop.hive.metastore.api.Partition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Metastore publish mode through Hive 4 (Driver API, Derby metastore, MapReduce or Tez in local
 * mode) and the shim: a reader that goes through the metastore, as every engine does, sees each
 * statement whole; a cut before the metastore call leaves the table as it was, a cut after it the
 * new snapshot whole.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@EachStore
class HivePublishIT implements StoreLifecycle {

  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(HivePublishIT.class);

  private TestStore store;
  private EmbeddedHive hive;
  private String bucket;

  /** What the oracle saw per engine and mode, for the figures file. */
  private final List<String> figures = new ArrayList<>();

  @Override
  public void startOn(TestStore store) throws Exception {
    this.store = store;
    figures.clear();
    bucket = store.newBucket("hive-publish");
    Configuration settings = store.configure(new Configuration(false));
    store.emptyObjectSettings().forEach(settings::set);
    hive = EmbeddedHive.start(settings, HiveShimIT.shippedSettings(bucket));
    hive.conf().set("hive.exec.dynamic.partition.mode", "nonstrict");
    hive.execute("CREATE DATABASE pub LOCATION 's3a://" + bucket + "/warehouse/'");
  }

  @Override
  public void stopOn(TestStore store) throws Exception {
    Path out = Path.of("target", "hive-publish-" + store.name() + ".md");
    Files.createDirectories(out.getParent());
    Files.write(out, figures);
    if (hive != null) {
      hive.close();
    }
  }

  @AfterEach
  void backToDefaults() {
    hive.use(Engine.MR);
    hive.conf().unset(Publication.MODE);
    hive.conf().unset(Publication.GRACE);
    hive.conf().set("hive.stats.autogather", "false");
    Publication.stepHook = step -> {};
  }

  /** One statement and what it does to the rows of each partition. */
  record Step(String label, String sql, Consumer<Map<String, Long>> effect) {}

  /**
   * New partitions, an append to one, a dynamic overwrite of existing and new ones, a static
   * overwrite, and an append to existing and new partitions at once.
   */
  private static List<Step> steps(String table) {
    return List.of(
        new Step(
            "INSERT INTO new partitions",
            "INSERT INTO " + table + " PARTITION (p) VALUES (1, 0), (2, 1), (3, 2), (4, 0)",
            rows -> {
              rows.put("p=0", 2L);
              rows.put("p=1", 1L);
              rows.put("p=2", 1L);
            }),
        new Step(
            "INSERT INTO an existing partition",
            "INSERT INTO " + table + " PARTITION (p=1) VALUES (5), (6)",
            rows -> rows.merge("p=1", 2L, Long::sum)),
        new Step(
            "dynamic INSERT OVERWRITE of existing and new partitions",
            "INSERT OVERWRITE TABLE " + table + " PARTITION (p) VALUES (7, 0), (8, 1), (9, 3)",
            rows -> {
              rows.put("p=0", 1L);
              rows.put("p=1", 1L);
              rows.put("p=3", 1L);
            }),
        new Step(
            "static INSERT OVERWRITE",
            "INSERT OVERWRITE TABLE " + table + " PARTITION (p=2) VALUES (10), (11), (12)",
            rows -> rows.put("p=2", 3L)),
        new Step(
            "INSERT INTO existing and new partitions",
            "INSERT INTO " + table + " PARTITION (p) VALUES (13, 0), (14, 3), (15, 4)",
            rows -> {
              rows.merge("p=0", 1L, Long::sum);
              rows.merge("p=3", 1L, Long::sum);
              rows.put("p=4", 1L);
            }));
  }

  @ParameterizedTest(name = "on {0}")
  @EnumSource(Engine.class)
  void aReaderThroughTheMetastoreSeesEachStatementWholeInPublishMode(Engine engine)
      throws Exception {
    hive.use(engine);
    hive.conf().set(Publication.MODE, "metastore");
    // Hive's default: the statistics task of a published load is dropped, and the published
    // partitions' statistics are marked stale, so that count(*) is not answered from them.
    hive.conf().set("hive.stats.autogather", "true");
    String table = "pub.watched_" + engine.setting();
    Oracle oracle = watch(table, engine);
    assertThat(oracle.mismatches).as("observations matching no snapshot").isEmpty();
    assertThat(oracle.observations).as("observations").isGreaterThanOrEqualTo(50);
    assertThat(oracle.copies.get(1)).as("COPY of the append to one partition").isEqualTo(1);
    assertThat(oracle.copies.get(2)).as("COPY of the dynamic overwrite").isZero();
    assertThat(oracle.copies.get(3)).as("COPY of the static overwrite").isZero();
    assertThat(oracle.copies.get(4)).as("COPY of the append to two partitions").isEqualTo(2);
    assertThat(hive.query("SELECT count(*) FROM " + table)).containsExactly("9");
    // Every partition reads a generation of its own statement; nothing but generations is data.
    for (String location : partitionLocations(table).values()) {
      assertThat(location).contains("/_generations/");
    }
    assertThat(new BucketView(store, bucket).openUploadsUnder("warehouse/")).isEmpty();
  }

  @ParameterizedTest(name = "on {0}")
  @EnumSource(
      value = Engine.class,
      names = {"MR"})
  void withoutTheModeTheSameReaderSeesStatementsHalfDone(Engine engine) throws Exception {
    hive.use(engine);
    String table = "pub.contrast_" + engine.setting();
    Oracle oracle = watch(table, engine);
    // The contrast is recorded, not asserted: how often a reader lands in a move is timing.
    assertThat(oracle.observations).as("observations").isGreaterThanOrEqualTo(50);
  }

  @ParameterizedTest(name = "on {0}")
  @EnumSource(Engine.class)
  void aCutBeforeTheMetastoreCallLeavesTheTableAsItWasAndAfterItTheNewSnapshotWhole(Engine engine)
      throws Exception {
    hive.use(engine);
    hive.conf().set(Publication.MODE, "metastore");
    hive.conf().set(Publication.GRACE, "0s");
    String table = "pub.cut_" + engine.setting();
    String prefix = "warehouse/cut_" + engine.setting() + "/";
    hive.execute("CREATE TABLE " + table + " (v INT) PARTITIONED BY (p INT)");
    hive.execute("INSERT INTO " + table + " PARTITION (p=0) VALUES (1)");

    for (String step : List.of("committed", "copied")) {
      Publication.stepHook = cutAt(step);
      assertThatThrownBy(
              () -> hive.execute("INSERT OVERWRITE TABLE " + table + " PARTITION (p=0) VALUES (2)"))
          .hasMessageContaining("cut at " + step);
      Publication.stepHook = any -> {};
      assertThat(read(table)).as("after a cut at %s", step).isEqualTo(Map.of("p=0", 1L));
      // The failure hook removed the statement's unpublished generation.
      assertThat(dataKeysOutside(prefix, partitionLocations(table).values()))
          .as("data outside the live locations after a cut at %s", step)
          .isEmpty();
    }

    Publication.stepHook = cutAt("published");
    assertThatThrownBy(
            () ->
                hive.execute(
                    "INSERT OVERWRITE TABLE " + table + " PARTITION (p=0) VALUES (3), (4), (5)"))
        .hasMessageContaining("cut at published");
    Publication.stepHook = any -> {};
    assertThat(read(table)).as("after a cut at published").isEqualTo(Map.of("p=0", 3L));

    // The table takes the next statement, and its publication removes what the records name.
    hive.execute("INSERT INTO " + table + " PARTITION (p=0) VALUES (6)");
    assertThat(read(table)).isEqualTo(Map.of("p=0", 4L));
    assertThat(hive.query("SELECT count(*) FROM " + table)).containsExactly("4");
    assertThat(new BucketView(store, bucket).openUploadsUnder(prefix)).isEmpty();
  }

  @ParameterizedTest(name = "on {0}")
  @EnumSource(Engine.class)
  void anUnpartitionedTableMovesToEachStatementsGenerationAndDropsTheOldOnes(Engine engine)
      throws Exception {
    hive.use(engine);
    hive.conf().set(Publication.MODE, "metastore");
    hive.conf().set(Publication.GRACE, "0s");
    String table = "pub.plain_" + engine.setting();
    String prefix = "warehouse/plain_" + engine.setting() + "/";
    hive.execute("CREATE TABLE " + table + " (v INT)");
    hive.execute("INSERT INTO " + table + " VALUES (1), (2)");
    Traffic before = store.meter().read();
    hive.execute("INSERT INTO " + table + " VALUES (3)");
    Traffic append = store.meter().read().minus(before);
    hive.execute("INSERT OVERWRITE TABLE " + table + " VALUES (4), (5)");
    hive.execute("INSERT INTO " + table + " VALUES (6)");

    assertThat(append.requests(S3Api.COPY_OBJECT)).as("COPY of the append").isEqualTo(1);
    assertThat(hive.query("SELECT v FROM " + table + " ORDER BY v")).containsExactly("4", "5", "6");
    Set<String> runs = new TreeSet<>();
    for (String key : new BucketView(store, bucket).keys(prefix + "_generations/")) {
      String run = key.substring((prefix + "_generations/").length()).split("/")[0];
      runs.add(run);
    }
    // Four statements: the last two generations stay (one live, one within the last record),
    // the older ones were removed by the statements after them.
    runs.removeIf(run -> run.isEmpty() || run.startsWith("_"));
    assertThat(runs).as("generations left").hasSize(2);
    assertThat(new BucketView(store, bucket).keys(prefix + "_generations/_retired/")).hasSize(1);
    assertThat(new BucketView(store, bucket).openUploadsUnder(prefix)).isEmpty();
  }

  /**
   * Two sessions append to one partition at once: the first to copy the partition pauses before its
   * metastore call, so without the table's publication lock the other would copy the same files and
   * its call would drop the first statement's rows.
   */
  @Test
  void twoAppendsToOnePartitionAtOnceFromTwoSessionsKeepEveryRowOfBoth() throws Exception {
    String table = "pub.together";
    hive.execute("CREATE TABLE " + table + " (v INT) PARTITIONED BY (p INT)");
    hive.conf().set(Publication.MODE, "metastore");
    hive.execute("INSERT INTO " + table + " PARTITION (p=0) VALUES (1)");
    java.util.concurrent.atomic.AtomicBoolean paused =
        new java.util.concurrent.atomic.AtomicBoolean();
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
    List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
    List<Thread> sessions = new ArrayList<>();
    for (String rows : List.of("(2), (3)", "(4), (5), (6)")) {
      Thread session =
          new Thread(
              () -> {
                try {
                  hive.executeInNewSession(
                      "INSERT INTO " + table + " PARTITION (p=0) VALUES " + rows,
                      Map.of(Publication.MODE, "metastore"));
                } catch (Throwable e) {
                  failures.add(e);
                }
              });
      session.start();
      sessions.add(session);
    }
    for (Thread session : sessions) {
      session.join(300_000);
    }
    assertThat(failures).isEmpty();
    assertThat(paused).isTrue();
    assertThat(read(table)).isEqualTo(Map.of("p=0", 6L));
  }

  /**
   * A statement's lease lapses between its copy and its metastore call (its renewals held back, as
   * in a frozen HiveServer2); another session's append takes the lock over and publishes. The first
   * fails, the winner's rows stay, and nothing of the loser's is left.
   */
  @Test
  void aStatementWhoseLeaseLapsesMidStatementFailsAndTheWinnersRowsStay() throws Exception {
    String table = "pub.lapsed";
    String prefix = "warehouse/lapsed/";
    hive.execute("CREATE TABLE " + table + " (v INT) PARTITIONED BY (p INT)");
    hive.conf().set(Publication.MODE, "metastore");
    hive.conf().set(Publication.GRACE, "0s");
    hive.execute("INSERT INTO " + table + " PARTITION (p=0) VALUES (1)");
    Map<String, String> session =
        Map.of(
            Publication.MODE,
            "metastore",
            Publication.GRACE,
            "0s",
            dev.writeonce.core.config.CommitterConfig.JOB_LEASE,
            "2s");
    java.util.concurrent.atomic.AtomicBoolean paused =
        new java.util.concurrent.atomic.AtomicBoolean();
    List<Throwable> winnerFailure = java.util.Collections.synchronizedList(new ArrayList<>());
    Publication.stepHook =
        step -> {
          if (!step.equals("copied") || !paused.compareAndSet(false, true)) {
            return;
          }
          dev.writeonce.core.lease.LeaseLock.renewalsHeldBack = holder -> true;
          Thread winner =
              new Thread(
                  () -> {
                    try {
                      hive.executeInNewSession(
                          "INSERT INTO " + table + " PARTITION (p=0) VALUES (20), (21)", session);
                    } catch (Throwable e) {
                      winnerFailure.add(e);
                    }
                  });
          winner.start();
          try {
            winner.join(300_000);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          } finally {
            dev.writeonce.core.lease.LeaseLock.renewalsHeldBack = holder -> false;
          }
        };
    try {
      List<Throwable> loserFailure = java.util.Collections.synchronizedList(new ArrayList<>());
      Thread loser =
          new Thread(
              () -> {
                try {
                  hive.executeInNewSession(
                      "INSERT INTO " + table + " PARTITION (p=0) VALUES (10)", session);
                } catch (Throwable e) {
                  loserFailure.add(e);
                }
              });
      loser.start();
      loser.join(300_000);
      assertThat(paused).isTrue();
      assertThat(winnerFailure).isEmpty();
      assertThat(loserFailure).hasSize(1);
      assertThat(read(table)).isEqualTo(Map.of("p=0", 3L));
    } finally {
      Publication.stepHook = any -> {};
      dev.writeonce.core.lease.LeaseLock.renewalsHeldBack = holder -> false;
    }
    // Grace 0: the next statement removes what is due; nothing but named generations and their
    // records is left, and no upload stays open.
    hive.execute("INSERT INTO " + table + " PARTITION (p=1) VALUES (30)");
    assertThat(dataKeysOutside(prefix, partitionLocations(table).values())).isEmpty();
    assertThat(new BucketView(store, bucket).openUploadsUnder(prefix)).isEmpty();
  }

  private static Consumer<String> cutAt(String step) {
    return reached -> {
      if (reached.equals(step)) {
        throw new IllegalStateException("cut at " + step);
      }
    };
  }

  /** What the oracle saw while the steps ran. */
  private record Oracle(long observations, List<String> mismatches, List<Long> copies) {}

  private Oracle watch(String table, Engine engine) throws Exception {
    hive.execute("CREATE TABLE " + table + " (v INT) PARTITIONED BY (p INT)");
    Map<String, Long> model = new TreeMap<>();
    Set<Map<String, Long>> snapshots = java.util.concurrent.ConcurrentHashMap.newKeySet();
    snapshots.add(Map.copyOf(model));
    List<String> mismatches = java.util.Collections.synchronizedList(new ArrayList<>());
    AtomicBoolean done = new AtomicBoolean();
    // The reader pauses while the store's meter is read: Ceph RGW's usage log settles only when
    // no request is arriving. Its requests during a statement count with it, but never as COPY.
    java.util.concurrent.Semaphore reading = new java.util.concurrent.Semaphore(1, true);
    HiveConf readerConf = new HiveConf(hive.conf());
    ExecutorService reader = Executors.newSingleThreadExecutor();
    List<Long> copies = new ArrayList<>();
    long observations;
    long started = System.nanoTime();
    Future<Long> watching =
        reader.submit(
            () -> {
              long seen = 0;
              IMetaStoreClient client = new HiveMetaStoreClient(readerConf);
              while (!done.get()) {
                Map<String, Long> observed;
                reading.acquireUninterruptibly();
                try {
                  observed = observe(client, readerConf, table);
                } catch (IOException e) {
                  // A file listed and then gone, or replaced under the same name (S3A's change
                  // detection refuses to read on): a read that failed.
                  mismatches.add("failed read: " + e.getMessage());
                  seen++;
                  continue;
                } finally {
                  reading.release();
                }
                seen++;
                if (!snapshots.contains(observed)) {
                  mismatches.add(observed.toString());
                }
              }
              client.close();
              return seen;
            });
    try {
      for (Step step : steps(table)) {
        Traffic before = meterWhileReaderWaits(reading);
        step.effect().accept(model);
        // The snapshot is admitted before the statement runs: the reader may see it any time
        // from the statement's commit on.
        snapshots.add(Map.copyOf(model));
        hive.execute(step.sql());
        copies.add(meterWhileReaderWaits(reading).minus(before).requests(S3Api.COPY_OBJECT));
        assertThat(read(table)).as("after %s", step.label()).isEqualTo(model);
      }
    } finally {
      done.set(true);
      observations = watching.get(2, TimeUnit.MINUTES);
      reader.shutdownNow();
    }
    long failedReads = mismatches.stream().filter(m -> m.startsWith("failed read")).count();
    String line =
        String.format(
            "| %s | %s | %s | %d | %d | %d | %d | %d s |",
            store.name(),
            engine.setting(),
            hive.conf().get(Publication.MODE, "files"),
            steps(table).size(),
            observations,
            mismatches.size(),
            failedReads,
            TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started));
    figures.add(line);
    LOG.info("oracle {}: {} observations, mismatched {}", line, observations, mismatches);
    return new Oracle(observations, List.copyOf(mismatches), copies);
  }

  private Traffic meterWhileReaderWaits(java.util.concurrent.Semaphore reading) throws IOException {
    reading.acquireUninterruptibly();
    try {
      return store.meter().read();
    } finally {
      reading.release();
    }
  }

  /** Rows by partition with rows, through the metastore, as of now. */
  private Map<String, Long> read(String table) throws Exception {
    HiveConf conf = new HiveConf(hive.conf());
    IMetaStoreClient client = new HiveMetaStoreClient(conf);
    try {
      return observe(client, conf, table);
    } finally {
      client.close();
    }
  }

  /**
   * One pass of a reader that goes through the metastore: the partitions and their locations, then
   * the files each location holds (names starting with '_' or '.' skipped), then their lines. A
   * location that does not exist is an empty partition; a file listed and then gone throws.
   */
  private static Map<String, Long> observe(IMetaStoreClient client, HiveConf conf, String table)
      throws Exception {
    String[] name = table.split("\\.");
    Map<String, Long> rows = new TreeMap<>();
    for (Partition partition : client.listPartitions(name[0], name[1], (short) -1)) {
      String location = partition.getSd().getLocation();
      long count = countLines(conf, location);
      if (count > 0) {
        rows.put("p=" + partition.getValues().get(0), count);
      }
    }
    return rows;
  }

  private static long countLines(HiveConf conf, String location) throws IOException {
    org.apache.hadoop.fs.Path directory = new org.apache.hadoop.fs.Path(location);
    FileSystem fs = directory.getFileSystem(conf);
    FileStatus[] files;
    try {
      files = fs.listStatus(directory);
    } catch (FileNotFoundException e) {
      return 0;
    }
    long count = 0;
    for (FileStatus file : files) {
      String fileName = file.getPath().getName();
      if (!file.isFile() || fileName.startsWith("_") || fileName.startsWith(".")) {
        continue;
      }
      try (BufferedReader in =
          new BufferedReader(
              new InputStreamReader(fs.open(file.getPath()), StandardCharsets.UTF_8))) {
        count += in.lines().count();
      } catch (java.io.UncheckedIOException e) {
        // The stream opens lazily: a file listed and then gone fails on its first read.
        throw e.getCause();
      }
    }
    return count;
  }

  private Map<String, String> partitionLocations(String table) throws Exception {
    String[] name = table.split("\\.");
    Map<String, String> locations = new TreeMap<>();
    IMetaStoreClient client = new HiveMetaStoreClient(new HiveConf(hive.conf()));
    try {
      for (Partition partition : client.listPartitions(name[0], name[1], (short) -1)) {
        locations.put("p=" + partition.getValues().get(0), partition.getSd().getLocation());
      }
    } finally {
      client.close();
    }
    return locations;
  }

  /** Data objects under the prefix that no live location holds: no record, lock or marker. */
  private List<String> dataKeysOutside(String prefix, java.util.Collection<String> live) {
    List<String> outside = new ArrayList<>();
    for (String key : new BucketView(store, bucket).keys(prefix)) {
      String relative = key.substring(prefix.length());
      if (key.endsWith("/")
          || relative.startsWith("_generations/_retired/")
          || relative.contains("_writeonce-insert-lock")
          || relative.contains(".hive-staging")) {
        continue;
      }
      boolean inLive =
          live.stream().anyMatch(l -> ("s3a://" + bucket + "/" + key).startsWith(l + "/"));
      if (!inLive) {
        outside.add(key);
      }
    }
    return outside;
  }
}
