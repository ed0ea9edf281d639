package dev.writeonce.bench;

import dev.writeonce.magic.MagicS3AFileSystem;
import dev.writeonce.shim.RenameShimFileSystem;
import dev.writeonce.spark.WriteonceCommitProtocol;
import dev.writeonce.teststore.BucketView;
import dev.writeonce.teststore.TestStore;
import dev.writeonce.teststore.TestStores;
import dev.writeonce.teststore.Traffic;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.sql.DataFrameWriter;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * Spark writes through every way of committing them, on one local MinIO: Spark's default
 * FileOutputCommitter v1 on S3A (rename = COPY + DELETE), Hadoop's own S3A magic and directory
 * committers through spark-hadoop-cloud, this project's directory and magic committers, and the
 * rename shim under FileOutputCommitter v1. Each write goes to a fresh bucket; the store's own
 * counters and {@link TimedCommitProtocol} measure it.
 */
final class SparkWrites implements AutoCloseable {

  /** One way of committing: a name, the protocol to time and the session settings. */
  record Variant(String name, String protocol, Map<String, String> settings) {
    /** Whether the commit renames files (FileOutputCommitter), so its cost grows with copies. */
    boolean renames() {
      return protocol.equals(SPARK_PROTOCOL);
    }

    /** Whether the protocol supports Spark's dynamic partition overwrite. */
    boolean overwrites() {
      return !protocol.equals(HADOOP_PROTOCOL);
    }
  }

  /** What one write cost. */
  record WriteCost(
      Variant variant,
      int files,
      long dataBytes,
      Traffic traffic,
      long jobNanos,
      TimedCommitProtocol.Timings timings) {
    double requestsPerFile() {
      return (double) traffic.totalRequests() / Math.max(1, files);
    }

    double jobSeconds() {
      return jobNanos / 1e9;
    }
  }

  static final String SPARK_PROTOCOL =
      "org.apache.spark.sql.execution.datasources.SQLHadoopMapReduceCommitProtocol";
  private static final String HADOOP_PROTOCOL =
      "org.apache.spark.internal.io.cloud.PathOutputCommitProtocol";
  private static final String HADOOP_PARQUET =
      "org.apache.spark.internal.io.cloud.BindingParquetOutputCommitter";
  private static final String SPARK_PARQUET = "org.apache.parquet.hadoop.ParquetOutputCommitter";
  private static final String S3A = "org.apache.hadoop.fs.s3a.S3AFileSystem";

  static final String FOC_V1 = "FileOutputCommitter v1, S3A rename";
  static final String HADOOP_MAGIC = "Hadoop S3A magic committer";
  static final String HADOOP_DIRECTORY = "Hadoop S3A directory committer";
  static final String WRITEONCE_DIRECTORY = "writeonce directory committer";
  static final String WRITEONCE_MAGIC = "writeonce magic committer";
  static final String SHIM = "FileOutputCommitter v1 + writeonce shim";

  static List<Variant> variants() {
    List<Variant> variants = new ArrayList<>();
    variants.add(variant(FOC_V1, SPARK_PROTOCOL, SPARK_PARQUET, S3A, Map.of()));
    variants.add(
        variant(
            HADOOP_MAGIC,
            HADOOP_PROTOCOL,
            HADOOP_PARQUET,
            S3A,
            Map.of("fs.s3a.committer.name", "magic", "fs.s3a.committer.magic.enabled", "true")));
    variants.add(
        variant(
            HADOOP_DIRECTORY,
            HADOOP_PROTOCOL,
            HADOOP_PARQUET,
            S3A,
            Map.of(
                "fs.s3a.committer.name",
                "directory",
                "fs.s3a.committer.staging.conflict-mode",
                "append")));
    variants.add(
        variant(
            WRITEONCE_DIRECTORY,
            WriteonceCommitProtocol.class.getName(),
            SPARK_PARQUET,
            S3A,
            Map.of("writeonce.committer", "directory")));
    variants.add(
        variant(
            WRITEONCE_MAGIC,
            WriteonceCommitProtocol.class.getName(),
            SPARK_PARQUET,
            MagicS3AFileSystem.class.getName(),
            Map.of("writeonce.committer", "magic")));
    variants.add(
        variant(
            SHIM, SPARK_PROTOCOL, SPARK_PARQUET, RenameShimFileSystem.class.getName(), Map.of()));
    return variants;
  }

  /** The variants with these names, in the order given. */
  static List<Variant> variants(List<String> names) {
    List<Variant> chosen = new ArrayList<>();
    for (String name : names) {
      chosen.add(
          variants().stream()
              .filter(v -> v.name().equals(name))
              .findFirst()
              .orElseThrow(() -> new IllegalArgumentException("no variant " + name)));
    }
    return chosen;
  }

  /** Short names for the command line, in the order of {@link #variants()}. */
  static final List<String> SHORT_NAMES =
      List.of(
          "foc-v1",
          "hadoop-magic",
          "hadoop-directory",
          "writeonce-directory",
          "writeonce-magic",
          "shim");

  /** The variants with these short names, in the order given. */
  static List<Variant> variantsByShortName(List<String> shortNames) {
    List<String> names = new ArrayList<>();
    List<Variant> all = variants();
    for (String shortName : shortNames) {
      int index = SHORT_NAMES.indexOf(shortName.trim());
      if (index < 0) {
        throw new IllegalArgumentException(
            "no committer '" + shortName + "': use one of " + String.join(", ", SHORT_NAMES));
      }
      names.add(all.get(index).name());
    }
    return variants(names);
  }

  private static Variant variant(
      String name,
      String protocol,
      String parquetCommitter,
      String fileSystem,
      Map<String, String> more) {
    Map<String, String> settings = new LinkedHashMap<>();
    settings.put("spark.sql.sources.commitProtocolClass", TimedCommitProtocol.class.getName());
    settings.put("spark.sql.parquet.output.committer.class", parquetCommitter);
    settings.put("fs.s3a.impl", fileSystem);
    settings.put(
        "mapreduce.outputcommitter.factory.scheme.s3a",
        "org.apache.hadoop.fs.s3a.commit.S3ACommitterFactory");
    settings.putAll(more);
    return new Variant(name, protocol, settings);
  }

  private final TestStore store;
  private final SparkSession spark;
  private final PrintWriter out;

  private SparkWrites(TestStore store, SparkSession spark, PrintWriter out) {
    this.store = store;
    this.spark = spark;
    this.out = out;
    TimedCommitProtocol.meter(
        () -> {
          try {
            return store.meter().read();
          } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
          }
        });
  }

  /** Starts a local MinIO and Spark in local mode with two cores. */
  static SparkWrites start(PrintWriter out, int shufflePartitions) throws IOException {
    return start(out, shufflePartitions, "minio");
  }

  /**
   * Starts a test store by its registered name (minio, ceph-rgw, or external for the endpoint in
   * the environment) and Spark in local mode with two cores.
   */
  static SparkWrites start(PrintWriter out, int shufflePartitions, String storeName)
      throws IOException {
    out.println(
        "Starting the "
            + storeName
            + " store (a first run builds or installs the server, a few minutes)...");
    out.flush();
    TestStore store = TestStores.get(storeName);
    SparkSession.Builder builder =
        SparkSession.builder()
            .master("local[2]")
            .appName("writeonce-bench")
            .config("spark.ui.enabled", "false")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.sql.shuffle.partitions", Integer.toString(shufflePartitions))
            // One file per task, as set: adaptive execution would merge small shuffle partitions.
            .config("spark.sql.adaptive.coalescePartitions.enabled", "false")
            .config(
                "spark.hadoop.fs.s3a.committer.staging.tmp.path",
                "file:///tmp/writeonce-bench-staging");
    for (Map.Entry<String, String> setting : store.configure(new Configuration(false))) {
      builder.config("spark.hadoop." + setting.getKey(), setting.getValue());
    }
    // Every variant gets them, so that the committers that write empty objects run at all and
    // all variants sign alike.
    store
        .emptyObjectSettings()
        .forEach((key, value) -> builder.config("spark.hadoop." + key, value));
    return new SparkWrites(store, builder.getOrCreate(), out);
  }

  /**
   * One line per shim job commit: its time, the shim's calls by kind with the time their caller
   * spent in them (barrier waits included), the barrier waits alone, and the store's requests.
   */
  private void printProfile(int files, TimedCommitProtocol.JobCommitProfile profile) {
    Map<String, Long> shim = profile.shim();
    StringBuilder line = new StringBuilder();
    line.append(
        String.format("shim job commit profile, %,d files: %.2f s;", files, profile.nanos() / 1e9));
    for (String kind : List.of("read", "status", "rename", "create", "delete", "mkdirs", "await")) {
      line.append(
          String.format(
              " %s %d calls %d ms;",
              kind,
              shim.getOrDefault(kind + "_calls", 0L),
              shim.getOrDefault(kind + "_millis", 0L)));
    }
    line.append(
        String.format(
            " barrier waits %d ms (%d);", shim.get("barrier_wait_millis"), shim.get("barriers")));
    line.append(" requests:");
    profile
        .traffic()
        .requests()
        .forEach(
            (api, count) -> {
              if (count > 0) {
                line.append(" ").append(api).append(" ").append(count);
              }
            });
    out.println(line);
    out.println("  shim statistics of the job commit: " + shim);
    out.flush();
  }

  SparkSession spark() {
    return spark;
  }

  /**
   * Writes the data as Parquet through one variant into a fresh bucket.
   *
   * @param partitionBy partition columns, none for an unpartitioned write
   */
  WriteCost write(Variant variant, Dataset<Row> data, String... partitionBy) throws IOException {
    String bucket = store.newBucket("bench");
    variant.settings().forEach((key, value) -> spark.conf().set(key, value));
    TimedCommitProtocol.time(variant.protocol());
    Traffic before = store.meter().read();
    long start = System.nanoTime();
    DataFrameWriter<Row> writer = data.write();
    if (partitionBy.length > 0) {
      writer = writer.partitionBy(partitionBy);
    }
    writer.parquet("s3a://" + bucket + "/out/");
    long jobNanos = System.nanoTime() - start;
    Traffic traffic = store.meter().read().minus(before);
    TimedCommitProtocol.Timings timings = TimedCommitProtocol.timings();
    BucketView view = new BucketView(store, bucket);
    int files = 0;
    long bytes = 0;
    for (String key : view.keys("out/")) {
      if (key.endsWith(".parquet")) {
        files++;
        bytes += view.size(key);
      }
    }
    int written = files;
    TimedCommitProtocol.lastProfile().ifPresent(profile -> printProfile(written, profile));
    return new WriteCost(variant, files, bytes, traffic, jobNanos, timings);
  }

  /**
   * A dynamic partition overwrite: a table of {@code tablePartitions} partitions written first,
   * then {@code overwrittenPartitions} of them replaced by the given data, through one variant into
   * a fresh bucket. Only the overwrite is measured.
   */
  WriteCost overwritePartitions(
      Variant variant, Dataset<Row> table, Dataset<Row> data, String column) throws IOException {
    String bucket = store.newBucket("bench");
    variant.settings().forEach((key, value) -> spark.conf().set(key, value));
    String path = "s3a://" + bucket + "/out/";
    table.write().partitionBy(column).parquet(path);
    spark.conf().set("spark.sql.sources.partitionOverwriteMode", "dynamic");
    try {
      TimedCommitProtocol.time(variant.protocol());
      Traffic before = store.meter().read();
      long start = System.nanoTime();
      data.write().mode("overwrite").partitionBy(column).parquet(path);
      long jobNanos = System.nanoTime() - start;
      Traffic traffic = store.meter().read().minus(before);
      TimedCommitProtocol.Timings timings = TimedCommitProtocol.timings();
      List<String> replaced = new ArrayList<>();
      for (Row row : data.select(column).distinct().collectAsList()) {
        replaced.add("out/" + column + "=" + row.get(0) + "/");
      }
      BucketView view = new BucketView(store, bucket);
      int files = 0;
      long bytes = 0;
      for (String key : view.keys("out/")) {
        if (key.endsWith(".parquet") && replaced.stream().anyMatch(key::startsWith)) {
          files++;
          bytes += view.size(key);
        }
      }
      return new WriteCost(variant, files, bytes, traffic, jobNanos, timings);
    } finally {
      spark.conf().unset("spark.sql.sources.partitionOverwriteMode");
    }
  }

  @Override
  public void close() throws IOException {
    try {
      spark.stop();
    } finally {
      store.close();
    }
  }
}
