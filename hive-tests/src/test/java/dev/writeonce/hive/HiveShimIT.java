package dev.writeonce.hive;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.shim.RenameShimFileSystem;
import dev.writeonce.teststore.BucketView;
import dev.writeonce.teststore.EachStore;
import dev.writeonce.teststore.S3Api;
import dev.writeonce.teststore.StoreLifecycle;
import dev.writeonce.teststore.TestStore;
import dev.writeonce.teststore.Traffic;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Real Hive 4.1 (Driver API, Derby metastore, MapReduce local mode) writing native tables to a real
 * store through the rename shim with the module's shipped settings, every statement run twice: on a
 * bucket the shim handles and on one it leaves to plain S3A. Counts come from the store's meter.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@EachStore
class HiveShimIT implements StoreLifecycle {

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(HiveShimIT.class);

  static final String SHIPPED_SETTINGS = "/dev/writeonce/hive/writeonce-hive-site.xml";

  /** The store of the current run, set by {@link #startOn}. */
  private TestStore store;

  private TestStore store() {
    return store;
  }

  private Path scratch;
  private EmbeddedHive hive;
  private String plainBucket;
  private String shimBucket;

  /** One statement, with {@code ${db}} for the database. */
  record Statement(String label, String sql) {}

  /**
   * What one statement cost without and with the shim, and what it did to the data objects of the
   * shim's bucket: objects it wrote (new keys, or new ETags) and objects that went away.
   */
  record Measured(
      Statement statement, Traffic plain, Traffic shim, Set<String> written, Set<String> gone) {}

  @Override
  public void startOn(TestStore store) throws Exception {
    this.store = store;
    scratch = Files.createTempDirectory("writeonce-hive");
    plainBucket = store().newBucket("hive-plain");
    shimBucket = store().newBucket("hive-shim");
    Configuration settings = store().configure(new Configuration(false));
    // Hive writes empty objects (directory markers) with or without the shim.
    store().emptyObjectSettings().forEach(settings::set);
    Map<String, String> shipped = shippedSettings(shimBucket);
    hive = EmbeddedHive.start(settings, scratch, shipped);
    hive.conf().set("hive.exec.dynamic.partition.mode", "nonstrict");
    for (String bucket : List.of(plainBucket, shimBucket)) {
      hive.execute(
          "CREATE DATABASE " + database(bucket) + " LOCATION 's3a://" + bucket + "/warehouse'");
    }
  }

  @Override
  public void stopOn(TestStore store) throws Exception {
    if (hive != null) {
      hive.close();
    }
    if (scratch != null) {
      try (var paths = Files.walk(scratch)) {
        paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
      }
    }
  }

  /** The module's shipped settings, for the one bucket the shim handles here. */
  static Map<String, String> shippedSettings(String shimBucket) throws IOException {
    Configuration shipped = new Configuration(false);
    try (InputStream in = HiveShimIT.class.getResourceAsStream(SHIPPED_SETTINGS)) {
      assertThat(in).as("shipped settings %s", SHIPPED_SETTINGS).isNotNull();
      shipped.addResource(in);
      Map<String, String> settings = new TreeMap<>();
      shipped.forEach(entry -> settings.put(entry.getKey(), entry.getValue()));
      settings.replaceAll((key, value) -> value.replace("WAREHOUSE_BUCKET", shimBucket));
      return settings;
    }
  }

  private static String database(String bucket) {
    return bucket.replace('-', '_');
  }

  private Traffic run(String bucket, String sql) throws IOException {
    Traffic before = store().meter().read();
    hive.execute(sql.replace("${db}", database(bucket)));
    return store().meter().read().minus(before);
  }

  /** Runs one statement with {@code hive.exec.pre.hooks} set to {@code preHooks} for it alone. */
  private Traffic runWithPreHooks(String preHooks, String sql) throws IOException {
    String configured = hive.conf().get("hive.exec.pre.hooks");
    hive.conf().set("hive.exec.pre.hooks", preHooks);
    try {
      Traffic before = store().meter().read();
      hive.execute(sql);
      return store().meter().read().minus(before);
    } finally {
      hive.conf().set("hive.exec.pre.hooks", configured);
    }
  }

  private List<String> rows(String bucket, String sql) {
    return hive.query(sql.replace("${db}", database(bucket)));
  }

  /** ETags of the data objects under the database: no directory markers, nothing staged. */
  private Map<String, String> dataEtags(String bucket) {
    Map<String, String> etags = objectEtags(bucket, "warehouse/");
    etags.keySet().removeIf(key -> key.contains(".hive-staging"));
    return etags;
  }

  /** ETags of every object under the prefix but directory markers, staged objects included. */
  private Map<String, String> objectEtags(String bucket, String prefix) {
    Map<String, String> etags = new TreeMap<>(new BucketView(store(), bucket).etags(prefix));
    etags.keySet().removeIf(key -> key.endsWith("/"));
    return etags;
  }

  /** Data objects under the database, by key below it, with their text. */
  private Map<String, String> dataObjects(String bucket) throws IOException {
    BucketView view = new BucketView(store(), bucket);
    Map<String, String> objects = new TreeMap<>();
    for (String key : view.keys("warehouse/")) {
      if (!key.endsWith("/")) {
        objects.put(key.substring("warehouse/".length()), view.read(key));
      }
    }
    return objects;
  }

  @Test
  void everyKindOfStatementThroughTheShimMatchesPlainS3aWithoutCopyingData() throws Exception {
    List<Statement> statements =
        List.of(
            new Statement("CREATE TABLE", "CREATE TABLE ${db}.t (id INT, name STRING)"),
            new Statement("INSERT INTO", "INSERT INTO ${db}.t VALUES (1, 'a'), (2, 'b')"),
            new Statement("INSERT INTO again (_copy_1)", "INSERT INTO ${db}.t VALUES (3, 'c')"),
            new Statement(
                "INSERT OVERWRITE",
                "INSERT OVERWRITE TABLE ${db}.t SELECT id + 10, name FROM ${db}.t"),
            new Statement(
                "CREATE TABLE, partitioned",
                "CREATE TABLE ${db}.p (id INT, name STRING) PARTITIONED BY (day STRING)"),
            new Statement(
                "INSERT INTO static partition",
                "INSERT INTO ${db}.p PARTITION (day='1') VALUES (1, 'a'), (2, 'b')"),
            new Statement(
                "INSERT OVERWRITE static partition",
                "INSERT OVERWRITE TABLE ${db}.p PARTITION (day='1') VALUES (3, 'c')"),
            new Statement(
                "INSERT INTO dynamic partitions",
                "INSERT INTO ${db}.p PARTITION (day) VALUES (4, 'd', '1'), (5, 'e', '2'),"
                    + " (6, 'f', '3')"),
            new Statement(
                "INSERT OVERWRITE dynamic partitions",
                "INSERT OVERWRITE TABLE ${db}.p PARTITION (day) VALUES (7, 'g', '2'),"
                    + " (8, 'h', '4')"),
            new Statement(
                "CREATE TABLE, two reducers", "CREATE TABLE ${db}.r (id INT, name STRING)"),
            new Statement(
                "INSERT INTO, two reducers",
                "INSERT INTO ${db}.r SELECT id, name FROM ${db}.p DISTRIBUTE BY id"),
            new Statement(
                "CTAS", "CREATE TABLE ${db}.c AS SELECT id, name FROM ${db}.p WHERE day <> '4'"));

    hive.conf().setInt("mapreduce.job.reduces", 2);
    List<Measured> measured = new ArrayList<>();
    for (Statement statement : statements) {
      Traffic plain = run(plainBucket, statement.sql());
      Map<String, String> before = dataEtags(shimBucket);
      Traffic shim = run(shimBucket, statement.sql());
      Map<String, String> after = dataEtags(shimBucket);
      Set<String> written = new TreeSet<>();
      after.forEach(
          (key, etag) -> {
            if (!etag.equals(before.get(key))) {
              written.add(key);
            }
          });
      Set<String> gone = new TreeSet<>(before.keySet());
      gone.removeAll(after.keySet());
      LOG.info("{}: plain {}, shim {}, wrote {}", statement.label(), plain, shim, written);
      measured.add(new Measured(statement, plain, shim, written, gone));
    }

    Map<String, List<String>> expected = new LinkedHashMap<>();
    expected.put("SELECT id, name FROM ${db}.t ORDER BY id", List.of("11\ta", "12\tb", "13\tc"));
    expected.put(
        "SELECT id, name, day FROM ${db}.p ORDER BY id",
        List.of("3\tc\t1", "4\td\t1", "6\tf\t3", "7\tg\t2", "8\th\t4"));
    expected.put(
        "SELECT id, name FROM ${db}.r ORDER BY id",
        List.of("3\tc", "4\td", "6\tf", "7\tg", "8\th"));
    expected.put(
        "SELECT id, name FROM ${db}.c ORDER BY id", List.of("3\tc", "4\td", "6\tf", "7\tg"));
    for (Map.Entry<String, List<String>> query : expected.entrySet()) {
      assertThat(rows(shimBucket, query.getKey()))
          .as("through the shim: %s", query.getKey())
          .containsExactlyElementsOf(query.getValue());
      assertThat(rows(plainBucket, query.getKey()))
          .as("on plain S3A: %s", query.getKey())
          .containsExactlyElementsOf(query.getValue());
    }

    Map<String, String> shimObjects = dataObjects(shimBucket);
    assertThat(shimObjects).as("objects through the shim").isEqualTo(dataObjects(plainBucket));
    assertThat(shimObjects.keySet())
        .as("Hive's names, _copy_K and the second reducer's file included")
        .contains("p/day=1/000000_0", "p/day=1/000000_0_copy_1", "r/000000_0", "r/000001_0")
        .noneMatch(key -> key.contains(".hive-staging"));

    for (Measured m : measured) {
      assertThat(m.shim().requests(S3Api.COPY_OBJECT))
          .as("COPY through the shim in %s", m.statement().label())
          .isZero();
      assertThat(m.shim().requests(S3Api.COMPLETE_MULTIPART_UPLOAD))
          .as(
              "uploads completed in %s: one per data object it wrote, %s, none deleted after",
              m.statement().label(), m.written())
          .isEqualTo(m.written().size());
      if (!m.statement().sql().contains("OVERWRITE")) {
        assertThat(m.gone()).as("data objects gone in %s", m.statement().label()).isEmpty();
      }
    }
    List<String> candidates = new ArrayList<>();
    for (String key : shimObjects.keySet()) {
      candidates.add("warehouse/" + key);
      candidates.add("warehouse/" + key + "_copy_1");
      candidates.add("warehouse/" + key + "_copy_2");
    }
    assertThat(new BucketView(store(), shimBucket).openUploads(candidates))
        .as("open uploads")
        .isEmpty();
    writeTable(measured);
  }

  @Test
  void otherAttemptsOfTasksLeaveOneFilePerCommittedTaskAndNoOpenUpload() throws Exception {
    String database = database(shimBucket) + "_retry";
    hive.execute(
        "CREATE DATABASE " + database + " LOCATION 's3a://" + shimBucket + "/retry-warehouse'");
    String table = database + ".retried";
    hive.execute("CREATE TABLE " + table + " (id INT, name STRING)");
    RenameShimFileSystem fs =
        (RenameShimFileSystem) FileSystem.get(URI.create("s3a://" + shimBucket + "/"), hive.conf());
    long abortedBefore = fs.shimStatistics().uploadsAborted();
    long missesBefore = fs.shimStatistics().misses();
    StrayAttemptHook.content = "1\u0001a\n";
    Traffic traffic =
        runWithPreHooks(
            hive.conf().get("hive.exec.pre.hooks") + "," + StrayAttemptHook.class.getName(),
            "INSERT INTO " + table + " VALUES (1, 'a')");

    assertThat(hive.query("SELECT id, name FROM " + table)).containsExactly("1\ta");
    Map<String, String> files = objectEtags(shimBucket, "retry-warehouse/");
    assertThat(files.keySet())
        .as("one file for task 000000, from one of its two attempts")
        .hasSize(1)
        .allMatch(key -> key.matches("retry-warehouse/retried/000000_[01]"));
    assertThat(
            new BucketView(store(), shimBucket)
                .openUploads(
                    List.of(
                        "retry-warehouse/retried/000000_0",
                        "retry-warehouse/retried/000000_1",
                        "retry-warehouse/retried/000001_0")))
        .as("open uploads")
        .isEmpty();
    assertThat(fs.shimStatistics().uploadsAborted() - abortedBefore)
        .as(
            "aborted: the duplicate attempt's upload when Hive deleted its file, and the dead"
                + " attempt's when Hive deleted the staging directory")
        .isEqualTo(2);
    assertThat(fs.shimStatistics().misses()).isEqualTo(missesBefore);
    assertThat(traffic.requests(S3Api.COPY_OBJECT)).isZero();
    assertThat(traffic.requests(S3Api.COMPLETE_MULTIPART_UPLOAD)).isEqualTo(1);
  }

  @Test
  void withoutTheHookAnOverwriteIsStillRightAndCopiesEachFileOnce() throws Exception {
    String database = database(shimBucket) + "_nohook";
    hive.execute(
        "CREATE DATABASE " + database + " LOCATION 's3a://" + shimBucket + "/nohook-warehouse'");
    String table = database + ".t";
    hive.execute("CREATE TABLE " + table + " (id INT, name STRING)");
    hive.execute("INSERT INTO " + table + " VALUES (1, 'a')");
    RenameShimFileSystem fs =
        (RenameShimFileSystem) FileSystem.get(URI.create("s3a://" + shimBucket + "/"), hive.conf());
    long missesBefore = fs.shimStatistics().misses();
    Traffic traffic = runWithPreHooks("", "INSERT OVERWRITE TABLE " + table + " VALUES (2, 'b')");

    assertThat(hive.query("SELECT id, name FROM " + table)).containsExactly("2\tb");
    Map<String, String> files = objectEtags(shimBucket, "nohook-warehouse/t/");
    assertThat(files.keySet()).containsExactly("nohook-warehouse/t/000000_0");
    assertThat(traffic.requests(S3Api.COPY_OBJECT))
        .as("the upload went to 000000_0_copy_1, as for INSERT INTO, and was copied into place")
        .isEqualTo(1);
    assertThat(fs.shimStatistics().misses() - missesBefore).isEqualTo(1);
    assertThat(
            new BucketView(store(), shimBucket)
                .openUploads(
                    List.of("nohook-warehouse/t/000000_0", "nohook-warehouse/t/000000_0_copy_1")))
        .isEmpty();
  }

  @Test
  void twoInsertIntoStatementsAtOnceOnOneTableBothSucceedWithDistinctNamesAndNoCopy()
      throws Exception {
    String database = database(shimBucket) + "_concurrent";
    hive.execute(
        "CREATE DATABASE "
            + database
            + " LOCATION 's3a://"
            + shimBucket
            + "/concurrent-warehouse'");
    String table = database + ".t";
    hive.execute("CREATE TABLE " + table + " (id INT, name STRING)");
    hive.execute("INSERT INTO " + table + " VALUES (0, 'seed')");
    RenameShimFileSystem fs =
        (RenameShimFileSystem) FileSystem.get(URI.create("s3a://" + shimBucket + "/"), hive.conf());
    long missesBefore = fs.shimStatistics().misses();
    long refusedBefore = fs.shimStatistics().missesRefused();
    Map<String, String> together =
        Map.of(
            "hive.exec.pre.hooks",
            StartTogetherHook.class.getName() + "," + hive.conf().get("hive.exec.pre.hooks"));
    StartTogetherHook.barrier = new java.util.concurrent.CyclicBarrier(2);
    Traffic before = store().meter().read();
    ExecutorService sessions = Executors.newFixedThreadPool(2);
    try {
      List<Future<?>> statements = new ArrayList<>();
      for (String row : List.of("(1, 'a')", "(2, 'b')")) {
        statements.add(
            sessions.submit(
                () -> {
                  hive.executeInNewSession("INSERT INTO " + table + " VALUES " + row, together);
                  return null;
                }));
      }
      for (Future<?> statement : statements) {
        statement.get(10, TimeUnit.MINUTES);
      }
    } finally {
      StartTogetherHook.barrier = null;
      sessions.shutdownNow();
    }
    Traffic traffic = store().meter().read().minus(before);

    assertThat(hive.query("SELECT id, name FROM " + table + " ORDER BY id"))
        .as("every row once")
        .containsExactly("0\tseed", "1\ta", "2\tb");
    assertThat(objectEtags(shimBucket, "concurrent-warehouse/").keySet())
        .as("three files with Hive's names, the table's insert lock gone")
        .containsExactly(
            "concurrent-warehouse/t/000000_0",
            "concurrent-warehouse/t/000000_0_copy_1",
            "concurrent-warehouse/t/000000_0_copy_2");
    assertThat(traffic.requests(S3Api.COPY_OBJECT)).as("COPY").isZero();
    assertThat(traffic.requests(S3Api.COMPLETE_MULTIPART_UPLOAD)).isEqualTo(2);
    assertThat(fs.shimStatistics().misses()).isEqualTo(missesBefore);
    assertThat(fs.shimStatistics().missesRefused()).isEqualTo(refusedBefore);
    assertThat(
            new BucketView(store(), shimBucket)
                .openUploads(
                    List.of(
                        "concurrent-warehouse/t/000000_0_copy_1",
                        "concurrent-warehouse/t/000000_0_copy_2",
                        "concurrent-warehouse/t/000000_0_copy_3")))
        .as("open uploads")
        .isEmpty();
  }

  private void writeTable(List<Measured> measured) throws IOException {
    StringBuilder table = new StringBuilder();
    table.append(
        String.format(
            Locale.ROOT,
            "Store: %s. Hive 4.1.0, MapReduce local mode, text tables; one run.%n%n",
            store().name()));
    table.append(
        "| Statement | Plain S3A: requests | COPY | DeleteObject | Shim: requests | COPY |"
            + " DeleteObject | CompleteMultipartUpload |\n");
    table.append("|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (Measured m : measured) {
      table.append(
          String.format(
              Locale.ROOT,
              "| %s | %d | %d | %d | %d | %d | %d | %d |%n",
              m.statement().label(),
              m.plain().totalRequests(),
              m.plain().requests(S3Api.COPY_OBJECT),
              m.plain().requests(S3Api.DELETE_OBJECT),
              m.shim().totalRequests(),
              m.shim().requests(S3Api.COPY_OBJECT),
              m.shim().requests(S3Api.DELETE_OBJECT),
              m.shim().requests(S3Api.COMPLETE_MULTIPART_UPLOAD)));
    }
    Path out = Path.of("target", "hive-" + store().name() + ".md");
    Files.writeString(out, table.toString());
    LOG.info("Hive statements on {}:\n{}", store().name(), table);
  }
}
