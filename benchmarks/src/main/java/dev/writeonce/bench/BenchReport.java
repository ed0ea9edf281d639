package dev.writeonce.bench;

import dev.writeonce.teststore.S3Api;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.BinaryOperator;

/** The Markdown report of a bench run: tables, charts and the targets, met or not. */
final class BenchReport {

  private BenchReport() {}

  static String markdown(
      List<BenchCommand.Row> rows,
      List<BenchCommand.Shape> shapes,
      List<SparkWrites.WriteCost> sorts,
      String machine,
      String versions,
      String store,
      String command,
      BinaryOperator<String> named) {
    StringBuilder md = new StringBuilder("# Benchmark: file counts and a TeraSort-like job\n\n");
    md.append("Written by `").append(command.strip()).append("`, one run.\n\n");
    md.append("- Machine: ").append(machine).append('\n');
    md.append("- Versions: ").append(versions).append('\n');
    md.append("- Store: ")
        .append(store)
        .append(
            "; every write goes to a fresh bucket. Requests and bytes are the store's own counts;"
                + " times are wall-clock.\n");
    md.append(
        "- Commit times come from a wrapper around each commit protocol: task commit is the sum"
            + " over tasks of `commitTask`, job commit is `commitJob`. A staging committer uploads"
            + " its files in its task commit, on the default settings: upload on close"
            + " (`writeonce.staging.upload-on-close`) is off.\n\n");

    filesSection(md, rows, named);
    if (!shapes.isEmpty()) {
      shapesSection(md, shapes);
    }
    if (!sorts.isEmpty()) {
      sortSection(md, sorts, named);
    }
    md.append("## Targets\n\n");
    countTargets(md, rows, sorts);
    jobCommitTargets(md, rows);
    sortTargets(md, sorts);
    md.append('\n');
    return md.toString();
  }

  private static void filesSection(
      StringBuilder md, List<BenchCommand.Row> rows, BinaryOperator<String> named) {
    md.append("## Output files\n\n");
    md.append(
        "Parquet partitioned so that each of the tasks writes files/tasks files, one after"
            + " another; with the default rows per file the files are small, so that requests, not"
            + " bytes, dominate. Data: `"
            + named.apply("bench-files", "csv")
            + "`.\n\n");
    md.append(
        "| committer | files | requests/file | COPY | MiB received / MiB data | job s |"
            + " task commits s | job commit s |\n");
    md.append("|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (BenchCommand.Row row : rows) {
      SparkWrites.WriteCost o = row.outcome();
      md.append(
          String.format(
              Locale.ROOT,
              "| %s | %,d | %.3f | %,d | %.2f / %.2f | %.1f | %.2f | %.2f |%n",
              o.variant().name(),
              o.files(),
              o.requestsPerFile(),
              o.traffic().requests(S3Api.COPY_OBJECT),
              o.traffic().bytesReceived() / 1048576.0,
              o.dataBytes() / 1048576.0,
              o.jobSeconds(),
              o.timings().taskCommitSeconds(),
              o.timings().jobCommitSeconds()));
    }
    md.append("\n![requests per file](")
        .append(named.apply("bench-requests-per-file", "png"))
        .append(")\n\n");
    md.append("![job commit time](").append(named.apply("bench-job-commit", "png")).append(")\n\n");
    md.append("![output-commit work](")
        .append(named.apply("bench-commit-work", "png"))
        .append(")\n\n");
  }

  private static void shapesSection(StringBuilder md, List<BenchCommand.Shape> shapes) {
    md.append("## Shapes\n\n");
    md.append(
        "Two writes whose per-task and per-partition work weighs more than in the table above:"
            + " every task writing one file (unpartitioned), and Spark's dynamic partition"
            + " overwrite of 4 of a table's 8 partitions (the table written first, not"
            + " measured).\n\n");
    md.append("| shape | committer | files | requests/file | COPY | job s | job commit s |\n");
    md.append("|---|---|---:|---:|---:|---:|---:|\n");
    for (BenchCommand.Shape shape : shapes) {
      SparkWrites.WriteCost o = shape.outcome();
      md.append(
          String.format(
              Locale.ROOT,
              "| %s | %s | %,d | %.3f | %,d | %.1f | %.2f |%n",
              shape.name(),
              o.variant().name(),
              o.files(),
              o.requestsPerFile(),
              o.traffic().requests(S3Api.COPY_OBJECT),
              o.jobSeconds(),
              o.timings().jobCommitSeconds()));
    }
    md.append('\n');
  }

  private static void sortSection(
      StringBuilder md, List<SparkWrites.WriteCost> sorts, BinaryOperator<String> named) {
    md.append("## TeraSort-like job\n\n");
    md.append(
        "Rows of a 10-byte key and a 90-byte value, sorted by key (a range shuffle) and written"
            + " as Parquet, one file per shuffle partition. Data: `"
            + named.apply("bench-terasort", "csv")
            + "`.\n\n");
    md.append(
        "| committer | files | MiB data | MiB received | COPY | job s | task commits s | job"
            + " commit s | output commit s |\n");
    md.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (SparkWrites.WriteCost o : sorts) {
      md.append(
          String.format(
              Locale.ROOT,
              "| %s | %d | %.1f | %.1f | %d | %.1f | %.2f | %.2f | %.2f |%n",
              o.variant().name(),
              o.files(),
              o.dataBytes() / 1048576.0,
              o.traffic().bytesReceived() / 1048576.0,
              o.traffic().requests(S3Api.COPY_OBJECT),
              o.jobSeconds(),
              o.timings().taskCommitSeconds(),
              o.timings().jobCommitSeconds(),
              o.timings().commitSeconds()));
    }
    md.append('\n');
  }

  private static void countTargets(
      StringBuilder md, List<BenchCommand.Row> rows, List<SparkWrites.WriteCost> sorts) {
    for (String name : List.of(SparkWrites.WRITEONCE_DIRECTORY, SparkWrites.WRITEONCE_MAGIC)) {
      long copies =
          rows.stream()
              .filter(r -> r.outcome().variant().name().equals(name))
              .mapToLong(r -> r.outcome().traffic().requests(S3Api.COPY_OBJECT))
              .sum();
      md.append(String.format(Locale.ROOT, "- %s: CopyObject in every write: %d.%n", name, copies));
      find(rows, name, 1000)
          .ifPresent(
              o ->
                  md.append(
                      String.format(
                          Locale.ROOT,
                          "  - requests per file at 1,000 files: %.3f (target at most 3.05: %s).%n",
                          o.requestsPerFile(),
                          o.requestsPerFile() <= 3.05 ? "met" : "not met")));
      sorts.stream()
          .filter(o -> o.variant().name().equals(name))
          .findFirst()
          .ifPresent(
              o -> {
                double ratio = (double) o.traffic().bytesReceived() / o.dataBytes();
                md.append(
                    String.format(
                        Locale.ROOT,
                        "  - bytes the store received per output byte, TeraSort-like job: %.4f"
                            + " (target within 1%%: %s).%n",
                        ratio,
                        Math.abs(ratio - 1) <= 0.01 ? "met" : "not met"));
              });
    }
  }

  private static void jobCommitTargets(StringBuilder md, List<BenchCommand.Row> rows) {
    int largest = rows.stream().mapToInt(BenchCommand.Row::files).max().orElse(0);
    Optional<SparkWrites.WriteCost> hadoopMagic = find(rows, SparkWrites.HADOOP_MAGIC, largest);
    for (String name : List.of(SparkWrites.WRITEONCE_MAGIC, SparkWrites.WRITEONCE_DIRECTORY)) {
      Optional<SparkWrites.WriteCost> ours = find(rows, name, largest);
      if (ours.isPresent() && hadoopMagic.isPresent()) {
        double ratio =
            ours.get().timings().jobCommitSeconds()
                / hadoopMagic.get().timings().jobCommitSeconds();
        md.append(
            String.format(
                Locale.ROOT,
                "- Job commit at %,d files, %s against Hadoop's magic committer: %.2f s against"
                    + " %.2f s, a ratio of %.2f (target at most 0.5: %s).%n",
                largest,
                name,
                ours.get().timings().jobCommitSeconds(),
                hadoopMagic.get().timings().jobCommitSeconds(),
                ratio,
                ratio <= 0.5 ? "met" : "not met"));
      }
    }
  }

  private static void sortTargets(StringBuilder md, List<SparkWrites.WriteCost> sorts) {
    Optional<SparkWrites.WriteCost> renaming =
        sorts.stream().filter(o -> o.variant().name().equals(SparkWrites.FOC_V1)).findFirst();
    for (SparkWrites.WriteCost o : sorts) {
      if (renaming.isEmpty() || !o.variant().name().startsWith("writeonce")) {
        continue;
      }
      double speedup = renaming.get().timings().commitSeconds() / o.timings().commitSeconds();
      md.append(
          String.format(
              Locale.ROOT,
              "- TeraSort-like job, %s against FileOutputCommitter v1 on S3A: output-commit work"
                  + " %.2f s against %.2f s, %.1fx faster (target at least 3x: %s); end to end"
                  + " %.1f s against %.1f s, %.2fx.%n",
              o.variant().name(),
              o.timings().commitSeconds(),
              renaming.get().timings().commitSeconds(),
              speedup,
              speedup >= 3 ? "met" : "not met",
              o.jobSeconds(),
              renaming.get().jobSeconds(),
              renaming.get().jobSeconds() / o.jobSeconds()));
    }
    if (renaming.isPresent()) {
      md.append(
          "- For comparison: in Intel's published study of S3A on a Ceph RGW cluster, a staging"
              + " committer made TeraSort 1.5x faster end to end than FileOutputCommitter's"
              + " renames.\n");
    }
  }

  private static Optional<SparkWrites.WriteCost> find(
      List<BenchCommand.Row> rows, String name, int files) {
    return rows.stream()
        .filter(r -> r.files() == files && r.outcome().variant().name().equals(name))
        .map(BenchCommand.Row::outcome)
        .findFirst();
  }
}
