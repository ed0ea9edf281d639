package dev.writeonce.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.engine.JobCommitEngine;
import dev.writeonce.core.engine.JobCommitRequest;
import dev.writeonce.core.errors.ErrorKind;
import dev.writeonce.core.model.ConflictMode;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.model.TaskManifest;
import dev.writeonce.core.store.RequestType;
import dev.writeonce.core.store.S3StoreGateway;
import dev.writeonce.core.store.StoreGateway;
import dev.writeonce.core.testing.FaultInjectingStore;
import dev.writeonce.core.testing.PendingUploads;
import dev.writeonce.teststore.BucketView;
import dev.writeonce.teststore.EachStore;
import dev.writeonce.teststore.TestStore;
import java.io.IOException;
import java.io.StringWriter;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The operator tarball as an operator gets it: unpacked into an empty directory and run with Java
 * alone (no Maven, no checkout, no Spark, no test classpath), its store settings read from
 * HADOOP_CONF_DIR as Hadoop's tools read them.
 */
@EachStore
class OperatorDistributionIT {

  private final TestStore store;

  OperatorDistributionIT(TestStore store) {
    this.store = store;
  }

  @TempDir Path machine;

  record Result(int exit, String out, String err) {}

  @Test
  void theUnpackedTarballInspectsAndRecoversAJobWithJavaAloneAndSettingsFromHadoopConfDir()
      throws Exception {
    Path home = unpack();
    Path confDir = hadoopConfDir();
    String bucket = store.newBucket("dist");
    Destination destination = Destination.of("s3a://" + bucket + "/table/");
    List<String> keys = committedButUnfinishedJob(destination, "job_dist_0001");

    Result help = run(home, confDir, "--help");
    Result version = run(home, confDir, "--version");
    Result before = run(home, confDir, "inspect", destination.toString());
    Result recover = run(home, confDir, "recover", destination.toString());
    Result after = run(home, confDir, "inspect", destination.toString());
    Result check = run(home, confDir, "check-store", destination.toString(), "--json");

    assertThat(help.exit()).as(help.err()).isZero();
    assertThat(help.out()).contains("inspect", "recover", "purge", "check-store");
    assertThat(version.exit()).as(version.err()).isZero();
    assertThat(version.out()).contains(Distributions.version());
    assertThat(before.out()).as(before.err()).contains("job_dist_0001");
    assertThat(before.exit()).as("inspect finds a job that needs recover").isNotZero();
    assertThat(recover.exit()).as(recover.out() + recover.err()).isZero();
    assertThat(after.exit()).as(after.out() + after.err()).isZero();
    assertThat(check.exit()).as(check.out() + check.err()).isZero();
    assertThat(check.out()).contains("\"guaranteesHold\" : true", "\"put-if-none-match\"");
    BucketView view = new BucketView(store, bucket);
    assertThat(view.keys(destination.prefix())).containsAll(keys);
    assertThat(view.keys(destination.prefix() + "_writeonce/check-"))
        .as("probes removed")
        .isEmpty();
    assertThat(view.openUploads(keys)).isEmpty();
  }

  @Test
  void withoutJavaOnThePathOrJavaHomeTheCommandSaysWhatToInstall() throws Exception {
    Path home = unpack();
    // A machine with a shell and dirname, but no Java.
    Path bin = Files.createDirectories(machine.resolve("no-java-bin"));
    Files.createSymbolicLink(bin.resolve("sh"), Path.of("/bin/sh"));
    Files.createSymbolicLink(bin.resolve("dirname"), Path.of(whichDirname()));
    ProcessBuilder builder = new ProcessBuilder(home.resolve("bin/writeonce").toString(), "--help");
    builder.environment().clear();
    builder.environment().put("PATH", bin.toString());

    Result result = run(builder);

    assertThat(result.exit()).isEqualTo(2);
    assertThat(result.err()).contains("Java 17", "JAVA_HOME");
  }

  private static String whichDirname() {
    for (String candidate : List.of("/usr/bin/dirname", "/bin/dirname")) {
      if (Files.isExecutable(Path.of(candidate))) {
        return candidate;
      }
    }
    throw new IllegalStateException("no dirname in /usr/bin or /bin");
  }

  private Path unpack() throws IOException, InterruptedException {
    Path tarball = Distributions.file("writeonce-cli-" + Distributions.version() + ".tar.gz");
    Process tar =
        new ProcessBuilder("tar", "-xzf", tarball.toString(), "-C", machine.toString())
            .inheritIO()
            .start();
    assertThat(tar.waitFor()).as("tar -xzf %s", tarball).isZero();
    Path home = machine.resolve("writeonce-cli-" + Distributions.version());
    assertThat(home.resolve("bin/writeonce")).isExecutable();
    assertThat(home.resolve("LICENSE")).isRegularFile();
    try (var lib = Files.list(home.resolve("lib"))) {
      assertThat(lib.map(p -> p.getFileName().toString()))
          .as("lib/ of the operator command: no engine, no test stack")
          .noneMatch(
              name ->
                  name.startsWith("spark-")
                      || name.startsWith("hive-")
                      || name.startsWith("junit")
                      || name.startsWith("testcontainers")
                      || name.startsWith("integration-tests"));
    }
    return home;
  }

  /** A core-site.xml with the store's endpoint and credentials, as on an edge node. */
  private Path hadoopConfDir() throws IOException {
    Path dir = Files.createDirectories(machine.resolve("hadoop-conf"));
    Configuration site = store.configure(new Configuration(false));
    StringWriter xml = new StringWriter();
    site.writeXml(xml);
    Files.writeString(dir.resolve("core-site.xml"), xml.toString(), StandardCharsets.UTF_8);
    return dir;
  }

  /** A job past its commit point with only some of its uploads completed. */
  private List<String> committedButUnfinishedJob(Destination destination, String jobId)
      throws Exception {
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      keys.add(destination.prefix() + String.format("part-%05d", i));
    }
    Configuration conf = store.configure(new Configuration());
    try (FileSystem fs = FileSystem.newInstance(URI.create(destination.toString()), conf)) {
      StoreGateway gateway = S3StoreGateway.forFileSystem(fs);
      List<TaskManifest> tasks =
          List.of(PendingUploads.task(gateway, jobId, "attempt_" + jobId + "_m_000000_0", keys));
      FaultInjectingStore crashing =
          new FaultInjectingStore(gateway)
              .failFrom(RequestType.COMPLETE_UPLOAD, 3, ErrorKind.FATAL);
      try {
        new JobCommitEngine(crashing, CommitterConfig.from(conf), destination)
            .commit(
                new JobCommitRequest(jobId, "directory", ConflictMode.APPEND, tasks, List.of()));
      } catch (Exception expected) {
        // The fault stops the commit after its commit point.
      }
    }
    return keys;
  }

  /** Runs bin/writeonce in an environment with Java and HADOOP_CONF_DIR only. */
  private Result run(Path home, Path confDir, String... args) throws Exception {
    List<String> command = new ArrayList<>();
    command.add(home.resolve("bin/writeonce").toString());
    command.addAll(List.of(args));
    ProcessBuilder builder = new ProcessBuilder(command).directory(machine.toFile());
    Map<String, String> env = builder.environment();
    env.clear();
    env.put("PATH", "/usr/bin:/bin");
    env.put("JAVA_HOME", System.getProperty("java.home"));
    env.put("HADOOP_CONF_DIR", confDir.toString());
    env.put("HOME", machine.toString());
    return run(builder);
  }

  private Result run(ProcessBuilder builder) throws Exception {
    Path out = Files.createTempFile(machine, "out", ".txt");
    Path err = Files.createTempFile(machine, "err", ".txt");
    Process process = builder.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
    assertThat(process.waitFor(5, TimeUnit.MINUTES)).as("the command finished").isTrue();
    return new Result(process.exitValue(), Files.readString(out), Files.readString(err));
  }
}
