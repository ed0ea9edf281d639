package dev.writeonce.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.engine.JobCommitEngine;
import dev.writeonce.core.engine.JobCommitRequest;
import dev.writeonce.core.engine.JobLayout;
import dev.writeonce.core.engine.JobRecords;
import dev.writeonce.core.errors.ErrorKind;
import dev.writeonce.core.json.PendingFileFormat;
import dev.writeonce.core.model.ConflictMode;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.model.PendingFile;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.TaskIntent;
import dev.writeonce.core.model.TaskManifest;
import dev.writeonce.core.store.RequestType;
import dev.writeonce.core.store.S3StoreGateway;
import dev.writeonce.core.store.StoreGateway;
import dev.writeonce.core.testing.FaultInjectingStore;
import dev.writeonce.core.testing.PendingUploads;
import dev.writeonce.teststore.BucketView;
import dev.writeonce.teststore.EachStore;
import dev.writeonce.teststore.S3Api;
import dev.writeonce.teststore.TestStore;
import dev.writeonce.teststore.Traffic;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The operator command against a real store: jobs left in each state by the engine (a fault stops
 * it where needed), then inspect, recover and purge as an operator runs them, with the store's own
 * counters and a check that no secret is ever printed or stored.
 */
@EachStore
class OperatorCommandIT {

  private final TestStore store;

  OperatorCommandIT(TestStore store) {
    this.store = store;
  }

  private TestStore store() {
    return store;
  }

  private String bucket;
  private BucketView view;
  private Destination destination;
  private FileSystem fs;
  private StoreGateway gateway;
  private final List<String> printed = new ArrayList<>();
  private final StringWriter logs = new StringWriter();
  private final org.apache.log4j.Appender logCapture =
      new org.apache.log4j.WriterAppender(new org.apache.log4j.PatternLayout("%p %c: %m%n"), logs);

  @BeforeEach
  void captureLogs() {
    org.apache.log4j.Logger.getRootLogger().addAppender(logCapture);
    org.apache.log4j.Logger.getLogger("dev.writeonce").setLevel(org.apache.log4j.Level.DEBUG);
  }

  @BeforeEach
  void newDestination() throws Exception {
    bucket = store().newBucket("cli");
    view = new BucketView(store(), bucket);
    destination = Destination.of("s3a://" + bucket + "/table/");
    fs = FileSystem.newInstance(URI.create("s3a://" + bucket + "/"), configuration());
    gateway = S3StoreGateway.forFileSystem(fs);
  }

  @AfterEach
  void noSecretWasPrintedLoggedOrStored() throws Exception {
    org.apache.log4j.Logger.getRootLogger().removeAppender(logCapture);
    org.apache.log4j.Logger.getLogger("dev.writeonce").setLevel(org.apache.log4j.Level.INFO);
    printed.add(logs.toString());
    try {
      Map<String, String> conf = settings();
      List<String> secrets =
          List.of(
              conf.get("fs.s3a.secret.key"), conf.get("fs.s3a.access.key"), "wrong-secret-1234");
      for (String text : printed) {
        for (String secret : secrets) {
          assertThat(text).as("command output and logs").doesNotContain(secret);
        }
      }
      for (String key : view.keys("")) {
        if (view.size(key) < 1 << 20) {
          String content = view.read(key);
          for (String secret : secrets) {
            assertThat(content).as("object %s", key).doesNotContain(secret);
          }
        }
      }
    } finally {
      fs.close();
    }
  }

  private Configuration configuration() {
    return store().configure(new Configuration());
  }

  private Map<String, String> settings() {
    return StoreSettings.of(store());
  }

  /** The arguments an operator passes to reach the store: every fs.s3a setting as --conf. */
  private List<String> storeArguments(Map<String, String> overrides) {
    Map<String, String> settings = settings();
    settings.putAll(overrides);
    return StoreSettings.arguments(settings);
  }

  /** Exit code, output and errors of one command. */
  record Result(int exit, String out, String err) {}

  private Result run(String command, String dest, Map<String, String> overrides, String... more) {
    List<String> args = new ArrayList<>();
    args.add(command);
    args.add(dest);
    args.addAll(storeArguments(overrides));
    args.addAll(List.of(more));
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int exit =
        Main.run(
            new PrintWriter(out, true), new PrintWriter(err, true), args.toArray(new String[0]));
    printed.add(out.toString());
    printed.add(err.toString());
    return new Result(exit, out.toString(), err.toString());
  }

  private Result run(String command, String... more) {
    return run(command, destination.toString(), Map.of(), more);
  }

  private List<String> keys(int count, String prefix) {
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      keys.add(destination.prefix() + prefix + String.format("part-%05d", i));
    }
    return keys;
  }

  /** Leaves a job committed (manifest written) with only some uploads completed. */
  private List<String> committedButUnfinishedJob(String jobId) throws Exception {
    List<String> keys = keys(12, "");
    List<TaskManifest> tasks = new ArrayList<>();
    tasks.add(
        PendingUploads.task(
            gateway, jobId, "attempt_" + jobId + "_m_000000_0", keys.subList(0, 6)));
    tasks.add(
        PendingUploads.task(
            gateway, jobId, "attempt_" + jobId + "_m_000001_0", keys.subList(6, 12)));
    FaultInjectingStore crashing =
        new FaultInjectingStore(gateway).failFrom(RequestType.COMPLETE_UPLOAD, 5, ErrorKind.FATAL);
    CommitterConfig config = CommitterConfig.from(configuration());
    try {
      new JobCommitEngine(crashing, config, destination)
          .commit(new JobCommitRequest(jobId, "directory", ConflictMode.APPEND, tasks, List.of()));
    } catch (Exception expected) {
      // The fault stops the commit after its commit point.
    }
    assertThat(view.keys(destination.prefix() + "_writeonce/jobs/" + jobId + "/"))
        .contains(destination.prefix() + "_writeonce/jobs/" + jobId + "/manifest.json");
    return keys;
  }

  /** Leaves a job whose tasks committed but whose job commit never ran. */
  private List<String> uncommittedJob(String jobId) throws Exception {
    List<String> keys = keys(4, "day=1/");
    JobRecords records = new JobRecords(gateway, new JobLayout(destination));
    records.saveTaskManifest(
        PendingUploads.task(gateway, jobId, "attempt_" + jobId + "_m_000000_0", keys));
    return keys;
  }

  @Test
  void recoverFinishesACommittedJobFromItsManifestAndInspectSaysSoBeforeAndAfter()
      throws Exception {
    List<String> keys = committedButUnfinishedJob("job_cli_0001");

    Result before = run("inspect");
    assertThat(before.exit()).isEqualTo(Main.ATTENTION);
    assertThat(before.out()).contains("job job_cli_0001: COMMITTED BUT UNFINISHED");

    Traffic start = store().meter().read();
    Result recover = run("recover");
    Traffic traffic = store().meter().read().minus(start);

    assertThat(recover.exit()).as(recover.err()).isZero();
    assertThat(recover.out()).contains("job job_cli_0001 finished: 12 files");
    List<String> outputAndSuccess = new ArrayList<>(keys);
    outputAndSuccess.add(destination.prefix() + "_SUCCESS");
    assertThat(view.keys(destination.prefix()))
        .as("the output and _SUCCESS, nothing else")
        .containsExactlyInAnyOrderElementsOf(outputAndSuccess);
    assertThat(view.openUploads(keys)).isEmpty();
    assertThat(traffic.requests(S3Api.COPY_OBJECT)).isZero();
    for (String key : keys) {
      assertThat(view.read(key).getBytes(StandardCharsets.UTF_8))
          .isEqualTo(PendingUploads.contentOf(key));
    }
    assertThat(logs.toString())
        .as("logs are captured")
        .contains("Resuming committed job job_cli_0001");
    Result after = run("inspect");
    assertThat(after.exit()).isZero();
    assertThat(after.out()).contains("_SUCCESS: job job_cli_0001").contains("jobs: none");
    assertThat(run("recover").out()).contains("nothing to recover");
  }

  @Test
  void recoverAbortsAnAbandonedUncommittedJobAndLeavesAYoungOneAlone() throws Exception {
    List<String> keys = uncommittedJob("job_cli_0002");

    Result young = run("recover");
    assertThat(young.exit()).isZero();
    assertThat(young.out()).contains("leave uncommitted job job_cli_0002");
    assertThat(view.openUploads(keys)).hasSize(keys.size());

    Result old = run("recover", "--min-age=0s");
    assertThat(old.exit()).as(old.err()).isZero();
    assertThat(old.out()).contains("abort 4 uploads of uncommitted job job_cli_0002");
    assertThat(view.openUploads(keys)).isEmpty();
    assertThat(view.keys(""))
        .as("nothing visible; only the abort fence, which stands for its retention")
        .containsExactly(destination.prefix() + "_writeonce/jobs/job_cli_0002/manifest.json");
  }

  @Test
  void recoverFindsAndAbortsUploadsThatOnlyATaskIntentNames() throws Exception {
    // A task (or the Spark driver holding its commit message) died after the task created its
    // uploads and before any manifest named them: only the task's intent does. Every store lists
    // the uploads of an exact key, MinIO included, and that is all recovery needs.
    List<String> keys = keys(3, "intent-");
    String attempt = "attempt_20261123_0008_m_000000_0";
    new JobRecords(gateway, new JobLayout(destination))
        .saveTaskIntent(new TaskIntent("job_cli_0008", attempt, keys));
    for (String key : keys) {
      PendingUploads.upload(gateway, key, PendingUploads.contentOf(key), attempt);
    }
    assertThat(view.openUploads(keys)).hasSize(3);

    Result recover = run("recover", "--min-age=0s");

    assertThat(recover.exit()).as(recover.err()).isZero();
    assertThat(recover.out()).contains("uncommitted job job_cli_0008");
    assertThat(view.openUploads(keys)).isEmpty();
    assertThat(view.keys("")).doesNotContainAnyElementsOf(keys);
  }

  @Test
  void purgeIsADryRunUntilYesAndNeverTouchesACommittedJob() throws Exception {
    List<String> uncommitted = uncommittedJob("job_cli_0003");
    List<String> committed = committedButUnfinishedJob("job_cli_0004");
    PendingUpload shimUpload =
        PendingUploads.upload(
            gateway, destination.prefix() + "part-shim", new byte[] {1, 2, 3}, "a");
    String recordKey =
        destination.prefix() + "_temporary/0/_temporary/attempt_x_m_000000_0/part-shim";
    gateway.putObject(
        recordKey, PendingFileFormat.toJson(PendingFile.closed(shimUpload, 1L)), false);

    Traffic start = store().meter().read();
    Result dry = run("purge", "--older-than=0s");
    Traffic dryTraffic = store().meter().read().minus(start);
    assertThat(dry.exit()).as(dry.err()).isZero();
    assertThat(dry.out())
        .contains("would abort 4 uploads of uncommitted job job_cli_0003")
        .contains("would abort the upload to " + destination.uriOf(shimUpload.key()))
        .contains("job job_cli_0004 is committed: not purged");
    assertThat(dryTraffic.requests(S3Api.ABORT_MULTIPART_UPLOAD)).isZero();
    assertThat(dryTraffic.requests(S3Api.DELETE_OBJECTS) + dryTraffic.requests(S3Api.DELETE_OBJECT))
        .isZero();

    Result purge = run("purge", "--older-than=0s", "--yes");
    assertThat(purge.exit()).as(purge.err()).isZero();
    assertThat(view.openUploads(uncommitted)).isEmpty();
    assertThat(view.openUploads(List.of(shimUpload.key()))).isEmpty();
    assertThat(view.keys("")).doesNotContain(recordKey);
    assertThat(run("recover").out()).contains("finish committed job job_cli_0004");
    assertThat(view.keys("")).containsAll(committed);
  }

  @Test
  void aDamagedManifestIsReportedAndNothingOfItsJobIsCompletedOrDeleted() throws Exception {
    List<String> keys = uncommittedJob("job_cli_0005");
    String manifest = destination.prefix() + "_writeonce/jobs/job_cli_0005/manifest.json";
    view.put(manifest, "{\"format\" : \"writeonce.job-manifest\", \"version\" : 1, \"jobId\" : ");

    Traffic start = store().meter().read();
    Result inspect = run("inspect");
    Result recover = run("recover", "--min-age=0s");
    Traffic traffic = store().meter().read().minus(start);

    assertThat(inspect.exit()).isEqualTo(Main.ATTENTION);
    assertThat(inspect.out()).contains("DAMAGED").contains(destination.uriOf(manifest));
    assertThat(recover.exit()).isEqualTo(Main.FAILED);
    assertThat(recover.err()).contains(destination.uriOf(manifest)).contains("left untouched");
    assertThat(traffic.requests(S3Api.COMPLETE_MULTIPART_UPLOAD)).isZero();
    assertThat(traffic.requests(S3Api.ABORT_MULTIPART_UPLOAD)).isZero();
    assertThat(traffic.requests(S3Api.DELETE_OBJECTS) + traffic.requests(S3Api.DELETE_OBJECT))
        .isZero();
    assertThat(view.openUploads(keys)).hasSize(keys.size());
  }

  @Test
  void aManifestNamingKeysOutsideItsDestinationIsRefused() throws Exception {
    List<String> keys = committedButUnfinishedJob("job_cli_0006");
    String manifestKey = destination.prefix() + "_writeonce/jobs/job_cli_0006/manifest.json";
    String forged =
        view.read(manifestKey)
            .replace("\"key\" : \"table/part-00011\"", "\"key\" : \"other/part-00011\"");
    assertThat(forged).contains("other/part-00011");
    view.put(manifestKey, forged);

    Traffic start = store().meter().read();
    Result recover = run("recover");
    Traffic traffic = store().meter().read().minus(start);

    assertThat(recover.exit()).isEqualTo(Main.FAILED);
    assertThat(recover.err()).contains("other/part-00011");
    assertThat(traffic.requests(S3Api.COMPLETE_MULTIPART_UPLOAD)).isZero();
    assertThat(traffic.requests(S3Api.DELETE_OBJECTS) + traffic.requests(S3Api.DELETE_OBJECT))
        .isZero();
    assertThat(view.keys("")).noneMatch(key -> key.startsWith("other/"));
    assertThat(view.openUploads(keys.subList(4, 12))).isNotEmpty();
  }

  @Test
  void badDestinationsAndWrongCredentialsFailWithAClearMessage() throws Exception {
    Result missingBucket = run("inspect", "s3a://no-such-bucket-" + bucket + "/t/", Map.of());
    assertThat(missingBucket.exit()).isEqualTo(Main.FAILED);
    assertThat(missingBucket.err()).contains("the bucket does not exist");

    Result notADestination = run("inspect", "/tmp/table", Map.of());
    assertThat(notADestination.exit()).isEqualTo(Main.USAGE);
    assertThat(notADestination.err()).contains("is not a destination");

    Result wrongSecret =
        run("recover", destination.toString(), Map.of("fs.s3a.secret.key", "wrong-secret-1234"));
    assertThat(wrongSecret.exit()).isEqualTo(Main.FAILED);
    assertThat(wrongSecret.err()).contains("cannot read " + destination);

    Result badDuration = run("purge", "--older-than=soon");
    assertThat(badDuration.exit()).isEqualTo(Main.USAGE);
    assertThat(badDuration.err()).contains("not a duration");
  }

  /** Runs the operator command in a JVM of its own, as an operator does. */
  private Result runProcess(String command, String... more) throws Exception {
    List<String> args = new ArrayList<>();
    args.add(ProcessHandle.current().info().command().orElse("java"));
    args.add("-Xmx256m");
    args.add("-cp");
    args.add(System.getProperty("java.class.path"));
    args.add(Main.class.getName());
    args.add(command);
    args.add(destination.toString());
    args.addAll(storeArguments(Map.of()));
    args.addAll(List.of(more));
    java.nio.file.Path outFile = java.nio.file.Files.createTempFile("writeonce-cli", ".out");
    java.nio.file.Path errFile = java.nio.file.Files.createTempFile("writeonce-cli", ".err");
    try {
      Process process =
          new ProcessBuilder(args)
              .redirectOutput(outFile.toFile())
              .redirectError(errFile.toFile())
              .start();
      int exit = process.waitFor();
      String out = java.nio.file.Files.readString(outFile);
      String err = java.nio.file.Files.readString(errFile);
      printed.add(out);
      printed.add(err);
      return new Result(exit, out, err);
    } finally {
      java.nio.file.Files.deleteIfExists(outFile);
      java.nio.file.Files.deleteIfExists(errFile);
    }
  }

  private static com.fasterxml.jackson.databind.JsonNode json(Result result) throws Exception {
    return new com.fasterxml.jackson.databind.ObjectMapper().readTree(result.out());
  }

  private static com.fasterxml.jackson.databind.JsonNode jobOf(
      com.fasterxml.jackson.databind.JsonNode report, String jobId) {
    for (com.fasterxml.jackson.databind.JsonNode job : report.get("jobs")) {
      if (job.get("jobId").asText().equals(jobId)) {
        return job;
      }
    }
    throw new AssertionError("no job " + jobId + " in " + report);
  }

  /**
   * One destination with a job in every state, and the operator's commands run against it with ages
   * that protect nothing: only the lease keeps the live job whole, and only the records tell what
   * may be aborted.
   */
  @Test
  void anOperatorSessionLeavesTheLiveJobWholeFinishesTheCommittedOneAndLeavesNothingOpen(
      @org.junit.jupiter.api.io.TempDir java.nio.file.Path staging) throws Exception {
    Configuration conf = configuration();
    conf.set(CommitterConfig.STAGING_DIR, staging.toString());
    conf.set(CommitterConfig.JOB_LEASE, "10m");
    org.apache.hadoop.fs.Path out = new org.apache.hadoop.fs.Path(destination.toString());
    org.apache.hadoop.mapreduce.JobID liveId =
        new org.apache.hadoop.mapreduce.JobID("20261123", 41);
    org.apache.hadoop.mapreduce.JobContext liveJob =
        new org.apache.hadoop.mapreduce.task.JobContextImpl(conf, liveId);
    dev.writeonce.core.committer.ConflictPolicy policy =
        dev.writeonce.core.committer.ConflictPolicy.directory();
    java.util.function.Function<
            org.apache.hadoop.mapreduce.JobContext, dev.writeonce.staging.StagingCommitter>
        committer =
            context -> {
              try {
                return new dev.writeonce.staging.StagingCommitter(
                    "directory", out, context, policy, (path, c) -> gateway);
              } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
              }
            };
    // A live job: its driver set it up (and renews its lease), one task committed long ago and a
    // straggler is still writing.
    committer.apply(liveJob).setupJob(liveJob);
    List<String> liveKeys = new ArrayList<>();
    org.apache.hadoop.mapreduce.TaskAttemptContext[] tasks =
        new org.apache.hadoop.mapreduce.TaskAttemptContext[2];
    dev.writeonce.staging.StagingCommitter[] taskCommitters =
        new dev.writeonce.staging.StagingCommitter[2];
    for (int task = 0; task < 2; task++) {
      tasks[task] =
          new org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl(
              conf,
              new org.apache.hadoop.mapreduce.TaskAttemptID(
                  "20261123", 41, org.apache.hadoop.mapreduce.TaskType.MAP, task, 0));
      taskCommitters[task] = committer.apply(tasks[task]);
      taskCommitters[task].setupTask(tasks[task]);
      String name = String.format("live/part-m-%05d", task);
      java.nio.file.Path file =
          java.nio.file.Path.of(taskCommitters[task].getWorkPath().toUri().getPath()).resolve(name);
      java.nio.file.Files.createDirectories(file.getParent());
      java.nio.file.Files.writeString(file, "live " + task);
      liveKeys.add(destination.prefix() + name);
    }
    taskCommitters[0].commitTask(tasks[0]);

    // A job committed but unfinished, an aborted one whose straggling attempt uploaded after the
    // abort, and a finished one whose cleanup failed and left its records.
    List<String> unfinishedKeys = committedButUnfinishedJob("job_cli_0031");
    List<String> abortedKeys = keys(2, "aborted/");
    String abortedAttempt = "attempt_20261123_0032_m_000000_0";
    new JobRecords(gateway, new JobLayout(destination))
        .saveTaskIntent(new TaskIntent("job_cli_0032", abortedAttempt, abortedKeys));
    PendingUploads.upload(gateway, abortedKeys.get(0), new byte[] {1}, abortedAttempt);
    CommitterConfig config = CommitterConfig.from(conf);
    new JobCommitEngine(gateway, config, destination).abort("job_cli_0032", List.of());
    PendingUploads.upload(gateway, abortedKeys.get(1), new byte[] {2}, abortedAttempt);
    List<String> finishedKeys = keys(2, "finished/");
    FaultInjectingStore failingCleanup =
        new FaultInjectingStore(gateway).failFrom(RequestType.DELETE_OBJECTS, 1, ErrorKind.FATAL);
    new JobCommitEngine(failingCleanup, config, destination)
        .commit(
            new JobCommitRequest(
                "job_cli_0033",
                "directory",
                ConflictMode.APPEND,
                List.of(
                    PendingUploads.task(
                        gateway, "job_cli_0033", "attempt_x_0033_m_000000_0", finishedKeys)),
                List.of()));
    String liveRun =
        liveJob
            .getConfiguration()
            .get(dev.writeonce.core.committer.MultipartOutputCommitter.JOB_UUID);

    Result inspect = runProcess("inspect", "--json");
    assertThat(inspect.exit()).as(inspect.err()).isEqualTo(Main.ATTENTION);
    com.fasterxml.jackson.databind.JsonNode report = json(inspect);
    assertThat(report.get("exitCode").asInt()).isEqualTo(Main.ATTENTION);
    assertThat(jobOf(report, liveId.toString()).get("live").asBoolean()).isTrue();
    assertThat(jobOf(report, liveId.toString()).get("run").asText()).isEqualTo(liveRun);
    assertThat(jobOf(report, "job_cli_0031").get("state").asText())
        .isEqualTo("committed_unfinished");
    assertThat(jobOf(report, "job_cli_0032").get("state").asText()).isEqualTo("aborted");
    assertThat(jobOf(report, "job_cli_0033").get("state").asText()).isEqualTo("finished");

    Result purge =
        runProcess(
            "purge",
            "--yes",
            "--list-uploads",
            "--older-than=0s",
            "--json",
            "--conf",
            CommitterConfig.FENCE_RETENTION + "=0s");
    assertThat(purge.exit()).as(purge.err()).isZero();
    com.fasterxml.jackson.databind.JsonNode purged = json(purge);
    assertThat(jobOf(purged, liveId.toString()).get("action").asText()).isEqualTo("left-live");
    assertThat(jobOf(purged, "job_cli_0031").get("action").asText()).isEqualTo("left-committed");
    assertThat(view.openUploads(unfinishedKeys))
        .as("a committed job's uploads survive purge, with --list-uploads too")
        .hasSize(unfinishedKeys.size() - 4);
    assertThat(view.openUploads(liveKeys.subList(0, 1))).hasSize(1);

    Result recover =
        runProcess("recover", "--min-age=0s", "--conf", CommitterConfig.FENCE_RETENTION + "=0s");
    assertThat(recover.exit()).as(recover.err()).isZero();
    assertThat(recover.out())
        .contains("leave live job " + liveId)
        .contains("job job_cli_0031 finished: 12 files");

    // The live job goes on: its straggler commits, and the job commits all of its output.
    taskCommitters[1].commitTask(tasks[1]);
    committer.apply(liveJob).commitJob(liveJob);

    assertThat(view.keys(destination.prefix()))
        .containsAll(liveKeys)
        .containsAll(unfinishedKeys)
        .containsAll(finishedKeys)
        .doesNotContainAnyElementsOf(abortedKeys)
        .noneMatch(key -> key.contains("_writeonce/"));
    for (int task = 0; task < 2; task++) {
      assertThat(view.read(liveKeys.get(task))).isEqualTo("live " + task);
    }
    List<String> every = new ArrayList<>(liveKeys);
    every.addAll(unfinishedKeys);
    every.addAll(abortedKeys);
    every.addAll(finishedKeys);
    assertThat(view.openUploads(every)).as("open uploads at the end").isEmpty();
    Result after = runProcess("inspect", "--json");
    assertThat(after.exit()).as(after.out()).isZero();
    assertThat(json(after).get("jobs")).isEmpty();
  }

  @Test
  void purgeFindsJobRecordsAndShimRecordsAtAnyDepthBelowItsPrefix() throws Exception {
    Destination nested = Destination.of(destination + "region=eu/day=1/");
    List<String> keys = List.of(nested.prefix() + "part-00000", nested.prefix() + "part-00001");
    new JobRecords(gateway, new JobLayout(nested))
        .saveTaskManifest(
            PendingUploads.task(gateway, "job_cli_0041", "attempt_x_0041_m_000000_0", keys));
    PendingUpload shimUpload =
        PendingUploads.upload(
            gateway, destination.prefix() + "region=us/part-shim", new byte[] {7}, "a");
    String recordKey =
        destination.prefix() + "region=us/.hive-staging_hive_1/-ext-10000/_tmp.part-shim";
    gateway.putObject(
        recordKey, PendingFileFormat.toJson(PendingFile.closed(shimUpload, 1L)), false);

    Result purge = run("purge", "--older-than=0s", "--yes", "--json");

    assertThat(purge.exit()).as(purge.err()).isZero();
    com.fasterxml.jackson.databind.JsonNode report = json(purge);
    assertThat(report.get("destinations").toString()).contains(nested.toString());
    assertThat(report.get("aborted").asInt()).isEqualTo(3);
    assertThat(view.openUploads(keys)).isEmpty();
    assertThat(view.openUploads(List.of(shimUpload.key()))).isEmpty();
    assertThat(view.keys("")).doesNotContain(recordKey).doesNotContainAnyElementsOf(keys);
  }

  /**
   * Purge and a running INSERT INTO through the shim: the statement holds its table's insert lock,
   * so its pending files are left whatever --older-than says; once the lock is gone they are purged
   * by age.
   */
  @Test
  void purgeLeavesTheShimRecordsOfATableWhoseInsertLockIsLive() throws Exception {
    String table = destination.prefix() + "sales/";
    PendingUpload shimUpload =
        PendingUploads.upload(gateway, table + "part-shim", new byte[] {7}, "a");
    String recordKey = table + ".hive-staging_hive_2/-ext-10000/_tmp.part-shim";
    gateway.putObject(
        recordKey, PendingFileFormat.toJson(PendingFile.closed(shimUpload, 1L)), false);
    String lockKey = table + dev.writeonce.core.json.InsertLockFormat.OBJECT_NAME;
    long now = System.currentTimeMillis();
    gateway.putObject(
        lockKey,
        dev.writeonce.core.json.InsertLockFormat.toJson(
            new dev.writeonce.core.model.InsertLock(
                "hiveserver2-a", "lock-1", "host-a", destination.uriOf(table), now, now, 600_000L)),
        false);

    Result held = run("purge", "--older-than=0s", "--yes", "--json");

    assertThat(held.exit()).as(held.err()).isZero();
    assertThat(json(held).get("shimRecords").toString()).contains("left-locked");
    assertThat(view.openUploads(List.of(shimUpload.key()))).hasSize(1);
    assertThat(view.keys("")).contains(recordKey);

    gateway.deleteObjects(List.of(lockKey));
    Result released = run("purge", "--older-than=0s", "--yes", "--json");

    assertThat(released.exit()).as(released.err()).isZero();
    assertThat(view.openUploads(List.of(shimUpload.key()))).isEmpty();
    assertThat(view.keys("")).doesNotContain(recordKey);
  }

  /**
   * Earlier versions left a marker under {@code _writeonce/finished/} for each finished job, which
   * told a restarted driver of that job, during the fence retention, not to run it again. Purge
   * removes such markers once the retention is over, whatever --older-than says.
   */
  @Test
  void purgeRemovesAFinishedJobMarkerOfAnEarlierVersionOnlyOnceTheFenceRetentionIsOver()
      throws Exception {
    Destination table = Destination.of(destination + "daily/");
    String marker = table.keyOf("_writeonce/finished/job_cli_0051.json");
    gateway.putObject(
        marker,
        ("{\"format\":\"writeonce.job-finished\",\"version\":1,\"jobId\":\"job_cli_0051\","
                + "\"uuid\":\"run-1\",\"finishedAtMillis\":1}")
            .getBytes(StandardCharsets.UTF_8),
        false);

    Result young = run("purge", "--older-than=0s", "--yes", "--json");

    assertThat(young.exit()).as(young.err()).isZero();
    assertThat(json(young).get("finishedMarkers").asInt()).isZero();
    assertThat(view.keys("")).contains(marker);

    Result expired =
        run(
            "purge",
            "--older-than=0s",
            "--yes",
            "--json",
            "--conf",
            CommitterConfig.FENCE_RETENTION + "=0s");

    assertThat(expired.exit()).as(expired.err()).isZero();
    assertThat(json(expired).get("finishedMarkers").asInt()).isEqualTo(1);
    assertThat(view.keys("")).doesNotContain(marker);
  }
}
