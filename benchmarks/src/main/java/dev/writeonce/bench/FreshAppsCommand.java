package dev.writeonce.bench;

import dev.writeonce.core.store.check.StoreTrust;
import dev.writeonce.teststore.S3Api;
import dev.writeonce.teststore.TestStore;
import dev.writeonce.teststore.TestStores;
import dev.writeonce.teststore.Traffic;
import java.io.File;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.sql.SparkSession;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
    name = "fresh-apps",
    mixinStandardHelpOptions = true,
    description =
        "Run one small Spark job per application, each application in a JVM of its own (a fresh"
            + " driver, as a scheduler starts one per job), on a local store, and print each job's"
            + " requests per file as the store counted them: what the store check costs a job once"
            + " its host has checked the store, and what it cost before.")
final class FreshAppsCommand implements Callable<Integer> {

  @Option(names = "--jobs", defaultValue = "5", description = "applications, one job each (5)")
  int jobs;

  @Option(
      names = "--tasks",
      defaultValue = "64",
      description = "tasks of a job, one file each (64)")
  int tasks;

  @Option(
      names = "--committer",
      defaultValue = "writeonce-directory",
      description = "writeonce-directory (default), writeonce-magic or shim")
  String committer;

  @Option(names = "--store", defaultValue = "minio", description = "minio (default) or ceph-rgw")
  String storeName;

  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    PrintWriter out = spec.commandLine().getOut();
    SparkWrites.Variant variant = SparkWrites.variantsByShortName(List.of(committer)).get(0);
    TestStore store = TestStores.get(storeName);
    Path verdicts = Files.createTempDirectory("writeonce-fresh-apps-verdicts");
    out.printf(
        "%d one-file tasks per job, %s, one application per job, on %s%n",
        tasks, variant.name(), storeName);
    out.printf(
        "%-34s %9s %6s %9s %8s %5s%n", "run", "requests", "files", "req/file", "HEAD", "jobs");
    // One bucket, as a user's jobs write tables of one warehouse: a verdict is per bucket.
    String bucket = store.newBucket("fresh");
    int run = 0;
    for (boolean checked : List.of(false, true)) {
      long total = 0;
      long files = 0;
      for (int job = 1; job <= jobs; job++) {
        String prefix = "out-" + (++run) + "/";
        Map<String, String> settings = new LinkedHashMap<>();
        for (Map.Entry<String, String> setting : store.configure(new Configuration(false))) {
          settings.put("spark.hadoop." + setting.getKey(), setting.getValue());
        }
        store.emptyObjectSettings().forEach((k, v) -> settings.put("spark.hadoop." + k, v));
        variant.settings().forEach(settings::put);
        settings.put("spark.sql.sources.commitProtocolClass", variant.protocol());
        settings.put("spark.hadoop." + StoreTrust.CHECK, Boolean.toString(checked));
        settings.put("spark.hadoop." + StoreTrust.CACHE_DIR, verdicts.toString());
        Traffic before = store.meter().read();
        runApplication("s3a://" + bucket + "/" + prefix, settings);
        Traffic traffic = store.meter().read().minus(before);
        int written =
            new dev.writeonce.teststore.BucketView(store, bucket)
                .keys(prefix).stream().filter(k -> k.endsWith(".parquet")).toList().size();
        total += traffic.totalRequests();
        files += written;
        out.printf(
            "%-34s %9d %6d %9.2f %8d%n",
            (checked ? "store check on, job " : "store check off, job ") + job,
            traffic.totalRequests(),
            written,
            (double) traffic.totalRequests() / Math.max(1, written),
            traffic.requests(S3Api.HEAD_OBJECT));
        out.flush();
      }
      out.printf(
          "%-34s %9d %6d %9.2f %8s %5d%n",
          checked ? "store check on, all jobs" : "store check off, all jobs",
          total,
          files,
          (double) total / Math.max(1, files),
          "",
          jobs);
      out.flush();
    }
    return 0;
  }

  /** Runs {@link FreshApp} in a JVM of its own with this JVM's class path and flags. */
  private void runApplication(String uri, Map<String, String> settings) throws Exception {
    List<String> command = new ArrayList<>();
    command.add(
        ProcessHandle.current()
            .info()
            .command()
            .orElse(System.getProperty("java.home") + File.separator + "bin/java"));
    for (String argument : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (!argument.startsWith("-Xmx")) {
        command.add(argument);
      }
    }
    command.add("-Xmx1g");
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(FreshApp.class.getName());
    command.add(uri);
    command.add(Integer.toString(tasks));
    settings.forEach((key, value) -> command.add(key + "=" + value));
    Process process = new ProcessBuilder(command).inheritIO().start();
    if (!process.waitFor(10, TimeUnit.MINUTES) || process.exitValue() != 0) {
      process.destroyForcibly();
      throw new IllegalStateException("the application writing " + uri + " failed");
    }
  }

  /** One application: a Spark session in local mode, one job of one-file tasks, then stop. */
  public static final class FreshApp {
    public static void main(String[] args) {
      SparkSession.Builder builder =
          SparkSession.builder()
              .master("local[2]")
              .appName("writeonce-fresh-app")
              .config("spark.ui.enabled", "false")
              .config("spark.driver.host", "127.0.0.1")
              .config("spark.driver.bindAddress", "127.0.0.1");
      for (int i = 2; i < args.length; i++) {
        int split = args[i].indexOf('=');
        builder.config(args[i].substring(0, split), args[i].substring(split + 1));
      }
      SparkSession spark = builder.getOrCreate();
      try {
        int tasks = Integer.parseInt(args[1]);
        spark.range(0, tasks, 1, tasks).selectExpr("id").write().parquet(args[0]);
      } finally {
        spark.stop();
      }
    }
  }
}
