package dev.writeonce.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.teststore.BucketView;
import dev.writeonce.teststore.ProjectFiles;
import dev.writeonce.teststore.S3Api;
import dev.writeonce.teststore.TestStore;
import dev.writeonce.teststore.TestStores;
import dev.writeonce.teststore.Traffic;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Spark as users install it: a real distribution (PyPI's pyspark package, provisioned by {@code
 * scripts/provision-spark.sh}), its own {@code bin/spark-submit}, and {@code --jars} naming only
 * the Spark bundle and the hadoop-aws and AWS SDK jars the build resolved. Nothing of the build's
 * class path reaches Spark's JVM otherwise. Each committer and the shim are configured as the docs
 * say; a PySpark script writes, overwrites partitions dynamically and saves a table, reads each
 * back, and checks {@code _SUCCESS}. The store's own counts show no COPY, and no upload stays open.
 * A PySpark streaming query checkpoints through the checkpoint file manager.
 *
 * <p>It runs on the first store the suite selects (MinIO by default, or the endpoint given in the
 * environment): what it tests is the distribution, which the store does not change, and each line
 * takes about three minutes.
 */
class SparkDistributionIT {

  private static final Logger LOG = LoggerFactory.getLogger(SparkDistributionIT.class);

  /** The Spark line the build compiles against, and the newest that PyPI serves. */
  private static final String BUILT_AGAINST = System.getProperty("writeonce.spark.dist", "4.2.0");

  private static final String NEWEST = System.getProperty("writeonce.spark.dist.newest", "4.3.0");

  private static final String PROTOCOL =
      "spark.sql.sources.commitProtocolClass=dev.writeonce.spark.WriteonceCommitProtocol";

  private final TestStore store = TestStores.get(TestStores.selected().get(0));

  @TempDir Path work;

  @Test
  void everyCommitterAndTheShimWriteThroughSparkSubmitOnTheSparkTheBuildUses() throws Exception {
    everyWayOfCommitting(BUILT_AGAINST);
  }

  @Test
  void everyCommitterAndTheShimWriteThroughSparkSubmitOnTheNewestSpark() throws Exception {
    everyWayOfCommitting(NEWEST);
  }

  @Test
  void aStreamingQueryCheckpointsAndCommitsItsSinkThroughSparkSubmitOnTheSparkTheBuildUses()
      throws Exception {
    streams(provision(BUILT_AGAINST), BUILT_AGAINST);
  }

  @Test
  void aStreamingQueryCheckpointsAndCommitsItsSinkThroughSparkSubmitOnTheNewestSpark()
      throws Exception {
    streams(provision(NEWEST), NEWEST);
  }

  private void everyWayOfCommitting(String sparkVersion) throws Exception {
    Path spark = provision(sparkVersion);
    // As a user writes them: the default committer needs the protocol alone.
    write(spark, sparkVersion, "directory", List.of(PROTOCOL));
    write(
        spark,
        sparkVersion,
        "partitioned",
        List.of(PROTOCOL, "spark.hadoop.writeonce.committer=partitioned"));
    write(
        spark,
        sparkVersion,
        "magic",
        List.of(
            PROTOCOL,
            "spark.hadoop.writeonce.committer=magic",
            "spark.hadoop.fs.s3a.impl=dev.writeonce.magic.MagicS3AFileSystem"));
    List<String> shim = new ArrayList<>();
    shim.add("spark.hadoop.fs.s3a.impl=dev.writeonce.shim.RenameShimFileSystem");
    shim.add(
        "spark.hadoop.mapreduce.outputcommitter.factory.scheme.s3a="
            + "dev.writeonce.shim.ShimCommitterFactory");
    store
        .emptyObjectSettings()
        .forEach((key, value) -> shim.add("spark.hadoop." + key + "=" + value));
    Result shimmed = write(spark, sparkVersion, "shim", shim);
    // Said once per process instead of S3A's per-task warning, which does not hold through it.
    assertThat(shimmed.output()).doesNotContain("This is slow and potentially unsafe");
    assertThat(shimmed.output().split("through the rename shim: its renames complete", -1))
        .hasSize(2);
  }

  private Result write(Path spark, String sparkVersion, String committer, List<String> settings)
      throws Exception {
    String bucket = store.newBucket("dist-" + committer);
    Traffic before = store.meter().read();
    long start = System.nanoTime();
    Result result = submit(spark, committer, "s3a://" + bucket, settings);
    long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
    Traffic traffic = store.meter().read().minus(before);
    LOG.info(
        "Spark {} via spark-submit, {} on {}: {} s, {}",
        sparkVersion,
        committer,
        store.name(),
        seconds,
        traffic);

    assertThat(result.exit())
        .as("spark-submit of %s on Spark %s:%n%s", committer, sparkVersion, result.output())
        .isZero();
    assertThat(result.output()).contains("APP OK " + committer);
    assertThat(traffic.requests(S3Api.COPY_OBJECT))
        .as("%s on Spark %s copies nothing: %s", committer, sparkVersion, traffic)
        .isZero();
    BucketView view = new BucketView(store, bucket);
    List<String> keys = view.keys("");
    assertThat(keys).anyMatch(key -> key.endsWith(".parquet"));
    assertThat(view.openUploads(keys)).as("uploads left open by %s", committer).isEmpty();
    return result;
  }

  /**
   * A Structured Streaming query with its checkpoint and its sink on the store through {@code
   * WriteonceCheckpointFileManager} and {@code WriteonceStreamingCommitProtocol}, as
   * docs/streaming.md configures them: no COPY, no upload left open, and every row once.
   */
  private void streams(Path spark, String sparkVersion) throws Exception {
    String bucket = store.newBucket("dist-streams");
    Traffic before = store.meter().read();
    Result result =
        submit(
            spark,
            "streams",
            "streams.py",
            List.of("s3a://" + bucket + "/query", work.resolve("stream-input").toString()),
            List.of(
                "spark.sql.streaming.checkpointFileManagerClass="
                    + "dev.writeonce.spark.streaming.WriteonceCheckpointFileManager",
                "spark.sql.streaming.commitProtocolClass="
                    + "dev.writeonce.spark.streaming.WriteonceStreamingCommitProtocol"));
    Traffic traffic = store.meter().read().minus(before);
    LOG.info("Spark {} via spark-submit, streams on {}: {}", sparkVersion, store.name(), traffic);

    assertThat(result.exit())
        .as("spark-submit of streams.py on Spark %s:%n%s", sparkVersion, result.output())
        .isZero();
    assertThat(result.output()).contains("STREAM OK");
    // The counts include the store check of the new bucket (its probes delete what they wrote);
    // SparkStreamingIT counts a query's own requests.
    assertThat(traffic.requests(S3Api.COPY_OBJECT)).as("%s", traffic).isZero();
    BucketView view = new BucketView(store, bucket);
    List<String> keys = view.keys("");
    assertThat(keys).anyMatch(key -> key.endsWith(".parquet"));
    assertThat(keys).noneMatch(key -> key.contains("/_writeonce/"));
    assertThat(view.openUploads(keys)).isEmpty();
  }

  record Result(int exit, String output) {}

  private Result submit(Path spark, String committer, String destination, List<String> settings)
      throws IOException, InterruptedException {
    return submit(spark, committer, "writes.py", List.of(committer, destination, "all"), settings);
  }

  private Result submit(
      Path spark, String name, String script, List<String> arguments, List<String> settings)
      throws IOException, InterruptedException {
    Path app = work.resolve(script);
    try (InputStream in = SparkDistributionIT.class.getResourceAsStream("/dist/" + script)) {
      Files.copy(in, app, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }
    Path conf = Files.createDirectories(work.resolve("conf"));
    Files.writeString(conf.resolve("log4j2.properties"), QUIET_LOGGING);

    List<String> command = new ArrayList<>();
    command.add(spark.resolve("deps/bin/spark-submit").toString());
    command.add("--master");
    command.add("local[2]");
    command.add("--driver-memory");
    command.add("768m");
    command.add("--jars");
    command.add(jars().stream().map(Path::toString).collect(Collectors.joining(",")));
    for (Map.Entry<String, String> setting : storeSettings().entrySet()) {
      command.add("--conf");
      command.add("spark.hadoop." + setting.getKey() + "=" + setting.getValue());
    }
    command.add("--conf");
    command.add("spark.ui.enabled=false");
    for (String setting : settings) {
      command.add("--conf");
      command.add(setting);
    }
    command.add(app.toString());
    command.addAll(arguments);

    Path log = work.resolve(name + ".log");
    ProcessBuilder builder =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
    Map<String, String> env = builder.environment();
    env.put("JAVA_HOME", System.getProperty("java.home"));
    env.put("SPARK_HOME", spark.resolve("deps").toString());
    env.put("SPARK_CONF_DIR", conf.toString());
    env.put("SPARK_LOCAL_IP", "127.0.0.1");
    env.put("PYSPARK_PYTHON", "python3");
    env.put("PYTHONPATH", spark + File.pathSeparator + py4j(spark));
    // The build's own class path and Hadoop settings never reach the distribution.
    env.remove("CLASSPATH");
    env.remove("HADOOP_CONF_DIR");
    env.remove("SPARK_DIST_CLASSPATH");
    Process process = builder.start();
    if (!process.waitFor(6, TimeUnit.MINUTES)) {
      process.destroyForcibly();
      throw new IOException("spark-submit of " + name + " ran over 6 minutes: see " + log);
    }
    return new Result(process.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
  }

  /** The store's fs.s3a.* settings, as a user passes them with spark.hadoop. */
  private Map<String, String> storeSettings() {
    Configuration conf = store.configure(new Configuration(false));
    Map<String, String> settings = new TreeMap<>();
    conf.forEach(entry -> settings.put(entry.getKey(), entry.getValue()));
    return settings;
  }

  /**
   * The Spark bundle, and hadoop-aws with the AWS SDK modules it needs: the same files the build
   * resolved, found on this suite's class path.
   */
  private static List<Path> jars() {
    List<Path> jars = new ArrayList<>();
    jars.add(Distributions.file("writeonce-spark_2.13-" + Distributions.version() + ".jar"));
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      String name = Path.of(entry).getFileName().toString();
      boolean s3a =
          name.startsWith("hadoop-aws-")
              || entry.contains("/software/amazon/awssdk/")
              || entry.contains("/software/amazon/s3/analyticsaccelerator/")
              || name.startsWith("reactive-streams-");
      if (s3a && name.endsWith(".jar") && !name.contains("-tests")) {
        jars.add(Path.of(entry));
      }
    }
    assertThat(jars).anyMatch(jar -> jar.getFileName().toString().startsWith("hadoop-aws-"));
    return jars;
  }

  private static Path provision(String sparkVersion) throws IOException, InterruptedException {
    Path script = ProjectFiles.script("provision-spark.sh");
    Process process =
        new ProcessBuilder(script.toString(), sparkVersion)
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
    String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!process.waitFor(10, TimeUnit.MINUTES) || process.exitValue() != 0) {
      throw new IOException(
          "scripts/provision-spark.sh " + sparkVersion + " failed; it needs python3 with pip");
    }
    String[] lines = out.strip().split("\n");
    return Path.of(lines[lines.length - 1]);
  }

  private static String py4j(Path spark) throws IOException {
    try (Stream<Path> files = Files.list(spark.resolve("lib"))) {
      return files
          .filter(f -> f.getFileName().toString().startsWith("py4j-"))
          .findFirst()
          .orElseThrow(() -> new IOException("no py4j in " + spark.resolve("lib")))
          .toString();
    }
  }

  private static final String QUIET_LOGGING =
      String.join(
          "\n",
          "rootLogger.level = warn",
          "rootLogger.appenderRef.stdout.ref = console",
          "appender.console.type = Console",
          "appender.console.name = console",
          "appender.console.target = SYSTEM_ERR",
          "appender.console.layout.type = PatternLayout",
          "appender.console.layout.pattern = %d{HH:mm:ss.SSS} %p %c{1}: %m%n%ex",
          "logger.writeonce.name = dev.writeonce",
          "logger.writeonce.level = info",
          "logger.nativecode.name = org.apache.hadoop.util.NativeCodeLoader",
          "logger.nativecode.level = error",
          "");
}
