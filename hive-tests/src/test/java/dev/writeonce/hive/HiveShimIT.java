package dev.writeonce.hive;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.hive.EmbeddedHive.Engine;
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
import org.apache.hive.common.util.HiveVersionInfo;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Real Hive 4 (Driver API, Derby metastore, MapReduce or Tez in local mode) writing native tables
 * to a real store through the rename shim with the module's shipped settings, every statement run
 * twice: on a bucket the shim handles and on one it leaves to plain S3A. Counts come from the
 * store's meter.
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
      Statement statement,
      Traffic plain,
      Traffic shim,
      Set<String> written,
      Set<String> gone,
      long plainMillis,
      long shimMillis) {}

  @Override
  public void startOn(TestStore store) throws Exception {
    this.store = store;
    plainBucket = store().newBucket("hive-plain");
    shimBucket = store().newBucket("hive-shim");
    Configuration settings = store().configure(new Configuration(false));
    // Hive writes empty objects (directory markers) with or without the shim.
    store().emptyObjectSettings().forEach(settings::set);
    Map<String, String> shipped = shippedSettings(shimBucket);
    hive = EmbeddedHive.start(settings, shipped);
    hive.conf().set("hive.exec.dynamic.partition.mode", "nonstrict");
  }

  @Override
  public void stopOn(TestStore store) throws Exception {
    if (hive != null) {
      hive.close();
    }
  }

  @AfterEach
  void backToMapReduce() {
    hive.use(Engine.MR);
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

  /** The database of a bucket's statements on one engine, and where its tables live. */
  private static String database(String bucket, Engine engine) {
    return database(bucket) + "_" + engine.setting();
  }

  private static String warehouse(Engine engine) {
    return engine.setting() + "-warehouse/";
  }

  private Traffic run(String bucket, Engine engine, String sql) throws IOException {
    Traffic before = store().meter().read();
    hive.execute(sql.replace("${db}", database(bucket, engine)));
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

  private List<String> rows(String bucket, Engine engine, String sql) {
    return hive.query(sql.replace("${db}", database(bucket, engine)));
  }

  /** ETags of the data objects under the prefix: no directory markers, nothing staged. */
  private Map<String, String> dataEtags(String bucket, String prefix) {
    Map<String, String> etags = objectEtags(bucket, prefix);
    etags.keySet().removeIf(key -> key.contains(".hive-staging"));
    return etags;
  }

  /** ETags of every object under the prefix but directory markers, staged objects included. */
  private Map<String, String> objectEtags(String bucket, String prefix) {
    Map<String, String> etags = new TreeMap<>(new BucketView(store(), bucket).etags(prefix));
    etags.keySet().removeIf(key -> key.endsWith("/"));
    return etags;
  }

  /** Data objects under the prefix, by key below it, with their text. */
  private Map<String, String> dataObjects(String bucket, String prefix) throws IOException {
    BucketView view = new BucketView(store(), bucket);
    Map<String, String> objects = new TreeMap<>();
    for (String key : view.keys(prefix)) {
      if (!key.endsWith("/")) {
        objects.put(key.substring(prefix.length()), view.read(key));
      }
    }
    return objects;
  }

  @ParameterizedTest(name = "on {0}")
  @EnumSource(Engine.class)
  void everyKindOfStatementThroughTheShimMatchesPlainS3aWithoutCopyingData(Engine engine)
      throws Exception {
    String warehouse = warehouse(engine);
    for (String bucket : List.of(plainBucket, shimBucket)) {
      hive.execute(
          "CREATE DATABASE "
              + database(bucket, engine)
              + " LOCATION 's3a://"
              + bucket
              + "/"
              + warehouse
              + "'");
    }
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
    hive.use(engine);
    List<Measured> measured = new ArrayList<>();
    for (Statement statement : statements) {
      measured.add(measure(statement, engine));
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
      assertThat(rows(shimBucket, engine, query.getKey()))
          .as("through the shim: %s", query.getKey())
          .containsExactlyElementsOf(query.getValue());
      assertThat(rows(plainBucket, engine, query.getKey()))
          .as("on plain S3A: %s", query.getKey())
          .containsExactlyElementsOf(query.getValue());
    }

    Map<String, String> shimObjects = dataObjects(shimBucket, warehouse);
    assertThat(shimObjects)
        .as("objects through the shim")
        .isEqualTo(dataObjects(plainBucket, warehouse));
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
      candidates.add(warehouse + key);
      candidates.add(warehouse + key + "_copy_1");
      candidates.add(warehouse + key + "_copy_2");
    }
    assertThat(new BucketView(store(), shimBucket).openUploads(candidates))
        .as("open uploads")
        .isEmpty();
    writeTable(engine, measured);
  }

  @ParameterizedTest(name = "on {0}")
  @EnumSource(Engine.class)
  void otherAttemptsOfTasksLeaveOneFilePerCommittedTaskAndNoOpenUpload(Engine engine)
      throws Exception {
    hive.use(engine);
    String database = database(shimBucket, engine) + "_retry";
    String prefix = engine.setting() + "-retry-warehouse/";
    hive.execute(
        "CREATE DATABASE " + database + " LOCATION 's3a://" + shimBucket + "/" + prefix + "'");
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
    Map<String, String> files = objectEtags(shimBucket, prefix);
    assertThat(files.keySet())
        .as("one file for task 000000, from one of its two attempts")
        .hasSize(1)
        .allMatch(key -> key.matches(prefix + "retried/000000_[01]"));
    assertThat(
            new BucketView(store(), shimBucket)
                .openUploads(
                    List.of(
                        prefix + "retried/000000_0",
                        prefix + "retried/000000_1",
                        prefix + "retried/000001_0")))
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

  @ParameterizedTest(name = "on {0}")
  @EnumSource(Engine.class)
  void withoutTheHookAnOverwriteIsStillRightAndCopiesEachFileOnce(Engine engine) throws Exception {
    hive.use(engine);
    String database = database(shimBucket, engine) + "_nohook";
    String prefix = engine.setting() + "-nohook-warehouse/";
    hive.execute(
        "CREATE DATABASE " + database + " LOCATION 's3a://" + shimBucket + "/" + prefix + "'");
    String table = database + ".t";
    hive.execute("CREATE TABLE " + table + " (id INT, name STRING)");
    hive.execute("INSERT INTO " + table + " VALUES (1, 'a')");
    RenameShimFileSystem fs =
        (RenameShimFileSystem) FileSystem.get(URI.create("s3a://" + shimBucket + "/"), hive.conf());
    long missesBefore = fs.shimStatistics().misses();
    Traffic traffic = runWithPreHooks("", "INSERT OVERWRITE TABLE " + table + " VALUES (2, 'b')");

    assertThat(hive.query("SELECT id, name FROM " + table)).containsExactly("2\tb");
    Map<String, String> files = objectEtags(shimBucket, prefix + "t/");
    assertThat(files.keySet()).containsExactly(prefix + "t/000000_0");
    assertThat(traffic.requests(S3Api.COPY_OBJECT))
        .as("the upload went to 000000_0_copy_1, as for INSERT INTO, and was copied into place")
        .isEqualTo(1);
    assertThat(fs.shimStatistics().misses() - missesBefore).isEqualTo(1);
    assertThat(
            new BucketView(store(), shimBucket)
                .openUploads(List.of(prefix + "t/000000_0", prefix + "t/000000_0_copy_1")))
        .isEmpty();
  }

  @ParameterizedTest(name = "on {0}")
  @EnumSource(Engine.class)
  void twoInsertIntoStatementsAtOnceOnOneTableBothSucceedWithDistinctNamesAndNoCopy(Engine engine)
      throws Exception {
    hive.use(engine);
    String database = database(shimBucket, engine) + "_concurrent";
    String prefix = engine.setting() + "-concurrent-warehouse/";
    hive.execute(
        "CREATE DATABASE " + database + " LOCATION 's3a://" + shimBucket + "/" + prefix + "'");
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
    assertThat(objectEtags(shimBucket, prefix).keySet())
        .as("three files with Hive's names, the table's insert lock gone")
        .containsExactly(
            prefix + "t/000000_0", prefix + "t/000000_0_copy_1", prefix + "t/000000_0_copy_2");
    assertThat(traffic.requests(S3Api.COPY_OBJECT)).as("COPY").isZero();
    assertThat(traffic.requests(S3Api.COMPLETE_MULTIPART_UPLOAD)).isEqualTo(2);
    assertThat(fs.shimStatistics().misses()).isEqualTo(missesBefore);
    assertThat(fs.shimStatistics().missesRefused()).isEqualTo(refusedBefore);
    assertThat(
            new BucketView(store(), shimBucket)
                .openUploads(
                    List.of(
                        prefix + "t/000000_0_copy_1",
                        prefix + "t/000000_0_copy_2",
                        prefix + "t/000000_0_copy_3")))
        .as("open uploads")
        .isEmpty();
  }

  /** Runs a statement on the plain bucket, then on the shim's, and what it did to the latter. */
  private Measured measure(Statement statement, Engine engine) throws IOException {
    String warehouse = warehouse(engine);
    long started = System.nanoTime();
    Traffic plain = run(plainBucket, engine, statement.sql());
    long plainMillis = (System.nanoTime() - started) / 1_000_000;
    Map<String, String> before = dataEtags(shimBucket, warehouse);
    started = System.nanoTime();
    Traffic shim = run(shimBucket, engine, statement.sql());
    long shimMillis = (System.nanoTime() - started) / 1_000_000;
    Map<String, String> after = dataEtags(shimBucket, warehouse);
    Set<String> written = new TreeSet<>();
    after.forEach(
        (key, etag) -> {
          if (!etag.equals(before.get(key))) {
            written.add(key);
          }
        });
    Set<String> gone = new TreeSet<>(before.keySet());
    gone.removeAll(after.keySet());
    LOG.info(
        "{} on {}: plain {}, shim {}, wrote {}", statement.label(), engine, plain, shim, written);
    return new Measured(statement, plain, shim, written, gone, plainMillis, shimMillis);
  }

  private void writeTable(Engine engine, List<Measured> measured) throws IOException {
    StringBuilder table = new StringBuilder();
    table.append(
        String.format(
            Locale.ROOT,
            "Store: %s. Hive %s, %s local mode, text tables; one run. Wall time is the whole"
                + " statement's, as the session runs it.%n%n",
            store().name(),
            HiveVersionInfo.getVersion(),
            engine == Engine.MR ? "MapReduce" : "Tez"));
    table.append(
        "| Statement | Plain S3A: requests | COPY | DeleteObject | wall s | Shim: requests | COPY |"
            + " DeleteObject | CompleteMultipartUpload | wall s |\n");
    table.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (Measured m : measured) {
      table.append(
          String.format(
              Locale.ROOT,
              "| %s | %d | %d | %d | %.2f | %d | %d | %d | %d | %.2f |%n",
              m.statement().label(),
              m.plain().totalRequests(),
              m.plain().requests(S3Api.COPY_OBJECT),
              m.plain().requests(S3Api.DELETE_OBJECT),
              m.plainMillis() / 1000.0,
              m.shim().totalRequests(),
              m.shim().requests(S3Api.COPY_OBJECT),
              m.shim().requests(S3Api.DELETE_OBJECT),
              m.shim().requests(S3Api.COMPLETE_MULTIPART_UPLOAD),
              m.shimMillis() / 1000.0));
    }
    Path out = Path.of("target", "hive-" + store().name() + "-" + engine.setting() + ".md");
    Files.writeString(out, table.toString());
    LOG.info("Hive statements on {}, {}:\n{}", store().name(), engine, table);
  }
}
