package dev.writeonce.staging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.committer.ConflictPolicy;
import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.errors.ErrorKind;
import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.model.UploadPart;
import dev.writeonce.core.store.RequestType;
import dev.writeonce.core.testing.FaultInjectingStore;
import dev.writeonce.core.testing.ForwardingStore;
import dev.writeonce.core.testing.InMemoryStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.JobStatus;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.task.JobContextImpl;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The staging committer uploading files as their writers close them: task commit waits for those
 * uploads instead of starting them, and every guarantee of the upload at task commit still holds.
 */
class StagingUploadsOnCloseTest {

  private static final org.apache.hadoop.fs.Path OUT =
      new org.apache.hadoop.fs.Path("s3a://bucket/table");
  private static final String INTENT =
      "table/_writeonce/jobs/job_20261125_0003/intents/attempt_20261125_0003_m_000000_0.json";

  @TempDir Path staging;

  private final InMemoryStore memory = new InMemoryStore("bucket", System.currentTimeMillis());
  private final List<String> createdWithoutIntent = new ArrayList<>();
  private final FaultInjectingStore store =
      new FaultInjectingStore(
          new ForwardingStore(memory) {
            @Override
            public String createUpload(String key) throws StoreException {
              byte[] intent = memory.content(INTENT);
              if (key.startsWith("table/")
                  && !key.contains("_writeonce/")
                  && (intent == null
                      || !new String(intent, StandardCharsets.UTF_8).contains('"' + key + '"'))) {
                createdWithoutIntent.add(key);
              }
              return super.createUpload(key);
            }

            @Override
            public UploadPart uploadPart(
                String key, String uploadId, int partNumber, Path file, long offset, long length)
                throws StoreException {
              partStarted.countDown();
              try {
                partGate.await();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
              return super.uploadPart(key, uploadId, partNumber, file, offset, length);
            }
          });

  /** Parts wait here until a test opens it; open by default. */
  private volatile java.util.concurrent.CountDownLatch partGate =
      new java.util.concurrent.CountDownLatch(0);

  private final java.util.concurrent.CountDownLatch partStarted =
      new java.util.concurrent.CountDownLatch(1);
  private final ConflictPolicy policy = ConflictPolicy.directory();
  private Configuration conf;
  private JobID jobId;

  @BeforeEach
  void setUp() {
    conf = new Configuration(false);
    conf.set(CommitterConfig.STAGING_DIR, staging.toString());
    conf.set(CommitterConfig.UPLOAD_ON_CLOSE, "true");
    conf.set(CommitterConfig.UPLOAD_ON_CLOSE_MIN_SIZE, "0");
    jobId = new JobID("20261125", 3);
  }

  private StagingCommitter committer(JobContext context) throws IOException {
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

  /** A task attempt set up: the context its calls name and its committer. */
  private record Attempt(TaskAttemptContext context, StagingCommitter committer) {}

  private Attempt setUpTask(int task, int attempt) throws IOException {
    TaskAttemptContext context = attempt(task, attempt);
    StagingCommitter committer = committer(context);
    committer.setupTask(context);
    return new Attempt(context, committer);
  }

  /** Sets the job up and its first task attempt. */
  private Attempt setUpJobAndTask() throws IOException {
    committer(job()).setupJob(job());
    return setUpTask(0, 0);
  }

  /** Writes a file as an engine does: through the work path's file system, then closes it. */
  private static void write(StagingCommitter committer, String name, String content)
      throws IOException {
    org.apache.hadoop.fs.Path path = new org.apache.hadoop.fs.Path(committer.getWorkPath(), name);
    FileSystem fs = path.getFileSystem(workConf());
    try (FSDataOutputStream out = fs.create(path, true)) {
      out.write(content.getBytes(StandardCharsets.UTF_8));
    }
  }

  private static FileSystem fs(StagingCommitter committer) throws IOException {
    return committer.getWorkPath().getFileSystem(workConf());
  }

  /** What the committer adds to a task's configuration so that its work path opens. */
  private static Configuration workConf() {
    Configuration work = new Configuration(false);
    work.set(
        "fs." + StagingLocalFileSystem.SCHEME + ".impl", StagingLocalFileSystem.class.getName());
    return work;
  }

  /** Waits until uploads started on close are open with their parts sent (one part each). */
  private void awaitOpenUploads(int count) throws InterruptedException {
    for (int i = 0; i < 1000 && !uploaded(count); i++) {
      Thread.sleep(10);
    }
    assertThat(memory.openUploadIds()).hasSize(count);
    assertThat(uploaded(count)).isTrue();
  }

  private boolean uploaded(int count) {
    return memory.openUploadIds().size() >= count
        && memory.counters().snapshot().getOrDefault(RequestType.UPLOAD_PART, 0L) >= count;
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

  @Test
  void filesAreUploadedAsTheyCloseAndTaskCommitStartsNoUploadOfItsOwn() throws Exception {
    Attempt task = setUpJobAndTask();
    TaskAttemptContext context = task.context();
    StagingCommitter committer = task.committer();
    write(committer, "day=1/part-0", "one");
    write(committer, "day=2/part-0", "two");
    awaitOpenUploads(2);

    Map<RequestType, Long> before = store.counters().snapshot();
    committer.commitTask(context);
    Map<RequestType, Long> taskCommit = store.counters().since(before);

    assertThat(taskCommit.getOrDefault(RequestType.CREATE_UPLOAD, 0L)).isZero();
    assertThat(taskCommit.getOrDefault(RequestType.UPLOAD_PART, 0L)).isZero();
    assertThat(createdWithoutIntent).as("uploads created before the intent named them").isEmpty();
    assertThat(dataKeys()).as("nothing visible before the job commits").isEmpty();
    assertThat(staging).isEmptyDirectory();

    committer(job()).commitJob(job());
    assertThat(dataKeys()).containsExactly("table/day=1/part-0", "table/day=2/part-0");
    assertThat(content("table/day=2/part-0")).isEqualTo("two");
    assertThat(memory.openUploadIds()).isEmpty();
  }

  @Test
  void filesBelowTheMinimumSizeWaitForTaskCommitUnderOneIntent() throws Exception {
    conf.set(CommitterConfig.UPLOAD_ON_CLOSE_MIN_SIZE, "6");
    Attempt task = setUpJobAndTask();
    TaskAttemptContext context = task.context();
    StagingCommitter committer = task.committer();
    write(committer, "big", "123456");
    awaitOpenUploads(1);
    write(committer, "small-1", "12345");
    write(committer, "small-2", "1");
    assertThat(memory.openUploadIds()).as("small files wait for task commit").hasSize(1);

    int intentsBefore = store.calls(RequestType.PUT_OBJECT);
    committer.commitTask(context);

    assertThat(memory.openUploadIds()).hasSize(3);
    assertThat(createdWithoutIntent).isEmpty();
    // One PUT for the intent naming the small files, one for the task manifest.
    assertThat(store.calls(RequestType.PUT_OBJECT) - intentsBefore).isEqualTo(2);
    committer(job()).commitJob(job());
    assertThat(dataKeys()).containsExactly("table/big", "table/small-1", "table/small-2");
    assertThat(memory.openUploadIds()).isEmpty();
  }

  @Test
  void aFileWrittenAgainAfterItsUploadIsCommittedWithItsLastContentAndTheStaleUploadAborted()
      throws Exception {
    Attempt task = setUpJobAndTask();
    TaskAttemptContext context = task.context();
    StagingCommitter committer = task.committer();
    write(committer, "part-0", "first");
    awaitOpenUploads(1);
    write(committer, "part-0", "second, longer");

    committer.commitTask(context);
    assertThat(memory.openUploadIds()).as("the stale upload is aborted").hasSize(1);
    committer(job()).commitJob(job());

    assertThat(content("table/part-0")).isEqualTo("second, longer");
    assertThat(memory.openUploadIds()).isEmpty();
  }

  @Test
  void aFileRewrittenWhileItsUploadOnCloseRunsLeavesThatUploadAbortedNotOpen() throws Exception {
    partGate = new java.util.concurrent.CountDownLatch(1);
    Attempt task = setUpJobAndTask();
    write(task.committer(), "part-0", "first");
    assertThat(partStarted.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
    // The upload of "first" is running: its upload is created, its part not yet sent.
    write(task.committer(), "part-0", "second, longer");
    partGate.countDown();

    task.committer().commitTask(task.context());
    committer(job()).commitJob(job());

    assertThat(content("table/part-0")).isEqualTo("second, longer");
    assertThat(memory.openUploadIds()).as("the running upload of the stale file").isEmpty();
  }

  @Test
  void aFileRenamedOrDeletedAfterItsUploadIsCommittedWhereItEndedAndNowhereElse() throws Exception {
    Attempt task = setUpJobAndTask();
    TaskAttemptContext context = task.context();
    StagingCommitter committer = task.committer();
    write(committer, "tmp-0", "moved");
    write(committer, "scratch", "deleted");
    awaitOpenUploads(2);
    org.apache.hadoop.fs.Path work = committer.getWorkPath();
    assertThat(
            fs(committer)
                .rename(
                    new org.apache.hadoop.fs.Path(work, "tmp-0"),
                    new org.apache.hadoop.fs.Path(work, "part-0")))
        .isTrue();
    assertThat(fs(committer).delete(new org.apache.hadoop.fs.Path(work, "scratch"), false))
        .isTrue();

    committer.commitTask(context);
    committer(job()).commitJob(job());

    assertThat(dataKeys()).containsExactly("table/part-0");
    assertThat(content("table/part-0")).isEqualTo("moved");
    assertThat(memory.openUploadIds()).isEmpty();
    assertThat(createdWithoutIntent).isEmpty();
  }

  @Test
  void aFileChangedBehindTheFileSystemAfterItsUploadIsUploadedAgain() throws Exception {
    Attempt task = setUpJobAndTask();
    TaskAttemptContext context = task.context();
    StagingCommitter committer = task.committer();
    write(committer, "part-0", "as closed");
    awaitOpenUploads(1);
    Files.writeString(
        Path.of(committer.getWorkPath().toUri().getPath()).resolve("part-0"),
        "changed in place, not through the file system");

    committer.commitTask(context);
    committer(job()).commitJob(job());

    assertThat(content("table/part-0")).isEqualTo("changed in place, not through the file system");
    assertThat(memory.openUploadIds()).isEmpty();
  }

  @Test
  void anUploadOnCloseThatFailsFailsTheTaskCommitAndLeavesNoOpenUpload() throws Exception {
    store.failOnce(RequestType.UPLOAD_PART, 2, ErrorKind.FATAL);
    Attempt task = setUpJobAndTask();
    TaskAttemptContext context = task.context();
    StagingCommitter committer = task.committer();
    write(committer, "part-0", "zero");
    write(committer, "part-1", "one");
    write(committer, "part-2", "two");

    assertThatThrownBy(() -> committer.commitTask(context))
        .hasMessageContaining("on close failed")
        .hasMessageContaining("injected");
    assertThat(memory.openUploadIds()).isEmpty();
    assertThat(memory.keys()).noneMatch(k -> k.contains("/tasks/"));

    committer.abortTask(context);
    committer(job()).abortJob(job(), JobStatus.State.FAILED);
    assertThat(dataKeys()).isEmpty();
    assertThat(memory.openUploadIds()).isEmpty();
  }

  @Test
  void abortTaskAbortsTheUploadsStartedOnClose() throws Exception {
    Attempt task = setUpJobAndTask();
    TaskAttemptContext context = task.context();
    StagingCommitter committer = task.committer();
    write(committer, "part-0", "zero");
    write(committer, "part-1", "one");
    awaitOpenUploads(2);

    committer.abortTask(context);

    assertThat(memory.openUploadIds()).isEmpty();
    assertThat(staging).isEmptyDirectory();
  }

  @Test
  void anAbortTaskInterruptedWhileAnUploadRunsReturnsAndTheJobAbortEndsTheUpload()
      throws Exception {
    CountDownLatch uploading = new CountDownLatch(1);
    store.pauseAt(RequestType.UPLOAD_PART, 1, uploading::countDown);
    Attempt task = setUpJobAndTask();
    TaskAttemptContext context = task.context();
    StagingCommitter committer = task.committer();
    write(committer, "part-0", "zero");
    assertThat(uploading.await(10, TimeUnit.SECONDS)).isTrue();

    // Spark interrupts a task it kills; its abort must not wait for an upload that hangs.
    Thread.currentThread().interrupt();
    committer.abortTask(context);
    assertThat(Thread.interrupted()).as("the interrupt is kept for the caller").isTrue();
    assertThat(memory.openUploadIds()).hasSize(1);

    committer(job()).abortJob(job(), JobStatus.State.KILLED);
    assertThat(memory.openUploadIds()).isEmpty();
    assertThat(dataKeys()).isEmpty();
  }

  @Test
  void uploadsOfAnAttemptThatDiesAfterItsFilesClosedAreFoundFromItsIntentByTheJobAbort()
      throws Exception {
    Attempt task = setUpJobAndTask();
    TaskAttemptContext context = task.context();
    StagingCommitter committer = task.committer();
    write(committer, "part-0", "zero");
    write(committer, "part-1", "one");
    awaitOpenUploads(2);
    // The attempt's JVM dies here: it never commits or aborts, and only the store remembers.
    UploadsOnClose.remove(Path.of(committer.getWorkPath().toUri().getPath()));

    committer(job()).abortJob(job(), JobStatus.State.FAILED);

    assertThat(memory.openUploadIds()).isEmpty();
    assertThat(dataKeys()).isEmpty();
    assertThat(createdWithoutIntent).isEmpty();
  }

  @Test
  void uploadsOfAnAttemptThatDiesAfterItsFilesClosedAreAbortedByTheJobCommitThatTakesItsRetry()
      throws Exception {
    StagingCommitter dying = setUpJobAndTask().committer();
    write(dying, "part-0", "first attempt");
    awaitOpenUploads(1);
    UploadsOnClose.remove(Path.of(dying.getWorkPath().toUri().getPath()));

    Attempt retry = setUpTask(0, 1);
    write(retry.committer(), "part-0", "retry");
    retry.committer().commitTask(retry.context());
    committer(job()).commitJob(job());

    assertThat(dataKeys()).containsExactly("table/part-0");
    assertThat(content("table/part-0")).isEqualTo("retry");
    assertThat(memory.openUploadIds()).isEmpty();
  }

  @Test
  void anAttemptThatNeitherCommitsNorAbortsIsForgottenOnceItsLocalFilesAreGone() throws Exception {
    Path idle = Path.of(setUpJobAndTask().committer().getWorkPath().toUri().getPath());
    assertThat(UploadsOnClose.isRegistered(idle)).isTrue();
    // A MapReduce attempt without output needs no task commit, and its directory may be removed
    // by another process: the next attempt set up in this JVM forgets it.
    Files.delete(idle);

    Path next = Path.of(setUpTask(1, 0).committer().getWorkPath().toUri().getPath());

    assertThat(UploadsOnClose.isRegistered(idle)).isFalse();
    assertThat(UploadsOnClose.isRegistered(next)).isTrue();
  }

  @Test
  void aTaskSetUpTwiceAbortsWhatItsFirstSetupUploaded() throws Exception {
    Attempt task = setUpJobAndTask();
    write(task.committer(), "part-0", "first");
    awaitOpenUploads(1);

    task.committer().setupTask(task.context());
    assertThat(memory.openUploadIds()).as("the first setup's upload").isEmpty();
    write(task.committer(), "part-0", "second");
    task.committer().commitTask(task.context());
    committer(job()).commitJob(job());

    assertThat(content("table/part-0")).isEqualTo("second");
    assertThat(memory.openUploadIds()).isEmpty();
  }

  @Test
  void taskCallsActOnTheAttemptTheirContextNamesWhateverCommitterTheyReach() throws Exception {
    committer(job()).setupJob(job());
    TaskAttemptContext context = attempt(3, 0);
    StagingCommitter jobsOwn = committer(job());
    jobsOwn.setupTask(context);
    write(committer(context), "part-3", "three");
    awaitOpenUploads(1);

    Map<RequestType, Long> before = store.counters().snapshot();
    jobsOwn.commitTask(context);
    assertThat(store.counters().since(before).getOrDefault(RequestType.CREATE_UPLOAD, 0L))
        .as("the upload started on close is the one committed")
        .isZero();
    committer(job()).commitJob(job());

    assertThat(content("table/part-3")).isEqualTo("three");
    assertThat(memory.openUploadIds()).isEmpty();
  }

  @Test
  void anUploadCreatedWhoseAnswerIsLostIsFoundFromTheIntentByTheJobAbort() throws Exception {
    store.loseAnswerOf(RequestType.CREATE_UPLOAD, 1, ErrorKind.TRANSIENT);
    Attempt task = setUpJobAndTask();
    write(task.committer(), "part-0", "zero");

    assertThatThrownBy(() -> task.committer().commitTask(task.context()))
        .hasMessageContaining("injected");
    assertThat(memory.openUploadIds()).as("created, its id unknown to the task").hasSize(1);
    task.committer().abortTask(task.context());
    committer(job()).abortJob(job(), JobStatus.State.FAILED);

    assertThat(memory.openUploadIds()).isEmpty();
    assertThat(dataKeys()).isEmpty();
  }

  @Test
  void withUploadOnCloseOffEveryFileWaitsForTaskCommit() throws Exception {
    conf.setBoolean(CommitterConfig.UPLOAD_ON_CLOSE, false);
    Attempt task = setUpJobAndTask();
    TaskAttemptContext context = task.context();
    StagingCommitter committer = task.committer();
    write(committer, "part-0", "zero");
    Thread.sleep(100);
    assertThat(memory.openUploadIds()).isEmpty();

    committer.commitTask(context);
    committer(job()).commitJob(job());
    assertThat(dataKeys()).containsExactly("table/part-0");
    assertThat(memory.openUploadIds()).isEmpty();
  }
}
