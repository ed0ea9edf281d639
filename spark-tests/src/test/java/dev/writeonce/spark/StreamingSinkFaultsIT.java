package dev.writeonce.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.writeonce.core.store.check.StoreTrust;
import dev.writeonce.spark.streaming.WriteonceCheckpointFileManager;
import dev.writeonce.spark.streaming.WriteonceStreamingCommitProtocol;
import dev.writeonce.teststore.BucketView;
import dev.writeonce.teststore.StoreRelay;
import dev.writeonce.teststore.TestStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Tuple2;

/**
 * Faults of {@link WriteonceStreamingCommitProtocol} found by review, each kept as the schedule
 * that found it: a reader settling the sink while a batch fails after its commit point, another
 * JVM's run dying after its commit point, a task attempt retried under the same key, a record whose
 * answer is lost. Each drives the real query (local mode) through the relay.
 *
 * <p>The query is {@link StreamingQueries}: one JSON file of ten rows per micro-batch,
 * repartitioned into two, written as Parquet. Tasks run with two attempts ({@code local[2,2]}) so
 * that a failed task attempt is retried. What they test is the protocol, which the store does not
 * change: they run on the first store the suite selects.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class StreamingSinkFaultsIT {

  private static final Logger LOG = LoggerFactory.getLogger(StreamingSinkFaultsIT.class);

  private TestStore store;
  private StoreRelay relay;
  private SparkSession spark;
  private String bucket;
  private BucketView view;
  private StreamingQueries queries;

  @TempDir Path input;

  @org.junit.jupiter.api.BeforeAll
  void start() throws Exception {
    store =
        dev.writeonce.teststore.TestStores.get(
            dev.writeonce.teststore.TestStores.selected().get(0));
    relay = StoreRelay.start(store.endpoint());
    spark = StreamingQueries.session("local[2,2]", store, relay).getOrCreate();
  }

  @org.junit.jupiter.api.AfterAll
  void stop() throws Exception {
    if (spark != null) {
      spark.stop();
    }
    if (relay != null) {
      relay.close();
    }
  }

  @BeforeEach
  void newBucketAndInput() throws IOException {
    bucket = store.newBucket("review");
    view = new BucketView(store, bucket);
    relay.heal();
    spark.conf().unset("spark.sql.files.ignoreMissingFiles");
    queries = new StreamingQueries(spark, input);
    queries.in(view);
    queries.useWriteonceManager();
    queries.useWriteonceSink();
    queries.writeInput(0, 2);
  }

  private void runQuery(String dir, Path from) throws Exception {
    queries.run(dir, queries.ids(from));
  }

  /** A query on a fresh input directory that has run its batch 0; the second file is added. */
  private Path startTwoBatchQuery(String dir) throws Exception {
    return queries.startTwoBatches(dir, queries::ids);
  }

  /** The ids a reader gets when it skips the files the log lists that do not exist. */
  private List<Long> sinkIdsIgnoringMissingFiles(String dir) {
    spark.conf().set("spark.sql.files.ignoreMissingFiles", "true");
    try {
      return spark
          .read()
          .schema("id LONG")
          .parquet(view.uri(dir + "sink"))
          .orderBy("id")
          .collectAsList()
          .stream()
          .map(row -> row.getLong(0))
          .toList();
    } finally {
      spark.conf().unset("spark.sql.files.ignoreMissingFiles");
    }
  }

  /** The keys of the files a sink log entry lists. */
  private List<String> listedKeys(String logKey) throws IOException {
    Matcher m =
        Pattern.compile("\"path\":\"s3a://" + Pattern.quote(bucket) + "/([^\"]+)\"")
            .matcher(view.read(logKey));
    List<String> keys = new ArrayList<>();
    while (m.find()) {
      keys.add(m.group(1));
    }
    return keys;
  }

  /** The messages of a failure and of all its causes and suppressed failures. */
  private static String causes(Throwable failure) {
    StringBuilder all = new StringBuilder();
    for (Throwable t = failure; t != null; t = t.getCause()) {
      all.append(t.getClass().getName()).append(": ").append(t.getMessage()).append('\n');
      for (Throwable s : t.getSuppressed()) {
        all.append("  suppressed ").append(s).append('\n');
      }
    }
    return all.toString();
  }

  private static boolean isPut(StoreRelay.Request r, String key) {
    return r.method().equals("PUT") && !r.target().contains("uploadId=") && r.path().endsWith(key);
  }

  private static void await(CountDownLatch latch) {
    try {
      if (!latch.await(120, TimeUnit.SECONDS)) {
        throw new IllegalStateException("timed out");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  // ---------------------------------------------------------------------------------------------

  /**
   * A reader of the sink lists its records just before batch 1 starts; the batch wins its log entry
   * and fails on its completions; the reader's settle then ends. It must not mark the sink settled
   * for this JVM, or the restart here would skip batch 1 with its files never made.
   */
  @Test
  void aReaderSettlingWhileABatchFailsAfterItsCommitPointLeavesTheRestartToFinishTheBatch()
      throws Exception {
    String dir = "reader-race/";
    Path from = startTwoBatchQuery(dir);
    String records = dir + "sink/_writeonce/";
    String recordsListing = "prefix=" + java.net.URLEncoder.encode(records, StandardCharsets.UTF_8);
    CountDownLatch readerListed = new CountDownLatch(1);
    CountDownLatch batchFailed = new CountDownLatch(1);
    AtomicBoolean readerStarted = new AtomicBoolean();
    AtomicBoolean armed = new AtomicBoolean();
    AtomicReference<Throwable> readerOutcome = new AtomicReference<>();
    AtomicReference<Thread> reader = new AtomicReference<>();

    relay.byOrdinal(n -> null);
    // The reader's listing of the sink's records is taken by the store at once, and reaches the
    // reader only once the batch has failed.
    relay.alter(
        r ->
            r.method().equals("GET")
                && r.target().contains("list-type=2")
                && (r.target().contains(recordsListing + "&")
                    || r.target().endsWith(recordsListing))
                && armed.compareAndSet(true, false),
        new StoreRelay.Alteration.RewriteAnswer(
            body -> {
              readerListed.countDown();
              await(batchFailed);
              return body;
            }));
    // At the first intent of batch 1, a reader opens the sink; every intent waits for its listing.
    relay.inject(
        r -> {
          if (r.method().equals("PUT") && r.path().contains("/" + records + "jobs/stream-1-")) {
            if (readerStarted.compareAndSet(false, true)) {
              armed.set(true);
              Thread thread =
                  new Thread(
                      () -> {
                        try {
                          spark.read().parquet(view.uri(dir + "sink")).count();
                        } catch (Throwable t) {
                          readerOutcome.set(t);
                        }
                      },
                      "sink-reader");
              reader.set(thread);
              thread.start();
            }
            await(readerListed);
          }
          return false;
        },
        StoreRelay.Fault.DELAY_2S,
        0);
    // The batch's completions never reach the store: it fails after its commit point.
    relay.inject(
        r -> r.isCompleteUpload() && r.path().contains("/" + dir + "sink/"),
        StoreRelay.Fault.RESET_BEFORE,
        1000);

    Throwable failure = catchThrowable(() -> runQuery(dir, from));
    batchFailed.countDown();
    assertThat(readerStarted).isTrue();
    reader.get().join(120_000);
    List<String> sent = relay.numbered();
    relay.heal();
    LOG.info("{}: requests: {}", store.name(), sent);
    LOG.info("{}: the batch's failure: {}", store.name(), failure == null ? null : causes(failure));
    LOG.info(
        "{}: the reader's outcome: {}",
        store.name(),
        readerOutcome.get() == null ? "read" : causes(readerOutcome.get()));

    assertThat(failure).as("batch 1 failed after its log entry").isNotNull();
    String log1 = dir + "sink/_spark_metadata/1";
    List<String> listed = listedKeys(log1);
    assertThat(listed).hasSize(2);
    assertThat(view.keys(records + "streaming/")).as("the record of the run that won").hasSize(1);

    assertThat(readerListed.getCount()).as("the reader's listing was held").isZero();
    assertThat(armed).isFalse();

    // Restarted in this JVM: opening the sink lists its records whatever the reader marked, and
    // finishes batch 1, which the log gives to the run that died.
    runQuery(dir, from);
    assertThat(view.keys(records)).as("records left").isEmpty();
    assertThat(view.openUploads(listed)).as("uploads left open").isEmpty();
    assertThat(view.keys(dir + "sink/")).containsAll(listed);
    assertThat(queries.sinkIds(dir)).isEqualTo(StreamingQueries.ids(0, 2));
  }

  /**
   * The same query run from another JVM (a driver restarted elsewhere, after this JVM's run ended)
   * wins batch 1's entry and dies before its completions. This JVM knew the sink settled from its
   * own last batch; its next opening of the sink (a reader here) still lists the records and
   * finishes batch 1.
   */
  @Test
  void whatARunInAnotherJvmLeftAfterItsCommitPointIsFinishedWhenThisJvmOpensTheSink()
      throws Exception {
    String dir = "two-jvms/";
    Path from = startTwoBatchQuery(dir);
    assertThat(queries.sinkIds(dir)).isEqualTo(StreamingQueries.ids(0, 1));

    // The other JVM runs batch 1 and dies just after its log entry reached the store.
    String log1 = dir + "sink/_spark_metadata/1";
    AtomicBoolean dead = new AtomicBoolean();
    relay.byOrdinal(n -> dead.get() ? StoreRelay.Fault.RESET_BEFORE : null);
    relay.inject(
        r -> {
          if (isPut(r, "/" + log1)) {
            dead.set(true);
          }
          return false;
        },
        StoreRelay.Fault.DELAY_2S,
        0);
    String childOut = runChild("query", dir, from);
    relay.heal();
    assertThat(childOut).contains("CHILD-FAILED");
    List<String> listed = listedKeys(log1);
    assertThat(listed).hasSize(2);
    assertThat(view.keys(dir + "sink/_writeonce/streaming/")).hasSize(1);
    assertThat(view.openUploads(listed)).hasSize(2);

    // This JVM's reader opens the sink, finishes batch 1 and reads every row.
    assertThat(queries.sinkIds(dir)).isEqualTo(StreamingQueries.ids(0, 2));
    assertThat(view.openUploads(listed)).isEmpty();
    assertThat(view.keys(dir + "sink/_writeonce/")).isEmpty();

    // The query restarted here goes on.
    runQuery(dir, from);
    assertThat(queries.sinkIds(dir)).isEqualTo(StreamingQueries.ids(0, 2));
  }

  /** Runs {@link StreamingSinkChildRun} in a JVM of its own and returns what it printed. */
  private String runChild(String mode, String dir, Path from) throws Exception {
    Properties settings = new Properties();
    for (Tuple2<String, String> setting : spark.sparkContext().getConf().getAll()) {
      String key = setting._1();
      if (key.startsWith("spark.hadoop.") || key.startsWith("spark.sql.")) {
        settings.setProperty(key, setting._2());
      }
    }
    settings.setProperty("spark.master", "local[2]");
    settings.setProperty("spark.app.name", "writeonce-review-child");
    settings.setProperty("spark.ui.enabled", "false");
    settings.setProperty("spark.driver.host", "127.0.0.1");
    settings.setProperty("spark.driver.bindAddress", "127.0.0.1");
    settings.setProperty(
        WriteonceCheckpointFileManager.SETTING, WriteonceCheckpointFileManager.class.getName());
    settings.setProperty(
        WriteonceStreamingCommitProtocol.SETTING, WriteonceStreamingCommitProtocol.class.getName());
    // This JVM checked the store behind the relay; the child takes that verdict as given.
    settings.setProperty("spark.hadoop." + StoreTrust.CHECK, "false");
    settings.setProperty("mode", mode);
    settings.setProperty("input", from.toString());
    settings.setProperty("checkpoint", view.uri(dir + "checkpoint"));
    settings.setProperty("sink", view.uri(dir + "sink"));
    Path file = Files.createTempFile(input, "child-", ".properties");
    try (java.io.OutputStream out = Files.newOutputStream(file)) {
      settings.store(out, "review child");
    }
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Xmx768m");
    command.add("-XX:+UseSerialGC");
    for (String arg :
        java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (arg.startsWith("--add-opens") || arg.startsWith("-Djdk.") || arg.startsWith("-Dio.")) {
        command.add(arg);
      }
    }
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(StreamingSinkChildRun.class.getName());
    command.add(file.toString());
    Path out = Files.createTempFile(input, "child-", ".out");
    Process child =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile()).start();
    if (!child.waitFor(300, TimeUnit.SECONDS)) {
      child.destroyForcibly();
    }
    String printed = Files.readString(out);
    LOG.info(
        "{}: child ({}) exited {}: {}",
        store.name(),
        mode,
        child.exitValue(),
        printed.lines().filter(l -> l.startsWith("CHILD") || l.contains("Exception")).toList());
    return printed;
  }

  // ---------------------------------------------------------------------------------------------

  /**
   * A task attempt's upload fails and so does its abort (a flaky network); the attempt is retried
   * under the same key ({@code part-00000-<run>}), and the batch commits. The first attempt's
   * upload of that key is aborted when the batch's records are removed: its intent names it.
   */
  @Test
  void aTaskAttemptRetriedUnderTheSameKeyLeavesNoUploadOpen() throws Exception {
    String dir = "retry/";
    Path from = startTwoBatchQuery(dir);
    AtomicReference<String> failedUpload = new AtomicReference<>();
    AtomicReference<String> failedKey = new AtomicReference<>();
    AtomicBoolean committed = new AtomicBoolean();
    relay.byOrdinal(n -> null);
    relay.inject(
        r -> {
          // The network is back by the batch's commit point.
          if (isPut(r, "/" + dir + "sink/_spark_metadata/1")) {
            committed.set(true);
          }
          if (committed.get()
              || !r.target().contains("uploadId=")
              || !r.path().contains("/" + dir + "sink/part-")) {
            return false;
          }
          String id = r.target().replaceAll(".*uploadId=([^&]+).*", "$1");
          if (r.isUploadPart() && failedUpload.compareAndSet(null, id)) {
            failedKey.set(r.path().substring(r.path().indexOf(dir)));
          }
          return id.equals(failedUpload.get()) && !r.isCompleteUpload();
        },
        StoreRelay.Fault.RESET_BEFORE,
        1000);

    runQuery(dir, from);
    List<String> sent = relay.numbered();
    relay.heal();
    LOG.info("{}: requests: {}", store.name(), sent);

    assertThat(failedKey.get()).isNotNull();
    assertThat(queries.sinkIds(dir)).isEqualTo(StreamingQueries.ids(0, 2));
    assertThat(view.keys(dir + "sink/_writeonce/")).isEmpty();
    // The key is a committed file of batch 1, and the failed attempt's upload of it is aborted.
    assertThat(view.keys(dir + "sink/")).contains(failedKey.get());
    assertThat(view.openUploads(List.of(failedKey.get()))).isEmpty();
  }

  /**
   * The record of the batch is stored but its answer is lost: its name carries the run's id, so the
   * retry writes it again and the batch goes on.
   */
  @Test
  void aRecordStoredWithItsAnswerLostDoesNotFailTheBatch() throws Exception {
    String dir = "record-answer/";
    Path from = startTwoBatchQuery(dir);
    relay.byOrdinal(n -> null);
    relay.inject(
        r ->
            r.method().equals("PUT")
                && r.path().contains("/" + dir + "sink/_writeonce/streaming/1-"),
        StoreRelay.Fault.RESET_AFTER_STORE_ACTED,
        1);

    runQuery(dir, from);
    relay.heal();

    assertThat(queries.sinkIds(dir)).isEqualTo(StreamingQueries.ids(0, 2));
    assertThat(view.keys(dir + "sink/_writeonce/")).isEmpty();
  }
}
