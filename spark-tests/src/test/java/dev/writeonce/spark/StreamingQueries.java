package dev.writeonce.spark;

import dev.writeonce.core.store.check.StoreTrust;
import dev.writeonce.spark.streaming.WriteonceCheckpointFileManager;
import dev.writeonce.spark.streaming.WriteonceStreamingCommitProtocol;
import dev.writeonce.teststore.BucketView;
import dev.writeonce.teststore.StoreRelay;
import dev.writeonce.teststore.TestStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.hadoop.fs.FileSystem;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.streaming.StreamingQuery;
import org.apache.spark.sql.streaming.Trigger;

/**
 * The streaming suites' query: JSON files of ten rows in a local directory, read one file per
 * micro-batch, written as Parquet to a sink on the store, its checkpoint beside it, run until it
 * has read every file. Each test gives it the bucket it works in ({@link #in}).
 */
final class StreamingQueries {

  static final int ROWS_PER_BATCH = 10;

  private final SparkSession spark;
  private final Path input;
  private BucketView view;

  /**
   * @param input the local directory the input files are written to
   */
  StreamingQueries(SparkSession spark, Path input) {
    this.spark = spark;
    this.input = input;
  }

  /** A session on the store through the relay, failing a request the relay resets at once. */
  static SparkSession.Builder session(String master, TestStore store, StoreRelay relay) {
    SparkSession.Builder builder =
        SparkSessions.plainBuilder(master, store)
            .config("spark.hadoop.fs.s3a.endpoint", relay.endpoint().toString())
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.hadoop.fs.s3a.attempts.maximum", "1")
            .config("spark.hadoop.fs.s3a.retry.limit", "1")
            .config("spark.hadoop.fs.s3a.retry.interval", "10ms");
    store
        .emptyObjectSettings()
        .forEach((key, value) -> builder.config("spark.hadoop." + key, value));
    return builder;
  }

  /** The bucket the next queries write to; the settings of the last test are unset. */
  void in(BucketView bucket) {
    this.view = bucket;
    spark.conf().unset(WriteonceCheckpointFileManager.SETTING);
    spark.conf().unset(WriteonceStreamingCommitProtocol.SETTING);
  }

  /** Input files {@code from} to {@code to - 1}, ten rows each, ten seconds of event time apart. */
  void writeInput(int from, int to) throws IOException {
    for (int batch = from; batch < to; batch++) {
      StringBuilder lines = new StringBuilder();
      for (int row = 0; row < ROWS_PER_BATCH; row++) {
        long id = batch * ROWS_PER_BATCH + row;
        lines
            .append("{\"id\":")
            .append(id)
            .append(",\"ts\":\"")
            .append(java.time.Instant.ofEpochSecond(1_700_000_000L + batch * 100L + row))
            .append("\"}\n");
      }
      Path file = input.resolve("part-" + batch + ".json");
      Files.writeString(file, lines);
      // The file source takes files oldest first: one batch per file, in this order.
      Files.setLastModifiedTime(
          file, java.nio.file.attribute.FileTime.fromMillis(1_700_000_000_000L + batch * 1000L));
    }
  }

  /** Copies an input file to another input directory, keeping its age. */
  void copyInput(int batch, Path to) throws IOException {
    Path file = input.resolve("part-" + batch + ".json");
    Files.copy(file, to.resolve(file.getFileName()));
    Files.setLastModifiedTime(to.resolve(file.getFileName()), Files.getLastModifiedTime(file));
  }

  /** The input files as a stream, one file per micro-batch. */
  Dataset<Row> source(Path from) {
    return spark
        .readStream()
        .schema("id LONG, ts TIMESTAMP")
        .option("maxFilesPerTrigger", "1")
        .json(from.toString());
  }

  /** The ids of the input, each batch repartitioned into two. */
  Dataset<Row> ids(Path from) {
    return source(from).repartition(2).select("id");
  }

  /** Runs the query until it has read every input file. */
  void run(String dir, Dataset<Row> rows) throws Exception {
    StreamingQuery query =
        rows.writeStream()
            .format("parquet")
            .outputMode("append")
            .option("checkpointLocation", view.uri(dir + "checkpoint"))
            .trigger(Trigger.AvailableNow())
            .start(view.uri(dir + "sink"));
    query.awaitTermination();
  }

  /**
   * A query on a fresh input directory under the input, that has run its first batch; the second
   * input file is then added. Returns the directory.
   */
  Path startTwoBatches(String dir, java.util.function.Function<Path, Dataset<Row>> query)
      throws Exception {
    Path from = Files.createDirectories(input.resolve(dir));
    copyInput(0, from);
    run(dir, query.apply(from));
    copyInput(1, from);
    return from;
  }

  /**
   * The checkpoint file manager; the store check is taken now, as a long-running query takes it.
   */
  void useWriteonceManager() throws IOException {
    spark
        .conf()
        .set(
            WriteonceCheckpointFileManager.SETTING, WriteonceCheckpointFileManager.class.getName());
    org.apache.hadoop.fs.Path root = new org.apache.hadoop.fs.Path(view.uri(""));
    FileSystem fs = root.getFileSystem(spark.sparkContext().hadoopConfiguration());
    StoreTrust.require(fs, "", spark.sparkContext().hadoopConfiguration(), "streaming test");
  }

  void useWriteonceSink() {
    spark
        .conf()
        .set(
            WriteonceStreamingCommitProtocol.SETTING,
            WriteonceStreamingCommitProtocol.class.getName());
  }

  /** The ids the sink holds as its log says, sorted; a row written twice appears twice. */
  List<Long> sinkIds(String dir) {
    return spark.read().parquet(view.uri(dir + "sink")).orderBy("id").collectAsList().stream()
        .map(row -> row.getLong(0))
        .toList();
  }

  /** The ids of the input files {@code fromBatch} to {@code toBatch - 1}. */
  static List<Long> ids(int fromBatch, int toBatch) {
    return java.util.stream.LongStream.range(fromBatch * ROWS_PER_BATCH, toBatch * ROWS_PER_BATCH)
        .boxed()
        .toList();
  }
}
