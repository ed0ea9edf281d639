package dev.writeonce.staging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.committer.ConflictPolicy;
import dev.writeonce.core.committer.MultipartOutputCommitter;
import dev.writeonce.core.committer.WriteonceCommitterFactory;
import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.engine.JobCommitEngine;
import dev.writeonce.core.engine.JobInspector;
import dev.writeonce.core.engine.JobLayout;
import dev.writeonce.core.errors.CommitConflictException;
import dev.writeonce.core.errors.CommitStateUnknownException;
import dev.writeonce.core.errors.DestinationConflictException;
import dev.writeonce.core.errors.ErrorKind;
import dev.writeonce.core.errors.InvalidJobException;
import dev.writeonce.core.errors.JobAlreadyFinishedException;
import dev.writeonce.core.errors.JobCommittedException;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.store.RequestType;
import dev.writeonce.core.testing.FaultInjectingStore;
import dev.writeonce.core.testing.InMemoryStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.JobStatus;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitterFactory;
import org.apache.hadoop.mapreduce.task.JobContextImpl;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The staging committer through Hadoop's committer protocol, over the in-memory store. */
class StagingCommitterTest {

  private static final org.apache.hadoop.fs.Path OUT =
      new org.apache.hadoop.fs.Path("s3a://bucket/table");

  @TempDir Path staging;

  private final InMemoryStore memory = new InMemoryStore("bucket", System.currentTimeMillis());
  private final FaultInjectingStore store = new FaultInjectingStore(memory);
  private Configuration conf;
  private JobID jobId;

  @BeforeEach
  void setUp() {
    conf = new Configuration(false);
    conf.set(CommitterConfig.STAGING_DIR, staging.toString());
    jobId = new JobID("20261122", 7);
  }

  private StagingCommitter committer(JobContext context, ConflictPolicy policy) throws IOException {
    return new StagingCommitter("test", OUT, context, policy, (path, c) -> store);
  }

  private TaskAttemptContext attempt(int task, int attempt) {
    return new TaskAttemptContextImpl(
        conf,
        new TaskAttemptID(jobId.getJtIdentifier(), jobId.getId(), TaskType.MAP, task, attempt));
  }

  private JobContext job() {
    return new JobContextImpl(conf, jobId);
  }

  /** Runs an attempt that writes files (relative path = content) and commits it. */
  private void runTask(ConflictPolicy policy, int task, int attempt, List<String> files)
      throws IOException {
    TaskAttemptContext context = attempt(task, attempt);
    StagingCommitter committer = committer(context, policy);
    committer.setupTask(context);
    write(committer, files);
    assertThat(committer.needsTaskCommit(context)).isTrue();
    committer.commitTask(context);
  }

  private static void write(StagingCommitter committer, List<String> files) throws IOException {
    Path dir = Path.of(committer.getWorkPath().toUri().getPath());
    for (String file : files) {
      Path target = dir.resolve(file);
      Files.createDirectories(target.getParent());
      Files.writeString(target, "data of " + file);
      Files.writeString(target.resolveSibling("." + target.getFileName() + ".crc"), "crc");
    }
  }

  private String content(String key) {
    byte[] bytes = memory.content(key);
    return bytes == null ? null : new String(bytes, StandardCharsets.UTF_8);
  }

  private List<String> dataKeys() {
    return memory.keys().stream()
        .filter(k -> !k.contains("_writeonce/") && !k.endsWith("_SUCCESS"))
        .toList();
  }

  /**
   * Hadoop's staging contract, as its protocol scenarios check it: the work path is a {@code file:}
   * path, and an output format that opens it through {@code FileSystem.getLocal} writes there.
   */
  @Test
  void theWorkPathIsAFilePathThatHadoopsLocalFileSystemWritesAndTheJobPublishes() throws Exception {
    committer(job(), ConflictPolicy.directory()).setupJob(job());
    TaskAttemptContext context = attempt(0, 0);
    StagingCommitter committer = committer(context, ConflictPolicy.directory());
    committer.setupTask(context);

    assertThat(committer.getWorkPath().toUri().getScheme()).isEqualTo("file");
    org.apache.hadoop.fs.FileSystem local = org.apache.hadoop.fs.FileSystem.getLocal(conf);
    org.apache.hadoop.fs.Path file =
        new org.apache.hadoop.fs.Path(committer.getWorkPath(), "part-m-00000");
    try (org.apache.hadoop.fs.FSDataOutputStream out = local.create(file, false)) {
      out.write("key\tvalue\n".getBytes(StandardCharsets.UTF_8));
    }
    committer.commitTask(context);
    committer(job(), ConflictPolicy.directory()).commitJob(job());

    assertThat(content("table/part-m-00000")).isEqualTo("key\tvalue\n");
    assertThat(dataKeys()).containsExactly("table/part-m-00000");
    assertThat(memory.openUploadIds()).isEmpty();
  }

  @Test
  void taskCommitUploadsWithoutCompletingAndJobCommitPublishes() throws Exception {
    ConflictPolicy policy = ConflictPolicy.directory();
    committer(job(), policy).setupJob(job());
    runTask(policy, 0, 0, List.of("part-m-00000", "sub/part-m-00000"));
    runTask(policy, 1, 0, List.of("part-m-00001"));

    assertThat(dataKeys()).as("nothing visible after task commits").isEmpty();
    assertThat(memory.openUploadIds()).hasSize(3);
    assertThat(staging).isEmptyDirectory();

    committer(job(), policy).commitJob(job());

    assertThat(dataKeys())
        .containsExactly("table/part-m-00000", "table/part-m-00001", "table/sub/part-m-00000");
    assertThat(content("table/sub/part-m-00000")).isEqualTo("data of sub/part-m-00000");
    assertThat(memory.openUploadIds()).isEmpty();
    assertThat(memory.keys())
        .as("the output and _SUCCESS, nothing else")
        .containsExactly(
            "table/_SUCCESS", "table/part-m-00000", "table/part-m-00001", "table/sub/part-m-00000");
  }

  @Test
  void aFailedFirstAttemptLeavesNothingAndTheRetryIsCommittedOnce() throws Exception {
    ConflictPolicy policy = ConflictPolicy.directory();
    committer(job(), policy).setupJob(job());
    TaskAttemptContext first = attempt(0, 0);
    StagingCommitter failing = committer(first, policy);
    failing.setupTask(first);
    write(failing, List.of("part-m-00000"));
    failing.abortTask(first);
    runTask(policy, 0, 1, List.of("part-m-00000"));

    committer(job(), policy).commitJob(job());

    assertThat(dataKeys()).containsExactly("table/part-m-00000");
    assertThat(memory.openUploadIds()).isEmpty();
  }

  @Test
  void twoCommittedAttemptsOfOneTaskPublishOnlyTheLater() throws Exception {
    ConflictPolicy policy = ConflictPolicy.directory();
    committer(job(), policy).setupJob(job());
    runTask(policy, 0, 0, List.of("part-m-00000"));
    runTask(policy, 0, 1, List.of("part-m-00000"));

    committer(job(), policy).commitJob(job());

    assertThat(dataKeys()).containsExactly("table/part-m-00000");
    assertThat(memory.openUploadIds()).isEmpty();
  }

  @Test
  void aJobOfMoreFilesThanAManifestChunkCommitsFromItsStoredTaskManifestsAndLeavesNothing()
      throws Exception {
    conf.setInt(CommitterConfig.MANIFEST_CHUNK_UPLOADS, 2);
    ConflictPolicy policy = ConflictPolicy.directory();
    committer(job(), policy).setupJob(job());
    runTask(policy, 0, 0, List.of("part-m-00000-a", "part-m-00000-b"));
    runTask(policy, 1, 0, List.of("part-m-00001-a", "part-m-00001-b"));
    runTask(policy, 1, 1, List.of("part-m-00001-c"));
    runTask(policy, 2, 0, List.of("part-m-00002-a", "part-m-00002-b"));

    committer(job(), policy).commitJob(job());

    assertThat(dataKeys())
        .containsExactly(
            "table/part-m-00000-a",
            "table/part-m-00000-b",
            "table/part-m-00001-c",
            "table/part-m-00002-a",
            "table/part-m-00002-b");
    assertThat(memory.openUploadIds()).as("the superseded attempt's uploads aborted").isEmpty();
    assertThat(memory.keys()).noneMatch(k -> k.contains("_writeonce/"));
  }

  @Test
  void partitionedReplaceOfMoreFilesThanAManifestChunkReplacesOnlyWrittenPartitions()
      throws Exception {
    conf.set(CommitterConfig.CONFLICT_MODE, "replace");
    conf.setInt(CommitterConfig.MANIFEST_CHUNK_UPLOADS, 1);
    memory.putObject("table/day=1/old", new byte[] {1}, false);
    memory.putObject("table/day=1/part-0", new byte[] {2}, false);
    memory.putObject("table/day=9/old", new byte[] {9}, false);
    ConflictPolicy policy = ConflictPolicy.partitioned();
    committer(job(), policy).setupJob(job());
    runTask(policy, 0, 0, List.of("day=1/part-0", "day=2/part-0"));
    runTask(policy, 1, 0, List.of("day=2/part-1"));

    committer(job(), policy).commitJob(job());

    assertThat(dataKeys())
        .containsExactly(
            "table/day=1/part-0", "table/day=2/part-0", "table/day=2/part-1", "table/day=9/old");
    assertThat(memory.content("table/day=1/part-0")).isNotEqualTo(new byte[] {2});
    assertThat(memory.keys()).noneMatch(k -> k.contains("_writeonce/"));
  }

  @Test
  void aFailingPartUploadAbortsEveryUploadOfTheAttemptAndKeepsLocalFiles() throws Exception {
    ConflictPolicy policy = ConflictPolicy.directory();
    conf.setInt(CommitterConfig.TASK_UPLOAD_THREADS, 1);
    store.failOnce(RequestType.UPLOAD_PART, 3, ErrorKind.TRANSIENT);
    TaskAttemptContext context = attempt(0, 0);
    StagingCommitter committer = committer(context, policy);
    committer.setupTask(context);
    write(committer, List.of("a", "b", "c", "d"));

    assertThatThrownBy(() -> committer.commitTask(context)).hasMessageContaining("injected");
    assertThat(memory.openUploadIds()).isEmpty();
    assertThat(Path.of(committer.getWorkPath().toUri().getPath()).resolve("d")).exists();
    committer.abortTask(context);
    assertThat(staging).isEmptyDirectory();
  }

  @Test
  void jobAbortAfterTaskCommitsLeavesNothingVisibleAndNoOpenUpload() throws Exception {
    ConflictPolicy policy = ConflictPolicy.directory();
    committer(job(), policy).setupJob(job());
    runTask(policy, 0, 0, List.of("part-m-00000"));
    runTask(policy, 1, 0, List.of("part-m-00001"));

    committer(job(), policy).abortJob(job(), JobStatus.State.FAILED);

    assertThat(memory.keys()).isEmpty();
    assertThat(memory.openUploadIds()).isEmpty();
  }

  @Test
  void failModeRefusesADestinationWithDataAtJobSetupNamingPathAndSetting() throws Exception {
    conf.set(CommitterConfig.CONFLICT_MODE, "fail");
    memory.putObject("table/old", new byte[] {1}, false);

    assertThatThrownBy(() -> committer(job(), ConflictPolicy.directory()).setupJob(job()))
        .isInstanceOf(DestinationConflictException.class)
        .hasMessageContaining("s3a://bucket/table/")
        .hasMessageContaining("writeonce.conflict-mode");
  }

  @Test
  void partitionedReplaceReplacesOnlyWrittenPartitions() throws Exception {
    conf.set(CommitterConfig.CONFLICT_MODE, "replace");
    memory.putObject("table/day=1/old", new byte[] {1}, false);
    memory.putObject("table/day=9/old", new byte[] {9}, false);
    ConflictPolicy policy = ConflictPolicy.partitioned();
    committer(job(), policy).setupJob(job());
    runTask(policy, 0, 0, List.of("day=1/part-0", "day=2/part-0"));

    committer(job(), policy).commitJob(job());

    assertThat(dataKeys())
        .containsExactly("table/day=1/part-0", "table/day=2/part-0", "table/day=9/old");
  }

  @Test
  void partitionedFailRefusesAnExistingPartitionAndAbortsTheJob() throws Exception {
    conf.set(CommitterConfig.CONFLICT_MODE, "fail");
    memory.putObject("table/day=1/old", new byte[] {1}, false);
    ConflictPolicy policy = ConflictPolicy.partitioned();
    committer(job(), policy).setupJob(job());
    runTask(policy, 0, 0, List.of("day=1/part-0", "day=2/part-0"));

    assertThatThrownBy(() -> committer(job(), policy).commitJob(job()))
        .isInstanceOf(DestinationConflictException.class)
        .hasMessageContaining("s3a://bucket/table/day=1/");
    assertThat(dataKeys()).containsExactly("table/day=1/old");
    assertThat(memory.openUploadIds()).isEmpty();
  }

  @Test
  void partitionedAppendKeepsOldFiles() throws Exception {
    memory.putObject("table/day=1/old", new byte[] {1}, false);
    ConflictPolicy policy = ConflictPolicy.partitioned();
    committer(job(), policy).setupJob(job());
    runTask(policy, 0, 0, List.of("day=1/part-0"));

    committer(job(), policy).commitJob(job());

    assertThat(dataKeys()).containsExactly("table/day=1/old", "table/day=1/part-0");
  }

  @Test
  void theFactorySelectsTheCommitterByName() throws Exception {
    conf.set(WriteonceCommitterFactory.COMMITTER, "partitioned");
    conf.set(
        PathOutputCommitterFactory.COMMITTER_FACTORY_SCHEME_PATTERN.replace("%s", "s3a"),
        WriteonceCommitterFactory.class.getName());
    var committer = PathOutputCommitterFactory.createCommitter(OUT, attempt(0, 0));
    assertThat(committer).isInstanceOf(StagingCommitter.class);
    assertThat(((StagingCommitter) committer).name()).isEqualTo("partitioned");

    conf.set(WriteonceCommitterFactory.COMMITTER, "nonesuch");
    assertThatThrownBy(() -> PathOutputCommitterFactory.createCommitter(OUT, attempt(0, 0)))
        .hasMessage(
            "writeonce.committer = 'nonesuch' is not a committer's name: use one of directory,"
                + " magic, partitioned");
  }

  // Hadoop's committer contract: what an application master, Spark or a second job may do.

  private java.util.Map<String, String> snapshot() {
    java.util.Map<String, String> objects = new java.util.TreeMap<>();
    memory.keys().forEach(k -> objects.put(k, content(k)));
    return objects;
  }

  @Test
  void aRepeatedCommitJobIsRefusedAndChangesNoObjectInReplaceMode() throws Exception {
    conf.set(CommitterConfig.CONFLICT_MODE, "replace");
    ConflictPolicy policy = ConflictPolicy.directory();
    committer(job(), policy).setupJob(job());
    runTask(policy, 0, 0, List.of("part-m-00000"));
    committer(job(), policy).commitJob(job());
    var after = snapshot();
    int putsBefore = store.calls(RequestType.PUT_OBJECT);

    assertThatThrownBy(() -> committer(job(), policy).commitJob(job()))
        .isInstanceOf(JobAlreadyFinishedException.class)
        .hasMessageContaining("repeated commitJob is refused")
        .hasMessageContaining("do not run the job again");
    assertThat(snapshot()).isEqualTo(after).containsKey("table/part-m-00000");
    assertThat(store.calls(RequestType.PUT_OBJECT)).isEqualTo(putsBefore);
    assertThat(store.calls(RequestType.DELETE_OBJECTS)).isEqualTo(2); // the first commit's
  }

  @Test
  void aRepeatedCommitJobInAppendModeKeepsTheFirstSuccessMarker() throws Exception {
    ConflictPolicy policy = ConflictPolicy.directory();
    committer(job(), policy).setupJob(job());
    runTask(policy, 0, 0, List.of("part-m-00000"));
    committer(job(), policy).commitJob(job());
    String success = content("table/_SUCCESS");

    assertThatThrownBy(() -> committer(job(), policy).commitJob(job()))
        .isInstanceOf(JobAlreadyFinishedException.class);
    assertThat(content("table/_SUCCESS")).isEqualTo(success).contains("part-m-00000");
  }

  @Test
  void aTaskCommitAfterTheJobCommittedIsRefusedAndLeavesNothing() throws Exception {
    ConflictPolicy policy = ConflictPolicy.directory();
    committer(job(), policy).setupJob(job());
    runTask(policy, 0, 0, List.of("part-m-00000"));
    committer(job(), policy).commitJob(job());
    var after = snapshot();

    assertThatThrownBy(() -> runTask(policy, 1, 0, List.of("part-m-00001")))
        .isInstanceOf(CommitConflictException.class)
        .hasMessageContaining("nothing of it is left");
    assertThat(snapshot()).isEqualTo(after);
    assertThat(memory.openUploadIds()).isEmpty();
    assertThat(memory.keys()).noneMatch(k -> k.contains("_writeonce/"));
  }

  @Test
  void aSecondJobWithTheSameJobIdOnOneDestinationIsRefusedBeforeWritingAndTheFirstCommits()
      throws Exception {
    ConflictPolicy policy = ConflictPolicy.directory();
    Configuration second = new Configuration(conf);
    committer(job(), policy).setupJob(job());
    JobContext secondJob = new JobContextImpl(new org.apache.hadoop.mapred.JobConf(second), jobId);

    assertThatThrownBy(() -> committer(secondJob, policy).setupJob(secondJob))
        .isInstanceOf(CommitConflictException.class)
        .hasMessageContaining("in use by another run")
        .hasMessageContaining("writeonce.job.uuid");
    // A local runner aborts a job whose setup failed: that must not touch the first job.
    committer(secondJob, policy).abortJob(secondJob, JobStatus.State.FAILED);

    runTask(policy, 0, 0, List.of("part-m-00000"));
    committer(job(), policy).commitJob(job());
    assertThat(dataKeys()).containsExactly("table/part-m-00000");
    assertThat(memory.openUploadIds()).isEmpty();
  }

  /**
   * Hadoop's protocol scenario of parallel jobs to one destination: the same job id, a distinct
   * write UUID each, as Spark gives every write. Both commit, each with its own records.
   */
  @Test
  void twoJobsWithOneJobIdAndDistinctGivenRunIdsBothCommitToOneDestination() throws Exception {
    ConflictPolicy policy = ConflictPolicy.directory();
    List<JobContext> jobs = new java.util.ArrayList<>();
    for (String uuid : List.of("uuid-first", "uuid-second")) {
      Configuration given = new Configuration(conf);
      given.set(MultipartOutputCommitter.SPARK_WRITE_JOB_UUID, uuid);
      JobContext job = new JobContextImpl(new org.apache.hadoop.mapred.JobConf(given), jobId);
      committer(job, policy).setupJob(job);
      jobs.add(job);
    }
    for (int j = 0; j < 2; j++) {
      TaskAttemptContext task =
          new TaskAttemptContextImpl(
              jobs.get(j).getConfiguration(),
              new TaskAttemptID(jobId.getJtIdentifier(), jobId.getId(), TaskType.MAP, 0, 0));
      StagingCommitter committer = committer(task, policy);
      committer.setupTask(task);
      write(committer, List.of("part-m-0000" + j));
      committer.commitTask(task);
    }
    for (JobContext job : jobs) {
      committer(job, policy).commitJob(job);
    }

    assertThat(dataKeys()).containsExactly("table/part-m-00000", "table/part-m-00001");
    assertThat(content("table/part-m-00001")).isEqualTo("data of part-m-00001");
    assertThat(memory.openUploadIds()).isEmpty();
    assertThat(memory.keys()).noneMatch(k -> k.contains("_writeonce/"));
  }

  @Test
  void twoJobsWithOneJobIdOnTwoDestinationsKeepApartLocalFiles() throws Exception {
    ConflictPolicy policy = ConflictPolicy.directory();
    StagingCommitter one = committer(attempt(0, 0), policy);
    StagingCommitter other =
        new StagingCommitter(
            "test",
            new org.apache.hadoop.fs.Path("s3a://bucket/other"),
            attempt(0, 0),
            policy,
            (path, c) -> store);
    assertThat(one.getWorkPath()).isNotEqualTo(other.getWorkPath());
  }

  @Test
  void theJobIdOfARunIsCarriedInTheJobConfigurationForItsTasks() throws Exception {
    ConflictPolicy policy = ConflictPolicy.directory();
    JobContext job = new JobContextImpl(new org.apache.hadoop.mapred.JobConf(conf), jobId);
    committer(job, policy).setupJob(job);
    assertThat(job.getConfiguration().get(MultipartOutputCommitter.JOB_UUID)).isNotBlank();
    assertThat(memory.keys()).contains("table/_writeonce/jobs/job_20261122_0007/job.json");
  }

  @Test
  void taskCallsActOnTheAttemptTheirContextNamesNotTheCommittersOwn() throws Exception {
    ConflictPolicy policy = ConflictPolicy.directory();
    committer(job(), policy).setupJob(job());
    TaskAttemptContext first = attempt(0, 0);
    TaskAttemptContext second = attempt(0, 1);
    StagingCommitter forFirst = committer(first, policy);
    forFirst.setupTask(first);
    write(forFirst, List.of("part-m-00000"));
    StagingCommitter forSecond = committer(second, policy);
    forSecond.setupTask(second);
    write(forSecond, List.of("part-m-00000"));

    // An application master aborts the second attempt through the first's committer.
    forFirst.abortTask(second);
    assertThat(Path.of(forSecond.getWorkPath().toUri().getPath())).doesNotExist();
    assertThat(Path.of(forFirst.getWorkPath().toUri().getPath()).resolve("part-m-00000")).exists();
    assertThat(forSecond.needsTaskCommit(second)).isFalse();

    forSecond.commitTask(first); // and commits the first through the second's
    committer(job(), policy).commitJob(job());
    assertThat(dataKeys()).containsExactly("table/part-m-00000");
    assertThat(memory.openUploadIds()).isEmpty();
  }

  @Test
  void localFilesOfAttemptsNeverCommittedOrAbortedAreRemovedWithTheJob() throws Exception {
    ConflictPolicy policy = ConflictPolicy.directory();
    committer(job(), policy).setupJob(job());
    TaskAttemptContext lost = attempt(1, 0);
    StagingCommitter lostCommitter = committer(lost, policy);
    lostCommitter.setupTask(lost);
    write(lostCommitter, List.of("part-m-00001")); // its executor dies here
    runTask(policy, 0, 0, List.of("part-m-00000"));

    committer(job(), policy).commitJob(job());
    assertThat(staging).isEmptyDirectory();

    jobId = new JobID("20261122", 8);
    committer(job(), policy).setupJob(job());
    TaskAttemptContext lostAgain = attempt(1, 0);
    StagingCommitter again = committer(lostAgain, policy);
    again.setupTask(lostAgain);
    write(again, List.of("part-m-00001"));
    committer(job(), policy).abortJob(job(), JobStatus.State.KILLED);
    assertThat(staging).isEmptyDirectory();
  }

  @Test
  void aFailureAfterTheCommitPointIsReportedAsCommittedWithTheRecoverCommand() throws Exception {
    ConflictPolicy policy = ConflictPolicy.directory();
    committer(job(), policy).setupJob(job());
    runTask(policy, 0, 0, List.of("part-m-00000", "part-m-00001"));
    store.failFrom(RequestType.COMPLETE_UPLOAD, 2, ErrorKind.FATAL);

    assertThatThrownBy(() -> committer(job(), policy).commitJob(job()))
        .isInstanceOf(JobCommittedException.class)
        .hasMessageContaining("is COMMITTED")
        .hasMessageContaining("do NOT run the job again")
        .hasMessageContaining("writeonce recover s3a://bucket/table/");
    store.heal();
    committer(job(), policy).abortJob(job(), JobStatus.State.FAILED); // what engines then do
    assertThat(dataKeys()).containsExactly("table/part-m-00000", "table/part-m-00001");
    assertThat(memory.openUploadIds()).isEmpty();
  }

  @Test
  void aTransientFailureAfterTheCommitPointIsRetriedAndTheJobSucceeds() throws Exception {
    ConflictPolicy policy = ConflictPolicy.directory();
    committer(job(), policy).setupJob(job());
    runTask(policy, 0, 0, List.of("part-m-00000", "part-m-00001"));
    store.failOnce(RequestType.COMPLETE_UPLOAD, 1, ErrorKind.FATAL);

    committer(job(), policy).commitJob(job());
    assertThat(dataKeys()).containsExactly("table/part-m-00000", "table/part-m-00001");
    assertThat(memory.keys()).noneMatch(k -> k.contains("_writeonce/"));
  }

  @Test
  void abortJobAfterAManifestWriteOfUnknownOutcomeWaitsForTheTruth() throws Exception {
    ConflictPolicy policy = ConflictPolicy.directory();
    committer(job(), policy).setupJob(job()); // PUT 1
    runTask(policy, 0, 0, List.of("part-m-00000")); // PUT 2 (intent), PUT 3 (task manifest)
    // PUT 4 marks the job committing; PUT 5, the manifest, lands but its answer is lost, and
    // the check that follows cannot read it either.
    store.loseAnswerOf(RequestType.PUT_OBJECT, 5, ErrorKind.TRANSIENT);
    store.failOnce(RequestType.GET_OBJECT, 5, ErrorKind.TRANSIENT);
    assertThatThrownBy(() -> committer(job(), policy).commitJob(job()))
        .isInstanceOf(CommitStateUnknownException.class);

    committer(job(), policy).abortJob(job(), JobStatus.State.FAILED);
    assertThat(dataKeys())
        .as("the manifest had landed: the job is finished, not destroyed")
        .containsExactly("table/part-m-00000");
    assertThat(memory.openUploadIds()).isEmpty();
  }

  @Test
  void failModeTakesAnEmptyTablesDirectoryMarkerForNoData() throws Exception {
    conf.set(CommitterConfig.CONFLICT_MODE, "fail");
    memory.putObject("table/", new byte[0], false); // S3A's mkdirs, a console's "create folder"
    ConflictPolicy policy = ConflictPolicy.directory();
    committer(job(), policy).setupJob(job());
    runTask(policy, 0, 0, List.of("part-m-00000"));

    committer(job(), policy).commitJob(job());
    assertThat(dataKeys()).containsExactly("table/", "table/part-m-00000");
  }

  @Test
  void uploadsOfAnAttemptThatDiedWhileUploadingAreFoundFromItsIntentAndAborted() throws Exception {
    ConflictPolicy policy = ConflictPolicy.directory();
    conf.setInt(CommitterConfig.TASK_UPLOAD_THREADS, 1);
    committer(job(), policy).setupJob(job());
    // The attempt dies after two uploads started: its own abort never happens.
    store.failOnce(RequestType.UPLOAD_PART, 2, ErrorKind.FATAL);
    store.failFrom(RequestType.ABORT_UPLOAD, 1, ErrorKind.FATAL);
    assertThatThrownBy(() -> runTask(policy, 0, 0, List.of("a", "b", "c")));
    store.heal();
    assertThat(memory.openUploadIds()).hasSize(2);

    runTask(policy, 0, 1, List.of("a", "b", "c"));
    committer(job(), policy).commitJob(job());

    assertThat(dataKeys()).containsExactly("table/a", "table/b", "table/c");
    assertThat(memory.openUploadIds()).isEmpty();
    // The dead attempt's intent stays, with the finished job's record, for the retention: were
    // the attempt still alive, a later recovery would abort what it adds.
    assertThat(memory.keys())
        .filteredOn(k -> k.contains("_writeonce/"))
        .containsExactlyInAnyOrder(
            "table/_writeonce/jobs/job_20261122_0007/intents/attempt_20261122_0007_m_000000_0.json",
            "table/_writeonce/jobs/job_20261122_0007/job.json");
  }

  @Test
  void uploadsOfAnAttemptThatDiedWhileUploadingAreAbortedWithTheJob() throws Exception {
    ConflictPolicy policy = ConflictPolicy.directory();
    conf.setInt(CommitterConfig.TASK_UPLOAD_THREADS, 1);
    committer(job(), policy).setupJob(job());
    store.failOnce(RequestType.UPLOAD_PART, 2, ErrorKind.FATAL);
    store.failFrom(RequestType.ABORT_UPLOAD, 1, ErrorKind.FATAL);
    assertThatThrownBy(() -> runTask(policy, 0, 0, List.of("a", "b", "c")));
    store.heal();

    committer(job(), policy).abortJob(job(), JobStatus.State.FAILED);
    assertThat(memory.openUploadIds()).isEmpty();
    assertThat(memory.keys())
        .containsExactlyInAnyOrder(
            "table/_writeonce/jobs/job_20261122_0007/intents/attempt_20261122_0007_m_000000_0.json",
            "table/_writeonce/jobs/job_20261122_0007/manifest.json");
  }

  // Found by the protocol simulation (ProtocolSimulationTest), kept as named regressions.

  @Test
  void aJobAbortedByRecoveryWhileItRunsCanNeverCommitLater() throws Exception {
    ConflictPolicy policy = ConflictPolicy.directory();
    committer(job(), policy).setupJob(job());
    runTask(policy, 0, 0, List.of("part-m-00000"));
    // An operator's recovery takes the running job for abandoned and aborts it.
    new JobCommitEngine(store, CommitterConfig.from(conf), Destination.of("s3a://bucket/table/"))
        .abort(job().getJobID().toString(), List.of());

    assertThatThrownBy(() -> committer(job(), policy).commitJob(job()))
        .isInstanceOf(CommitConflictException.class);
    // Even a driver past its checks cannot write the manifest: the fence stands.
    assertThatThrownBy(
            () ->
                memory.putObject(
                    "table/_writeonce/jobs/job_20261122_0007/manifest.json", new byte[] {1}, true))
        .hasMessageContaining("PreconditionFailed");
    assertThat(dataKeys()).isEmpty();
    assertThat(memory.openUploadIds()).isEmpty();
  }

  @Test
  void anAbortAfterASetupRefusedBeforeItsClaimLeavesTheOtherRunAlone() throws Exception {
    ConflictPolicy policy = ConflictPolicy.directory();
    memory.putObject("table/old", new byte[] {1}, false);
    Configuration failMode = new Configuration(conf);
    failMode.set(CommitterConfig.CONFLICT_MODE, "fail");
    JobContext refused = new JobContextImpl(new org.apache.hadoop.mapred.JobConf(failMode), jobId);
    assertThatThrownBy(() -> committer(refused, policy).setupJob(refused))
        .isInstanceOf(DestinationConflictException.class);
    // Another run with the same job id claims it in between, and its task writes.
    committer(job(), policy).setupJob(job());
    runTask(policy, 0, 0, List.of("part-m-00000"));

    committer(refused, policy).abortJob(refused, JobStatus.State.FAILED);

    assertThat(memory.openUploadIds()).hasSize(1);
    committer(job(), policy).commitJob(job());
    assertThat(dataKeys()).containsExactly("table/old", "table/part-m-00000");
  }

  @Test
  void aTaskManifestThatLandedButLostItsAnswerIsTakenBackBeforeItsUploadsAreAborted()
      throws Exception {
    ConflictPolicy policy = ConflictPolicy.directory();
    committer(job(), policy).setupJob(job()); // PUT 1
    store.loseAnswerOf(RequestType.PUT_OBJECT, 3, ErrorKind.TRANSIENT); // intent 2, manifest 3
    assertThatThrownBy(() -> runTask(policy, 0, 0, List.of("part-m-00000")))
        .hasMessageContaining("injected");
    assertThat(memory.keys()).noneMatch(k -> k.contains("/tasks/"));
    assertThat(memory.openUploadIds()).isEmpty();

    runTask(policy, 0, 1, List.of("part-m-00000"));
    committer(job(), policy).commitJob(job());
    assertThat(dataKeys()).containsExactly("table/part-m-00000");
    assertThat(memory.openUploadIds()).isEmpty();
  }

  /** The job as MapReduce's job submission leaves it in the configuration. */
  private void submittedAsMapReduce(int maps, int reduces) {
    conf.set("mapreduce.job.dir", "/tmp/hadoop-yarn/staging/job_20261122_0007");
    conf.setInt("mapreduce.job.maps", maps);
    conf.setInt("mapreduce.job.reduces", reduces);
  }

  @Test
  void aMapReduceJobMissingATaskManifestIsRefusedNamingTheTaskAndPublishesNothing()
      throws Exception {
    submittedAsMapReduce(2, 0);
    ConflictPolicy policy = ConflictPolicy.directory();
    committer(job(), policy).setupJob(job());
    runTask(policy, 0, 0, List.of("part-m-00000"));
    runTask(policy, 1, 0, List.of("part-m-00001"));
    // Something removed task 1's manifest: an abort by another process, or a lost record.
    store.deleteObjects(
        memory.keys().stream()
            .filter(k -> k.contains("/tasks/") && k.contains("_m_000001"))
            .toList());

    assertThatThrownBy(() -> committer(job(), policy).commitJob(job()))
        .isInstanceOf(InvalidJobException.class)
        .hasMessageContaining("1 of its 2 map tasks have no committed task manifest")
        .hasMessageContaining("task_20261122_0007_m_000001")
        .hasMessageContaining("Nothing was published");
    assertThat(dataKeys()).isEmpty();
    assertThat(memory.keys()).doesNotContain("table/_SUCCESS");
    assertThat(memory.openUploadIds()).as("both tasks' uploads aborted").isEmpty();
  }

  @Test
  void everyOutputTaskOfAMapReduceJobCommitsEvenWithoutOutputSoTheJobCanCountIt() throws Exception {
    submittedAsMapReduce(2, 0);
    ConflictPolicy policy = ConflictPolicy.directory();
    committer(job(), policy).setupJob(job());
    runTask(policy, 0, 0, List.of("part-m-00000"));
    TaskAttemptContext empty = attempt(1, 0);
    StagingCommitter committer = committer(empty, policy);
    committer.setupTask(empty);
    assertThat(committer.needsTaskCommit(empty)).isTrue();
    committer.commitTask(empty);

    committer(job(), policy).commitJob(job());

    assertThat(dataKeys()).containsExactly("table/part-m-00000");
    assertThat(memory.openUploadIds()).isEmpty();
  }

  @Test
  void mapTasksOfAJobWithReducersNeedNoCommitAndOnlyReduceTasksAreCounted() throws Exception {
    submittedAsMapReduce(3, 1);
    ConflictPolicy policy = ConflictPolicy.directory();
    committer(job(), policy).setupJob(job());
    TaskAttemptContext map = attempt(0, 0);
    StagingCommitter mapCommitter = committer(map, policy);
    mapCommitter.setupTask(map);
    assertThat(mapCommitter.needsTaskCommit(map)).isFalse();
    TaskAttemptContext reduce =
        new TaskAttemptContextImpl(
            conf, new TaskAttemptID(jobId.getJtIdentifier(), jobId.getId(), TaskType.REDUCE, 0, 0));
    StagingCommitter reduceCommitter = committer(reduce, policy);
    reduceCommitter.setupTask(reduce);
    write(reduceCommitter, List.of("part-r-00000"));
    reduceCommitter.commitTask(reduce);

    committer(job(), policy).commitJob(job());

    assertThat(dataKeys()).containsExactly("table/part-r-00000");
  }

  @Test
  void aRunningJobRenewsItsLeaseAndNoRenewalFollowsItsCommit() throws Exception {
    conf.set(CommitterConfig.JOB_LEASE, "1s");
    ConflictPolicy policy = ConflictPolicy.directory();
    committer(job(), policy).setupJob(job());
    String lease = "table/_writeonce/jobs/job_20261122_0007/lease.json";
    long deadline = System.currentTimeMillis() + 10_000;
    while (!memory.keys().contains(lease) && System.currentTimeMillis() < deadline) {
      Thread.sleep(50);
    }
    assertThat(memory.keys()).as("renewed every quarter of the lease").contains(lease);
    JobInspector.Job job =
        new JobInspector(store, new JobLayout(Destination.of(OUT.toString())))
            .inspect()
            .jobs()
            .get(0);
    assertThat(job.isLive(job.leaseRenewedMillis() + 999)).isTrue();
    assertThat(job.isLive(job.leaseRenewedMillis() + 1000)).as("lapsed").isFalse();

    runTask(policy, 0, 0, List.of("part-m-00000"));
    committer(job(), policy).commitJob(job());
    Thread.sleep(600); // more than two renewal periods

    assertThat(memory.keys()).containsExactly("table/_SUCCESS", "table/part-m-00000");
  }

  @Test
  void aFailModeClaimThatLandedButLostItsAnswerIsRecognisedAsOwnAndReleased() throws Exception {
    conf.set(CommitterConfig.CONFLICT_MODE, "fail");
    ConflictPolicy policy = ConflictPolicy.directory();
    committer(job(), policy).setupJob(job()); // PUT 1: job record
    runTask(policy, 0, 0, List.of("part-m-00000")); // PUT 2: intent, 3: task manifest
    // 4: committing; 5: the claim lands, and the retry of its lost answer finds it there.
    store.loseAnswerOf(RequestType.PUT_OBJECT, 5, ErrorKind.PRECONDITION_FAILED);

    committer(job(), policy).commitJob(job());

    assertThat(dataKeys()).containsExactly("table/part-m-00000");
    assertThat(memory.keys())
        .as("claim released")
        .containsExactly("table/_SUCCESS", "table/part-m-00000");
  }

  @Test
  void aFailModeJobRefusedByAnotherJobsClaimNamesThatJobAndHowToRemoveIt() throws Exception {
    conf.set(CommitterConfig.CONFLICT_MODE, "fail");
    ConflictPolicy policy = ConflictPolicy.directory();
    memory.putObject(
        "table/_writeonce/fail-mode.claim",
        dev.writeonce.core.json.JobRecordFormat.claimToJson(
            new dev.writeonce.core.model.DestinationClaim(
                "job_other_0001", "run-1", "driver-9", 1_795_000_000_000L, 1_795_000_600_000L)),
        false);
    committer(job(), policy).setupJob(job());
    runTask(policy, 0, 0, List.of("part-m-00000"));

    assertThatThrownBy(() -> committer(job(), policy).commitJob(job()))
        .isInstanceOf(DestinationConflictException.class)
        .hasMessageContaining("job job_other_0001 on host driver-9 since 2026-11-18")
        .hasMessageContaining("writeonce recover s3a://bucket/table/");
    assertThat(dataKeys()).isEmpty();
    assertThat(memory.openUploadIds()).isEmpty();
    assertThat(memory.keys()).contains("table/_writeonce/fail-mode.claim");
  }

  @Test
  void aDriverWhoseCommitFailedGivesUpItsLeaseSoRecoverNeedNotWaitForItToLapse() throws Exception {
    ConflictPolicy policy = ConflictPolicy.directory();
    JobContext driver = job(); // one context from setup to commit, as MapReduce's drivers use
    committer(driver, policy).setupJob(driver);
    runTask(policy, 0, 0, List.of("part-m-00000", "part-m-00001"));
    JobInspector inspector = new JobInspector(store, new JobLayout(Destination.of(OUT.toString())));
    long now = System.currentTimeMillis();
    assertThat(inspector.inspect().jobs().get(0).isLive(now)).as("set up").isTrue();
    store.failFrom(RequestType.COMPLETE_UPLOAD, 2, ErrorKind.FATAL);

    assertThatThrownBy(() -> committer(driver, policy).commitJob(driver))
        .isInstanceOf(JobCommittedException.class);

    JobInspector.Job job = inspector.inspect().jobs().get(0);
    assertThat(job.state()).isEqualTo(JobInspector.State.COMMITTED_UNFINISHED);
    assertThat(job.isLive(now)).as("given up: recover may finish it now").isFalse();
    store.heal();
    new JobCommitEngine(store, CommitterConfig.from(conf), Destination.of(OUT.toString()))
        .resume(job.jobId());
    assertThat(memory.keys())
        .containsExactly("table/_SUCCESS", "table/part-m-00000", "table/part-m-00001");
  }
}
