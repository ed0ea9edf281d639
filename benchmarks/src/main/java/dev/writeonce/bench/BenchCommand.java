package dev.writeonce.bench;

import dev.writeonce.cli.Main;
import dev.writeonce.teststore.S3Api;
import dev.writeonce.teststore.Traffic;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.sql.Dataset;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
    name = "bench",
    mixinStandardHelpOptions = true,
    description =
        "Start a test store (a local MinIO unless --store) and Spark in local mode; write Parquet at"
            + " several file counts through every way of committing it, and a TeraSort-like sort-and-write job; write CSV,"
            + " PNG charts and a Markdown report (machine, versions, targets) into --out.")
final class BenchCommand implements Callable<Integer> {

  @Option(
      names = "--files",
      split = ",",
      defaultValue = "100,1000,10000",
      description = "output file counts (100,1000,10000)")
  List<Integer> fileCounts;

  @Option(names = "--tasks", defaultValue = "20", description = "write tasks (20)")
  int tasks;

  @Option(names = "--rows-per-file", defaultValue = "100", description = "rows per file (100)")
  int rowsPerFile;

  @Option(
      names = "--rename-max-files",
      defaultValue = "1000",
      description =
          "largest file count for FileOutputCommitter on S3A, whose renames copy file by file"
              + " (1000)")
  int renameMaxFiles;

  @Option(
      names = "--shim-max-files",
      defaultValue = "10000",
      description =
          "largest file count for FileOutputCommitter through the rename shim, whose job commit"
              + " completes file by file (10000)")
  int shimMaxFiles;

  @Option(
      names = "--terasort-rows",
      defaultValue = "2000000",
      description = "rows of 100 bytes for the TeraSort-like job, 0 to skip it (2000000)")
  long terasortRows;

  @Option(
      names = "--one-file-tasks",
      defaultValue = "100",
      description =
          "the shape where each task writes one file: this many tasks, 0 to skip it (100)")
  int oneFileTasks;

  @Option(
      names = "--overwrite-files",
      defaultValue = "80",
      description =
          "the dynamic partition overwrite: files written into 4 of 8 partitions by files/4"
              + " tasks, 0 to skip it (80)")
  int overwriteFiles;

  @Option(
      names = "--out",
      defaultValue = "docs/benchmarks",
      description =
          "output directory; the files of a store other than minio are named bench-<store>.md,"
              + " bench-files-<store>.csv and so on (docs/benchmarks)")
  Path out;

  @Mixin StoreOption storeOption;

  @Option(
      names = "--only",
      split = ",",
      description =
          "committers to run, by short name: foc-v1, hadoop-magic, hadoop-directory,"
              + " writeonce-directory, writeonce-magic, shim (default: all)")
  List<String> only;

  @Option(
      names = "--conf",
      description =
          "a setting for every write, KEY=VALUE (repeatable), e.g. writeonce.commit.threads=64")
  Map<String, String> settings = new LinkedHashMap<>();

  @Spec picocli.CommandLine.Model.CommandSpec spec;

  /** One row of the file-count CSV. */
  record Row(int files, SparkWrites.WriteCost outcome) {}

  /** A write of one of the shapes beside the file counts. */
  record Shape(String name, SparkWrites.WriteCost outcome) {}

  @Override
  public Integer call() throws Exception {
    PrintWriter console = spec.commandLine().getOut();
    if (tasks < 1 || rowsPerFile < 1 || fileCounts.stream().anyMatch(n -> n < tasks)) {
      spec.commandLine().getErr().println("bench: --files must be at least --tasks, all positive");
      return Main.USAGE;
    }
    List<SparkWrites.Variant> variants;
    try {
      variants = only == null ? SparkWrites.variants() : SparkWrites.variantsByShortName(only);
    } catch (IllegalArgumentException e) {
      spec.commandLine().getErr().println("bench: " + e.getMessage());
      return Main.USAGE;
    }
    Files.createDirectories(out);
    List<Row> rows = new ArrayList<>();
    List<SparkWrites.WriteCost> sorts = new ArrayList<>();
    List<Shape> shapes = new ArrayList<>();
    String versions;
    try (SparkWrites writes = SparkWrites.start(console, tasks, storeOption.name)) {
      settings.forEach((key, value) -> writes.spark().conf().set(key, value));
      versions =
          String.format(
              Locale.ROOT,
              "this project at commit %s; Spark %s (local[2]), Hadoop %s, %s",
              System.getProperty("writeonce.commit", "(unknown)"),
              writes.spark().version(),
              org.apache.hadoop.util.VersionInfo.getVersion(),
              storeVersion());
      rows.addAll(fileCountRuns(writes, variants, console));
      shapes.addAll(shapeRuns(writes, variants, console));
      if (terasortRows > 0) {
        sorts.addAll(sortRuns(writes, variants, console));
      }
    }
    writeCsv(rows);
    writeTerasortCsv(sorts);
    writeCharts(rows);
    Path report = out.resolve(named("bench", "md"));
    Files.writeString(
        report,
        BenchReport.markdown(
            rows, shapes, sorts, machine(), versions, storeLine(), commandLine(), this::named));
    console.println(
        "wrote "
            + report
            + ", "
            + named("bench-files", "csv")
            + ", "
            + named("bench-terasort", "csv")
            + " and the charts");
    return Main.OK;
  }

  /** Each variant at each file count: the files table. */
  private List<Row> fileCountRuns(
      SparkWrites writes, List<SparkWrites.Variant> variants, PrintWriter console)
      throws Exception {
    List<Row> rows = new ArrayList<>();
    for (int files : fileCounts) {
      int partitions = Math.max(1, files / tasks);
      Dataset<org.apache.spark.sql.Row> data =
          writes
              .spark()
              .range((long) files * rowsPerFile)
              .selectExpr(
                  "id",
                  "sha2(CAST(id AS STRING), 256) AS h",
                  "CAST(pmod(hash(id), " + partitions + ") AS INT) AS part")
              .repartition(tasks)
              .cache();
      data.count();
      for (SparkWrites.Variant variant : variants) {
        if (variant.renames()
            && files > (variant.name().equals(SparkWrites.SHIM) ? shimMaxFiles : renameMaxFiles)) {
          continue;
        }
        console.printf(Locale.ROOT, "%,d files through %s...%n", files, variant.name());
        console.flush();
        SparkWrites.WriteCost outcome = writes.write(variant, data, "part");
        console.printf(
            Locale.ROOT,
            "  %,d files, %.2f requests per file, job %.1f s, job commit %.2f s%n",
            outcome.files(),
            outcome.requestsPerFile(),
            outcome.jobSeconds(),
            outcome.timings().jobCommitSeconds());
        rows.add(new Row(files, outcome));
      }
      data.unpersist();
    }
    return rows;
  }

  /** Shapes that cost the shim more than the file counts: one file per task, an overwrite. */
  private List<Shape> shapeRuns(
      SparkWrites writes, List<SparkWrites.Variant> variants, PrintWriter console)
      throws Exception {
    List<Shape> shapes = new ArrayList<>();
    for (SparkWrites.Variant variant : variants) {
      if (oneFileTasks > 0) {
        Dataset<org.apache.spark.sql.Row> data =
            writes
                .spark()
                .range((long) oneFileTasks * rowsPerFile)
                .selectExpr("id", "sha2(CAST(id AS STRING), 256) AS h")
                .repartition(oneFileTasks);
        console.printf(
            Locale.ROOT,
            "%,d tasks of one file each through %s...%n",
            oneFileTasks,
            variant.name());
        console.flush();
        shapes.add(
            shape(
                console,
                "one file per task (" + oneFileTasks + " tasks)",
                writes.write(variant, data)));
      }
      if (overwriteFiles > 0 && variant.overwrites()) {
        int tasks = Math.max(1, overwriteFiles / 4);
        Dataset<org.apache.spark.sql.Row> table =
            writes
                .spark()
                .range(8L * tasks * rowsPerFile)
                .selectExpr(
                    "id", "sha2(CAST(id AS STRING), 256) AS h", "CAST(id % 8 AS INT) AS part")
                .repartition(tasks);
        Dataset<org.apache.spark.sql.Row> data =
            writes
                .spark()
                .range(4L * tasks * rowsPerFile)
                .selectExpr(
                    "id + 1000000000 AS id",
                    "sha2(CAST(id AS STRING), 256) AS h",
                    "CAST(id % 4 AS INT) AS part")
                .repartition(tasks);
        console.printf(
            Locale.ROOT,
            "dynamic overwrite of 4 of 8 partitions, %,d files, through %s...%n",
            overwriteFiles,
            variant.name());
        console.flush();
        shapes.add(
            shape(
                console,
                "dynamic partition overwrite (" + overwriteFiles + " files)",
                writes.overwritePartitions(variant, table, data, "part")));
      }
    }
    return shapes;
  }

  private static Shape shape(PrintWriter console, String name, SparkWrites.WriteCost outcome) {
    console.printf(
        Locale.ROOT,
        "  %,d files, %.2f requests per file, job %.1f s, job commit %.2f s: %s%n",
        outcome.files(),
        outcome.requestsPerFile(),
        outcome.jobSeconds(),
        outcome.timings().jobCommitSeconds(),
        outcome.traffic());
    return new Shape(name, outcome);
  }

  /** Each variant on the TeraSort-like job, but Hadoop's directory committer. */
  private List<SparkWrites.WriteCost> sortRuns(
      SparkWrites writes, List<SparkWrites.Variant> variants, PrintWriter console)
      throws Exception {
    List<SparkWrites.WriteCost> sorts = new ArrayList<>();
    for (SparkWrites.Variant variant : variants) {
      if (variant.name().equals(SparkWrites.HADOOP_DIRECTORY)) {
        continue; // a staging committer like writeonce's directory committer; kept shorter
      }
      String name = variant.name();
      console.printf(
          Locale.ROOT, "TeraSort-like job, %,d rows, through %s...%n", terasortRows, name);
      console.flush();
      Dataset<org.apache.spark.sql.Row> sorted =
          writes
              .spark()
              .range(terasortRows)
              .selectExpr(
                  "substr(sha2(CAST(id AS STRING), 256), 1, 10) AS key",
                  "concat(sha2(CAST(id * 7 AS STRING), 256), substr(sha2(CAST(id * 13 AS"
                      + " STRING), 256), 1, 26)) AS value")
              .sort("key");
      SparkWrites.WriteCost outcome = writes.write(variant, sorted);
      console.printf(
          Locale.ROOT,
          "  %d files, job %.1f s, output commit %.2f s%n",
          outcome.files(),
          outcome.jobSeconds(),
          outcome.timings().commitSeconds());
      sorts.add(outcome);
    }
    return sorts;
  }

  private String commandLine() {
    List<String> args = new ArrayList<>(spec.commandLine().getParseResult().originalArgs());
    if (!args.isEmpty() && args.get(0).equals("bench")) {
      args.remove(0);
    }
    return ("scripts/bench.sh " + String.join(" ", args)).strip();
  }

  /** A file of this run: {@code base.ext} for MinIO, {@code base-<store>.ext} for the others. */
  String named(String base, String extension) {
    return storeOption.name.equals("minio")
        ? base + "." + extension
        : base + "-" + storeOption.name + "." + extension;
  }

  /** Which server the run wrote to, and its version where it is known. */
  private String storeVersion() {
    return switch (storeOption.name) {
      case "minio" ->
          "MinIO built from module version "
              + Optional.ofNullable(System.getenv("WRITEONCE_MINIO_VERSION")).orElse(pinnedMinio());
      case "ceph-rgw" -> "Ceph RGW " + commandOutput("radosgw", "--version");
      default -> "the S3 endpoint in WRITEONCE_S3_ENDPOINT";
    };
  }

  private String storeLine() {
    return switch (storeOption.name) {
      case "minio" -> "one local MinIO process on the same machine";
      case "ceph-rgw" ->
          "a local single-node Ceph cluster on the same machine (one monitor, one OSD on"
              + " memstore, one radosgw), from the distribution's packages";
      default -> "the S3 endpoint given in the environment";
    };
  }

  /** The first line a command prints, or "(version unknown)". */
  private static String commandOutput(String... command) {
    try {
      Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
      String first = new String(process.getInputStream().readAllBytes()).strip().split("\n")[0];
      process.waitFor();
      return first.isEmpty() ? "(version unknown)" : first;
    } catch (IOException e) {
      return "(version unknown)";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "(version unknown)";
    }
  }

  /** The MinIO module version the project pins, from its provisioning script, if found. */
  private static String pinnedMinio() {
    Path script = Path.of("scripts", "provision-minio.sh");
    try {
      Matcher m = Pattern.compile("MINIO_VERSION:-([^}]+)\\}").matcher(Files.readString(script));
      return m.find() ? m.group(1) : "(pinned)";
    } catch (IOException e) {
      return "(pinned)";
    }
  }

  static String machine() {
    long memory =
        ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
            .getTotalMemorySize();
    return String.format(
        Locale.ROOT,
        "%d cores, %.0f GiB, %s %s, Java %s; run on %s",
        Runtime.getRuntime().availableProcessors(),
        memory / 1073741824.0,
        System.getProperty("os.name"),
        System.getProperty("os.version"),
        System.getProperty("java.version"),
        LocalDate.now());
  }

  private void writeCsv(List<Row> rows) throws IOException {
    StringBuilder csv =
        new StringBuilder(
            "committer,files,requests,requests_per_file,copy,put,multipart,head_get,list,delete,"
                + "bytes_in,data_bytes,job_s,task_commit_s,job_commit_s\n");
    for (Row row : rows) {
      SparkWrites.WriteCost o = row.outcome();
      Traffic t = o.traffic();
      csv.append(
          String.format(
              Locale.ROOT,
              "\"%s\",%d,%d,%.4f,%d,%d,%d,%d,%d,%d,%d,%d,%.3f,%.3f,%.3f%n",
              o.variant().name(),
              o.files(),
              t.totalRequests(),
              o.requestsPerFile(),
              t.requests(S3Api.COPY_OBJECT),
              t.requests(S3Api.PUT_OBJECT),
              t.requests(S3Api.CREATE_MULTIPART_UPLOAD)
                  + t.requests(S3Api.UPLOAD_PART)
                  + t.requests(S3Api.COMPLETE_MULTIPART_UPLOAD),
              t.requests(S3Api.HEAD_OBJECT) + t.requests(S3Api.GET_OBJECT),
              t.requests(S3Api.LIST_OBJECTS),
              t.requests(S3Api.DELETE_OBJECT) + t.requests(S3Api.DELETE_OBJECTS),
              t.bytesReceived(),
              o.dataBytes(),
              o.jobSeconds(),
              o.timings().taskCommitSeconds(),
              o.timings().jobCommitSeconds()));
    }
    Files.writeString(out.resolve(named("bench-files", "csv")), csv.toString());
  }

  private void writeTerasortCsv(List<SparkWrites.WriteCost> sorts) throws IOException {
    if (sorts.isEmpty()) {
      return;
    }
    StringBuilder csv =
        new StringBuilder(
            "committer,rows,files,requests,copy,bytes_in,data_bytes,job_s,task_commit_s,"
                + "job_commit_s,commit_s\n");
    for (SparkWrites.WriteCost o : sorts) {
      csv.append(
          String.format(
              Locale.ROOT,
              "\"%s\",%d,%d,%d,%d,%d,%d,%.3f,%.3f,%.3f,%.3f%n",
              o.variant().name(),
              terasortRows,
              o.files(),
              o.traffic().totalRequests(),
              o.traffic().requests(S3Api.COPY_OBJECT),
              o.traffic().bytesReceived(),
              o.dataBytes(),
              o.jobSeconds(),
              o.timings().taskCommitSeconds(),
              o.timings().jobCommitSeconds(),
              o.timings().commitSeconds()));
    }
    Files.writeString(out.resolve(named("bench-terasort", "csv")), csv.toString());
  }

  private void writeCharts(List<Row> rows) throws IOException {
    Charts requests =
        new Charts("Store requests per output file", "output files", "requests per file");
    Charts jobCommit =
        new Charts("Job commit time against file count", "output files", "job commit, seconds");
    Charts commit =
        new Charts("Output-commit work (task commits + job commit)", "output files", "seconds");
    for (Row row : rows) {
      SparkWrites.WriteCost o = row.outcome();
      requests.add(o.variant().name(), o.files(), o.requestsPerFile());
      jobCommit.add(o.variant().name(), o.files(), o.timings().jobCommitSeconds());
      commit.add(o.variant().name(), o.files(), o.timings().commitSeconds());
    }
    requests.writePng(out.resolve(named("bench-requests-per-file", "png")));
    jobCommit.writePng(out.resolve(named("bench-job-commit", "png")));
    commit.writePng(out.resolve(named("bench-commit-work", "png")));
  }
}
