package dev.writeonce.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.spark.streaming.WriteonceCheckpointFileManager;
import dev.writeonce.teststore.BucketView;
import dev.writeonce.teststore.EachStore;
import dev.writeonce.teststore.S3Api;
import dev.writeonce.teststore.StoreLifecycle;
import dev.writeonce.teststore.StoreRelay;
import dev.writeonce.teststore.TestStore;
import dev.writeonce.teststore.Traffic;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Structured Streaming (local mode) with its checkpoint and its file sink on a real store, through
 * a relay that counts every request and plays a second run of the query: Spark's own checkpoint
 * manager against {@link WriteonceCheckpointFileManager}.
 *
 * <p>The query reads six JSON files of ten rows, one file per micro-batch, repartitions each batch
 * into two and writes Parquet: six batches of two partitions, as a query that renames its
 * checkpoint files would.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@EachStore
class SparkStreamingIT implements StoreLifecycle {

  private static final Logger LOG = LoggerFactory.getLogger(SparkStreamingIT.class);
  private static final int BATCHES = 6;
  private static final int ROWS_PER_BATCH = StreamingQueries.ROWS_PER_BATCH;

  private TestStore store;
  private StoreRelay relay;
  private SparkSession spark;
  private String bucket;
  private BucketView view;
  private StreamingQueries queries;

  @TempDir Path input;

  @Override
  public void startOn(TestStore store) throws Exception {
    this.store = store;
    relay = StoreRelay.start(store.endpoint());
    spark =
        StreamingQueries.session("local[2]", store, relay)
            .config("spark.task.maxFailures", "1")
            .getOrCreate();
  }

  @Override
  public void stopOn(TestStore store) throws Exception {
    if (spark != null) {
      spark.stop();
    }
    if (relay != null) {
      relay.close();
    }
  }

  @BeforeEach
  void newBucketAndInput() throws IOException {
    bucket = store.newBucket("stream");
    view = new BucketView(store, bucket);
    relay.heal();
    queries = new StreamingQueries(spark, input);
    queries.in(view);
    queries.writeInput(0, BATCHES);
  }

  /** Runs the query until it has read every input file, one file per micro-batch. */
  private void runQuery(String dir) throws Exception {
    queries.run(dir, queries.ids(input));
  }

  /**
   * Counts rows per ten seconds of event time, a window emitted once the watermark (ten seconds
   * behind the latest row) passes its end: its state lives in the checkpoint between batches.
   */
  private void runAggregation(String dir) throws Exception {
    queries.run(dir, aggregation(input));
  }

  private Dataset<Row> aggregation(Path from) {
    return queries
        .source(from)
        .withWatermark("ts", "10 seconds")
        .groupBy(functions.window(functions.col("ts"), "10 seconds"))
        .count()
        .select(functions.col("window.start").cast("long").as("start"), functions.col("count"));
  }

  /** The windows the aggregation emitted, as "start:count", in order. */
  private List<String> windows(String dir) {
    return spark.read().parquet(view.uri(dir + "sink")).orderBy("start").collectAsList().stream()
        .map(row -> (row.getLong(0) - 1_700_000_000L) + ":" + row.getLong(1))
        .toList();
  }

  private static List<Long> allIds() {
    return StreamingQueries.ids(0, BATCHES);
  }

  @Test
  void theCheckpointIsWrittenWithoutCopyOrDeleteAndWithFewerRequestsThanSparksOwn()
      throws Exception {
    runQuery("warm-up/"); // the JVM's first streaming query is slower: not measured
    Traffic before = relay.read();
    long start = System.nanoTime();
    runQuery("spark/");
    long sparksMillis = (System.nanoTime() - start) / 1_000_000;
    Traffic sparks = relay.read().minus(before);
    assertThat(queries.sinkIds("spark/")).isEqualTo(allIds());

    queries.useWriteonceManager();
    before = relay.read();
    start = System.nanoTime();
    runQuery("writeonce/");
    long oursMillis = (System.nanoTime() - start) / 1_000_000;
    Traffic ours = relay.read().minus(before);
    assertThat(queries.sinkIds("writeonce/")).isEqualTo(allIds());

    queries.useWriteonceSink();
    before = relay.read();
    start = System.nanoTime();
    runQuery("writeonce-sink/");
    long sinkMillis = (System.nanoTime() - start) / 1_000_000;
    Traffic sink = relay.read().minus(before);
    assertThat(queries.sinkIds("writeonce-sink/")).isEqualTo(allIds());

    LOG.info(
        "{}: {} micro-batches, Spark's checkpoint manager: {} in {} ms; writeonce: {} in {} ms;"
            + " writeonce with its sink protocol: {} in {} ms",
        store.name(),
        BATCHES,
        sparks,
        sparksMillis,
        ours,
        oursMillis,
        sink,
        sinkMillis);
    assertThat(sink.requests(S3Api.COPY_OBJECT)).isZero();
    assertThat(sink.totalRequests()).isLessThan(sparks.totalRequests());
    assertThat(view.keys("writeonce-sink/sink/_writeonce/")).isEmpty();
    assertThat(sparks.requests(S3Api.COPY_OBJECT)).as("Spark's renames").isPositive();
    assertThat(ours.requests(S3Api.COPY_OBJECT)).isZero();
    assertThat(ours.requests(S3Api.DELETE_OBJECT) + ours.requests(S3Api.DELETE_OBJECTS)).isZero();
    assertThat(ours.totalRequests()).isLessThan(sparks.totalRequests());
    // Each batch writes its offsets, its source log entry, its sink log entry and its commit,
    // one PUT each; the sink's two Parquet files are Spark's own.
    assertThat(ours.requests(S3Api.PUT_OBJECT)).isEqualTo(BATCHES * (4 + 2) + 1);
    assertThat(view.keys("writeonce/checkpoint/")).noneMatch(key -> key.contains(".tmp"));
  }

  @Test
  void aWindowedAggregationKeepsItsStateInTheCheckpointWithoutCopyOrDelete() throws Exception {
    // Six batches of one window each: the watermark passes windows 0 to 4, the last stays open.
    List<String> emitted = List.of("0:10", "100:10", "200:10", "300:10", "400:10");
    runAggregation("warm-up/"); // the JVM's first streaming query is slower: not measured
    Traffic before = relay.read();
    long start = System.nanoTime();
    runAggregation("spark/");
    long sparksMillis = (System.nanoTime() - start) / 1_000_000;
    Traffic sparks = relay.read().minus(before);
    assertThat(windows("spark/")).isEqualTo(emitted);

    queries.useWriteonceManager();
    before = relay.read();
    start = System.nanoTime();
    runAggregation("writeonce/");
    long oursMillis = (System.nanoTime() - start) / 1_000_000;
    Traffic ours = relay.read().minus(before);
    assertThat(windows("writeonce/")).isEqualTo(emitted);

    LOG.info(
        "{}: windowed aggregation, {} micro-batches, Spark's checkpoint manager: {} in {} ms;"
            + " writeonce: {} in {} ms",
        store.name(),
        BATCHES,
        sparks,
        sparksMillis,
        ours,
        oursMillis);
    assertThat(sparks.requests(S3Api.COPY_OBJECT)).as("Spark's renames").isPositive();
    assertThat(ours.requests(S3Api.COPY_OBJECT)).isZero();
    assertThat(ours.requests(S3Api.DELETE_OBJECT) + ours.requests(S3Api.DELETE_OBJECTS)).isZero();
    assertThat(ours.totalRequests()).isLessThan(sparks.totalRequests());
    assertThat(view.keys("writeonce/checkpoint/state/"))
        .isNotEmpty()
        .noneMatch(key -> key.contains(".tmp") || key.contains("/."));
  }

  /**
   * A batch's writes are its checkpoint files (offsets, the source's log, the sink's log, the
   * commit) and, through the streaming commit protocol, its tasks' intents, its uploads, its
   * record, its completions and its cleanup. The query dies just before each of them reaches the
   * store, and just after the store stored it with its answer lost, and is started again: the sink
   * holds every row once, no file of a batch that did not commit is ever visible, no upload stays
   * open, no record stays.
   */
  @Test
  void aSinkKilledBeforeAndAfterEachWriteOfABatchShowsNoFileOfAnUncommittedBatch()
      throws Exception {
    queries.useWriteonceManager();
    queries.useWriteonceSink();
    int orphans = killBeforeAndAfterEachWrite("sink-kill-", true);
    assertThat(orphans).isZero();
  }

  /**
   * The windowed aggregation, its state in the checkpoint, its sink through the commit protocol:
   * killed before and after each write of its second batch (the state store's files among them) and
   * restarted, it emits the first window once, with its ten rows counted once.
   */
  @Test
  void anAggregationKilledBeforeAndAfterEachWriteOfABatchCountsEachRowOnce() throws Exception {
    queries.useWriteonceManager();
    queries.useWriteonceSink();
    int orphans =
        killBeforeAndAfterEachWrite(
            "state-kill-",
            true,
            // The state store's writes of the batch, up to its commit: the checkpoint's other
            // files and the sink's are crash points of the test above.
            numbered -> {
              boolean[] committed = {false};
              return writes(
                      numbered,
                      false,
                      line -> {
                        boolean before = !committed[0];
                        committed[0] |=
                            line.contains(" PUT ") && line.endsWith("/checkpoint/commits/1");
                        return before;
                      })
                  .stream()
                  .filter(n -> numbered.get(n - 1).contains("/checkpoint/state/"))
                  .toList();
            },
            this::aggregation,
            (dir, crash) -> {
              // A third batch moves the watermark past the second window: both are emitted, each
              // with its rows counted once, whatever the restart emitted before.
              try {
                Path from = input.resolve(dir);
                queries.copyInput(2, from);
                queries.run(dir, aggregation(from));
              } catch (Exception e) {
                throw new AssertionError(crash + ": the third batch failed", e);
              }
              assertThat(windows(dir)).as(crash).containsExactly("0:10", "100:10");
            });
    assertThat(orphans).isZero();
  }

  /** Returns the data files left outside the sink log, over all crash points. */
  private int killBeforeAndAfterEachWrite(String prefix, boolean uploads) throws Exception {
    return killBeforeAndAfterEachWrite(
        prefix,
        uploads,
        numbered -> writes(numbered, uploads, line -> true),
        queries::ids,
        (dir, crash) ->
            assertThat(queries.sinkIds(dir)).as(crash).isEqualTo(StreamingQueries.ids(0, 2)));
  }

  /**
   * The numbers of a batch's writes among its requests: PUTs of whole objects, and with {@code
   * uploads} the POSTs that start and complete uploads and delete; up to the first line {@code
   * until} rejects.
   */
  private static List<Integer> writes(
      List<String> numbered, boolean uploads, java.util.function.Predicate<String> until) {
    List<Integer> writes = new java.util.ArrayList<>();
    for (String line : numbered) {
      if (!until.test(line)) {
        break;
      }
      String[] parts = line.split(" ", 3);
      boolean write =
          parts[1].equals("PUT") && !parts[2].contains("uploadId=")
              || uploads && parts[1].equals("POST");
      if (write) {
        writes.add(Integer.parseInt(parts[0]));
      }
    }
    return writes;
  }

  /**
   * Kills the second batch of {@code query} before and after each of its writes, restarts it, and
   * checks the sink with {@code holds}; returns the data files left outside the sink log.
   */
  private int killBeforeAndAfterEachWrite(
      String prefix,
      boolean uploads,
      java.util.function.Function<List<String>, List<Integer>> crashPoints,
      java.util.function.Function<Path, Dataset<Row>> query,
      java.util.function.BiConsumer<String, String> holds)
      throws Exception {
    // A run of the batch without a fault numbers its requests.
    Path planned = queries.startTwoBatches(prefix + "plan/", query);
    relay.byOrdinal(n -> null);
    queries.run(prefix + "plan/", query.apply(planned));
    List<Integer> writes = crashPoints.apply(relay.numbered());
    relay.heal();
    assertThat(writes)
        .as("the batch's writes: %s", relay.numbered())
        .hasSizeGreaterThanOrEqualTo(2);

    int orphans = 0;
    for (int write : writes) {
      for (boolean stored : List.of(false, true)) {
        String dir = prefix + write + (stored ? "-after/" : "-before/");
        Path from = queries.startTwoBatches(dir, query);
        relay.byOrdinal(
            n ->
                n < write
                    ? null
                    : n == write && stored
                        ? StoreRelay.Fault.RESET_AFTER_STORE_ACTED
                        : StoreRelay.Fault.RESET_BEFORE);
        List<String> sent = new java.util.ArrayList<>();
        try {
          queries.run(dir, query.apply(from));
        } catch (Exception expected) {
          // the query died
        } finally {
          sent.addAll(relay.numbered());
          relay.byOrdinal(n -> null);
        }
        queries.run(dir, query.apply(from));
        sent.addAll(relay.numbered());
        relay.heal();

        String crash = "died at write " + write + ", stored " + stored;
        holds.accept(dir, crash);
        assertThat(view.keys(dir + "checkpoint/")).noneMatch(key -> key.contains(".tmp"));
        int left = orphanFiles(dir);
        orphans += left;
        if (uploads) {
          assertThat(left).as("%s: files outside the log", crash).isZero();
          assertThat(view.openUploads(uploadedKeys(sent))).as("%s: open uploads", crash).isEmpty();
          assertThat(view.keys(dir + "sink/_writeonce/")).as("%s: records left", crash).isEmpty();
        }
      }
    }
    LOG.info(
        "{}: a batch killed before and after each of its {} writes and restarted",
        store.name(),
        writes.size());
    return orphans;
  }

  /** The keys of the uploads the requests started: "N POST /bucket/key?uploads". */
  private static List<String> uploadedKeys(List<String> numbered) {
    List<String> keys = new java.util.ArrayList<>();
    for (String line : numbered) {
      String[] parts = line.split(" ", 3);
      if (parts[1].equals("POST")
          && parts[2].contains("?uploads")
          && !parts[2].contains("uploadId=")) {
        String target = parts[2].substring(0, parts[2].indexOf('?'));
        String key = target.substring(target.indexOf('/', 1) + 1);
        keys.add(java.net.URLDecoder.decode(key, java.nio.charset.StandardCharsets.UTF_8));
      }
    }
    return keys;
  }

  /** Data files under a sink that its log does not list. */
  private int orphanFiles(String dir) {
    java.util.Set<String> logged =
        java.util.Arrays.stream(spark.read().parquet(view.uri(dir + "sink")).inputFiles())
            .map(file -> file.substring(file.indexOf(dir)))
            .collect(java.util.stream.Collectors.toSet());
    return (int)
        view.keys(dir + "sink/").stream()
            .filter(key -> key.endsWith(".parquet") && !logged.contains(key))
            .count();
  }

  /**
   * Another run of the query writes batch 3's offsets just before this run's PUT of them reaches
   * the store: batch 2's plan moved on by one file, as both runs read the same source. Returns
   * whether it happened.
   */
  private AtomicBoolean anotherRunWritesBatch3sOffsetsFirst(String dir) {
    String offsets3 = dir + "checkpoint/offsets/3";
    AtomicBoolean raced = new AtomicBoolean();
    relay.inject(
        request -> {
          if (request.method().equals("PUT")
              && request.path().endsWith("/" + offsets3)
              && raced.compareAndSet(false, true)) {
            String planned = readQuietly(dir + "checkpoint/offsets/2");
            view.put(offsets3, planned.replace("{\"logOffset\":2}", "{\"logOffset\":3}"));
          }
          return false;
        },
        StoreRelay.Fault.DELAY_2S,
        0);
    return raced;
  }

  @Test
  void ofTwoRunsWritingOneBatchOneFailsNamingTheBatchAndTheSinkHoldsEachRowOnce() throws Exception {
    queries.useWriteonceManager();
    AtomicBoolean raced = anotherRunWritesBatch3sOffsetsFirst("race/");

    assertThatThrownBy(() -> runQuery("race/"))
        .satisfies(
            failure ->
                assertThat(causes(failure))
                    .contains("Multiple streaming queries are concurrently using")
                    .contains("batch 3 of the log at " + view.uri("race/checkpoint/offsets"))
                    .contains("another run of this streaming query"));
    assertThat(raced).isTrue();
    assertThat(queries.sinkIds("race/")).isEqualTo(allIds().subList(0, 3 * ROWS_PER_BATCH));

    // The run that won batch 3 goes on from the checkpoint: every row once.
    runQuery("race/");
    assertThat(queries.sinkIds("race/")).isEqualTo(allIds());
    assertThat(view.openUploadsUnder("race/")).isEmpty();
  }

  /**
   * The windowed aggregation, its state in the checkpoint and its sink through the commit protocol:
   * another run writes batch 3's offsets just before this run's PUT of them. This run fails naming
   * the batch, having written no state and no file of it; the run that goes on from the checkpoint
   * emits every window once, its rows counted once.
   */
  @Test
  void ofTwoRunsOfAnAggregationOneFailsNamingTheBatchAndEachWindowCountsItsRowsOnce()
      throws Exception {
    queries.useWriteonceManager();
    queries.useWriteonceSink();
    AtomicBoolean raced = anotherRunWritesBatch3sOffsetsFirst("agg-race/");

    Traffic before = relay.read();
    assertThatThrownBy(() -> runAggregation("agg-race/"))
        .satisfies(
            failure ->
                assertThat(causes(failure))
                    .contains("Multiple streaming queries are concurrently using")
                    .contains("batch 3 of the log at " + view.uri("agg-race/checkpoint/offsets")));
    Traffic losing = relay.read().minus(before);
    List<String> sent = relay.numbered();
    relay.heal();
    assertThat(raced).isTrue();
    // Batches 0 to 2 only: no state of batch 3 (version 4 of each partition's store), no file.
    assertThat(view.keys("agg-race/checkpoint/state/")).noneMatch(key -> key.endsWith("/4.delta"));
    assertThat(losing.requests(S3Api.COPY_OBJECT)).as("%s", losing).isZero();
    assertThat(losing.requests(S3Api.DELETE_OBJECT)).as("%s", losing).isZero();
    // Every upload this run made was completed (batches 0 to 2); batch 3 made none to abort.
    long files = view.keys("agg-race/sink/").stream().filter(k -> k.endsWith(".parquet")).count();
    assertThat(losing.requests(S3Api.COMPLETE_MULTIPART_UPLOAD)).as("%s", losing).isEqualTo(files);
    assertThat(losing.requests(S3Api.ABORT_MULTIPART_UPLOAD)).as("%s", losing).isZero();
    List<String> beforeWinner = windows("agg-race/");
    assertThat(beforeWinner).doesNotHaveDuplicates().allMatch(window -> window.endsWith(":10"));
    assertThat(orphanFiles("agg-race/")).isZero();
    assertThat(view.openUploads(uploadedKeys(sent))).isEmpty();

    // The run that won batch 3 goes on from the checkpoint: each window once, its rows once.
    runAggregation("agg-race/");
    assertThat(windows("agg-race/"))
        .containsExactly("0:10", "100:10", "200:10", "300:10", "400:10");
    assertThat(orphanFiles("agg-race/")).isZero();
    assertThat(view.keys("agg-race/sink/_writeonce/")).isEmpty();
  }

  /**
   * Two runs ran batch 3 with the same plan, and the other run's sink log entry reached the store
   * first: this run loses the commit point, its files never become visible, its uploads are
   * aborted, and the other run's rows are in the sink once.
   */
  @Test
  void aRunThatLosesTheSinkLogEntryLeavesNoFileAndNoUpload() throws Exception {
    queries.useWriteonceManager();
    queries.useWriteonceSink();
    // The other run's file of batch 3: the rows 30 to 39, already complete under the sink.
    spark.range(30, 40).coalesce(1).write().parquet(view.uri("other-run/"));
    String written =
        view.keys("other-run/").stream().filter(k -> k.endsWith(".parquet")).findFirst().get();
    String theirs = "race-sink/sink/part-00000-other-run.c000.snappy.parquet";
    store
        .adminClient()
        .copyObject(
            b ->
                b.sourceBucket(bucket)
                    .sourceKey(written)
                    .destinationBucket(bucket)
                    .destinationKey(theirs));
    String entry =
        "v1\n{\"path\":\""
            + view.uri(theirs)
            + "\",\"size\":"
            + view.size(theirs)
            + ",\"isDir\":false,\"modificationTime\":1700000000000,\"blockReplication\":1,"
            + "\"blockSize\":33554432,\"action\":\"add\"}";
    String log3 = "race-sink/sink/_spark_metadata/3";
    AtomicBoolean raced = new AtomicBoolean();
    relay.byOrdinal(n -> null);
    relay.inject(
        request -> {
          if (request.method().equals("PUT")
              && request.path().endsWith("/" + log3)
              && raced.compareAndSet(false, true)) {
            view.put(log3, entry);
          }
          return false;
        },
        StoreRelay.Fault.DELAY_2S,
        0);

    Traffic before = relay.read();
    assertThatThrownBy(() -> runQuery("race-sink/"))
        .satisfies(
            failure ->
                assertThat(causes(failure))
                    .contains("batch 3 of the streaming sink")
                    .contains("was committed by another run of the query"));
    List<String> sent = relay.numbered();
    Traffic losing = relay.read().minus(before);
    relay.heal();
    assertThat(raced).isTrue();
    // Batches 0 to 2 completed their two files each; batch 3's two uploads were aborted, none
    // completed.
    assertThat(losing.requests(S3Api.COMPLETE_MULTIPART_UPLOAD)).as("%s", losing).isEqualTo(6);
    assertThat(losing.requests(S3Api.ABORT_MULTIPART_UPLOAD)).as("%s", losing).isEqualTo(2);
    assertThat(losing.requests(S3Api.COPY_OBJECT)).isZero();
    assertThat(queries.sinkIds("race-sink/")).isEqualTo(allIds().subList(0, 4 * ROWS_PER_BATCH));
    assertThat(orphanFiles("race-sink/")).isZero();
    assertThat(view.openUploads(uploadedKeys(sent))).isEmpty();
    assertThat(view.keys("race-sink/sink/_writeonce/")).isEmpty();

    // The run that won batch 3 goes on from the checkpoint: every row once.
    runQuery("race-sink/");
    assertThat(queries.sinkIds("race-sink/")).isEqualTo(allIds());
    assertThat(orphanFiles("race-sink/")).isZero();
  }

  /** The messages of a failure and of all its causes. */
  private static String causes(Throwable failure) {
    StringBuilder all = new StringBuilder();
    for (Throwable t = failure; t != null; t = t.getCause()) {
      all.append(t.getMessage()).append('\n');
    }
    return all.toString();
  }

  private String readQuietly(String key) {
    try {
      return view.read(key);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
