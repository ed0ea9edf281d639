package dev.writeonce.cli;

import dev.writeonce.magic.MagicS3AFileSystem;
import dev.writeonce.shim.RenameShimFileSystem;
import dev.writeonce.spark.WriteonceCommitProtocol;
import dev.writeonce.teststore.BucketView;
import dev.writeonce.teststore.LocalMinio;
import dev.writeonce.teststore.S3Api;
import dev.writeonce.teststore.Traffic;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * One Spark write workload through every way of committing it, on one local MinIO in one run:
 * Spark's default FileOutputCommitter v1 on S3A (rename = COPY + DELETE), Hadoop's own S3A magic
 * and directory committers through spark-hadoop-cloud, this project's directory and magic
 * committers, and the rename shim under FileOutputCommitter v1. The store's own counters make the
 * table.
 */
final class SparkComparison {

  /** One way of committing: a name and the session settings that select it. */
  record Variant(String name, Map<String, String> settings) {}

  /** What one write cost. */
  record Outcome(Variant variant, int files, long dataBytes, Traffic traffic, long jobMillis) {}

  private static final String HADOOP_PROTOCOL =
      "org.apache.spark.internal.io.cloud.PathOutputCommitProtocol";
  private static final String HADOOP_PARQUET =
      "org.apache.spark.internal.io.cloud.BindingParquetOutputCommitter";
  private static final String SPARK_PROTOCOL =
      "org.apache.spark.sql.execution.datasources.SQLHadoopMapReduceCommitProtocol";
  private static final String SPARK_PARQUET = "org.apache.parquet.hadoop.ParquetOutputCommitter";
  private static final String S3A = "org.apache.hadoop.fs.s3a.S3AFileSystem";

  static List<Variant> variants() {
    List<Variant> variants = new ArrayList<>();
    variants.add(
        new Variant(
            "FileOutputCommitter v1, S3A rename",
            settings(SPARK_PROTOCOL, SPARK_PARQUET, S3A, Map.of())));
    variants.add(
        new Variant(
            "Hadoop S3A magic committer",
            settings(
                HADOOP_PROTOCOL,
                HADOOP_PARQUET,
                S3A,
                Map.of(
                    "fs.s3a.committer.name", "magic", "fs.s3a.committer.magic.enabled", "true"))));
    variants.add(
        new Variant(
            "Hadoop S3A directory committer",
            settings(
                HADOOP_PROTOCOL,
                HADOOP_PARQUET,
                S3A,
                Map.of(
                    "fs.s3a.committer.name",
                    "directory",
                    "fs.s3a.committer.staging.conflict-mode",
                    "append"))));
    variants.add(
        new Variant(
            "writeonce directory committer",
            settings(
                WriteonceCommitProtocol.class.getName(),
                SPARK_PARQUET,
                S3A,
                Map.of("writeonce.committer", "directory"))));
    variants.add(
        new Variant(
            "writeonce magic committer",
            settings(
                WriteonceCommitProtocol.class.getName(),
                SPARK_PARQUET,
                MagicS3AFileSystem.class.getName(),
                Map.of("writeonce.committer", "magic"))));
    variants.add(
        new Variant(
            "FileOutputCommitter v1 + writeonce shim",
            settings(
                SPARK_PROTOCOL, SPARK_PARQUET, RenameShimFileSystem.class.getName(), Map.of())));
    return variants;
  }

  private static Map<String, String> settings(
      String protocol, String parquetCommitter, String fileSystem, Map<String, String> more) {
    Map<String, String> settings = new LinkedHashMap<>();
    settings.put("spark.sql.sources.commitProtocolClass", protocol);
    settings.put("spark.sql.parquet.output.committer.class", parquetCommitter);
    settings.put("fs.s3a.impl", fileSystem);
    settings.put(
        "mapreduce.outputcommitter.factory.scheme.s3a",
        "org.apache.hadoop.fs.s3a.commit.S3ACommitterFactory");
    settings.putAll(more);
    return settings;
  }

  /** Runs every variant on a fresh bucket of one MinIO and prints the table. */
  static int run(PrintWriter out, int rows, int tasks) throws Exception {
    out.println("Starting a local MinIO (the first run builds the pinned server, ~3 minutes)...");
    try (LocalMinio minio = LocalMinio.start()) {
      SparkSession.Builder builder =
          SparkSession.builder()
              .master("local[2]")
              .appName("writeonce-demo")
              .config("spark.ui.enabled", "false")
              .config("spark.driver.host", "127.0.0.1")
              .config("spark.driver.bindAddress", "127.0.0.1")
              .config("spark.sql.shuffle.partitions", Integer.toString(tasks))
              .config(
                  "spark.hadoop.fs.s3a.committer.staging.tmp.path",
                  "file:///tmp/writeonce-demo-staging");
      for (Map.Entry<String, String> setting : minio.configure(new Configuration(false))) {
        builder.config("spark.hadoop." + setting.getKey(), setting.getValue());
      }
      SparkSession spark = builder.getOrCreate();
      try {
        Dataset<Row> data =
            spark
                .range(rows)
                .selectExpr(
                    "id", "sha2(CAST(id AS STRING), 256) AS h", "CAST(id % 5 AS INT) AS day")
                .repartition(tasks)
                .cache();
        data.count();
        List<Outcome> outcomes = new ArrayList<>();
        for (Variant variant : variants()) {
          String bucket = minio.newBucket("demo");
          variant.settings().forEach((key, value) -> spark.conf().set(key, value));
          out.println("writing through " + variant.name() + "...");
          out.flush();
          Traffic before = minio.meter().read();
          long start = System.nanoTime();
          data.write().partitionBy("day").parquet("s3a://" + bucket + "/events/");
          long jobMillis = (System.nanoTime() - start) / 1_000_000;
          Traffic traffic = minio.meter().read().minus(before);
          BucketView view = new BucketView(minio, bucket);
          int files = 0;
          long bytes = 0;
          for (String key : view.keys("events/")) {
            if (key.endsWith(".parquet")) {
              files++;
              bytes += view.size(key);
            }
          }
          outcomes.add(new Outcome(variant, files, bytes, traffic, jobMillis));
        }
        print(out, outcomes, rows, tasks);
        return Main.OK;
      } finally {
        spark.stop();
      }
    }
  }

  private static void print(PrintWriter out, List<Outcome> outcomes, int rows, int tasks) {
    out.println();
    out.printf(
        Locale.ROOT,
        "%d rows from %d tasks as Parquet partitioned by 5 days; one MinIO, one run; counts by the"
            + " store%n%n",
        rows,
        tasks);
    out.printf(
        Locale.ROOT,
        "%-40s %5s %8s %8s %6s %9s %6s %6s %6s %6s %6s %8s %8s %8s%n",
        "commit",
        "files",
        "requests",
        "req/file",
        "COPY",
        "COPY/data",
        "PUT",
        "MPU",
        "HEAD",
        "LIST",
        "DELETE",
        "MiB in",
        "MiB out",
        "job s");
    for (Outcome o : outcomes) {
      Traffic t = o.traffic();
      long mpu =
          t.requests(S3Api.CREATE_MULTIPART_UPLOAD)
              + t.requests(S3Api.UPLOAD_PART)
              + t.requests(S3Api.COMPLETE_MULTIPART_UPLOAD);
      out.printf(
          Locale.ROOT,
          "%-40s %5d %8d %8.2f %6d %9.2f %6d %6d %6d %6d %6d %8.1f %8.1f %8.2f%n",
          o.variant().name(),
          o.files(),
          t.totalRequests(),
          (double) t.totalRequests() / Math.max(1, o.files()),
          t.requests(S3Api.COPY_OBJECT),
          // Each COPY moves one whole output file.
          (double) t.requests(S3Api.COPY_OBJECT) / Math.max(1, o.files()),
          t.requests(S3Api.PUT_OBJECT),
          mpu,
          t.requests(S3Api.HEAD_OBJECT) + t.requests(S3Api.GET_OBJECT),
          t.requests(S3Api.LIST_OBJECTS),
          t.requests(S3Api.DELETE_OBJECT) + t.requests(S3Api.DELETE_OBJECTS),
          t.bytesReceived() / 1048576.0,
          t.bytesSent() / 1048576.0,
          o.jobMillis() / 1000.0);
    }
    out.println();
    out.println(
        "COPY/data: bytes copied inside the store per byte of output (each COPY moves one file)."
            + " HEAD includes GET. MPU: create, part and complete of multipart uploads. job s: the"
            + " whole write, tasks and commit.");
  }
}
