package dev.writeonce.bench;

import dev.writeonce.cli.Main;
import dev.writeonce.teststore.S3Api;
import dev.writeonce.teststore.Traffic;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;

/**
 * One Spark write workload through every way of committing it ({@link SparkWrites#variants()}), on
 * one local MinIO in one run, and one table of the store's own counts and the commit times.
 */
final class SparkComparison {

  private SparkComparison() {}

  /** Runs every variant on a fresh bucket of one MinIO and prints the table. */
  static int run(PrintWriter out, int rows, int tasks) throws Exception {
    try (SparkWrites writes = SparkWrites.start(out, tasks)) {
      Dataset<Row> data =
          writes
              .spark()
              .range(rows)
              .selectExpr("id", "sha2(CAST(id AS STRING), 256) AS h", "CAST(id % 5 AS INT) AS day")
              .repartition(tasks)
              .cache();
      data.count();
      List<SparkWrites.WriteCost> outcomes = new ArrayList<>();
      for (SparkWrites.Variant variant : SparkWrites.variants()) {
        out.println("writing through " + variant.name() + "...");
        out.flush();
        outcomes.add(writes.write(variant, data, "day"));
      }
      print(out, outcomes, rows, tasks);
      return Main.OK;
    }
  }

  static void print(PrintWriter out, List<SparkWrites.WriteCost> outcomes, int rows, int tasks) {
    out.println();
    out.printf(
        Locale.ROOT,
        "%d rows from %d tasks as Parquet partitioned by 5 days; one MinIO, one run; counts by the"
            + " store%n%n",
        rows,
        tasks);
    out.printf(
        Locale.ROOT,
        "%-40s %5s %8s %8s %5s %9s %5s %5s %5s %5s %6s %7s %7s %6s %8s %9s%n",
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
        "job s",
        "commit s",
        "job cmt s");
    for (SparkWrites.WriteCost o : outcomes) {
      printRow(out, o);
    }
    out.println();
    out.println(
        "COPY/data: bytes copied inside the store per byte of output (each COPY moves one file)."
            + " HEAD includes GET. MPU: create, part and complete of multipart uploads. MiB in:"
            + " received by the store. job s: the whole write. commit s: every task commit (summed"
            + " over tasks) plus the job commit; a staging committer uploads its files in its task"
            + " commit. job cmt s: the"
            + " job commit alone.");
    out.flush();
  }

  private static void printRow(PrintWriter out, SparkWrites.WriteCost o) {
    Traffic t = o.traffic();
    long mpu =
        t.requests(S3Api.CREATE_MULTIPART_UPLOAD)
            + t.requests(S3Api.UPLOAD_PART)
            + t.requests(S3Api.COMPLETE_MULTIPART_UPLOAD);
    out.printf(
        Locale.ROOT,
        "%-40s %5d %8d %8.2f %5d %9.2f %5d %5d %5d %5d %6d %7.1f %7.1f %6.2f %8.2f %9.2f%n",
        o.variant().name(),
        o.files(),
        t.totalRequests(),
        o.requestsPerFile(),
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
        o.jobSeconds(),
        o.timings().commitSeconds(),
        o.timings().jobCommitSeconds());
  }
}
