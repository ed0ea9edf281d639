package dev.writeonce.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.teststore.BucketView;
import dev.writeonce.teststore.EachStore;
import dev.writeonce.teststore.S3Api;
import dev.writeonce.teststore.StoreRelay;
import dev.writeonce.teststore.TestStore;
import dev.writeonce.teststore.Traffic;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.JobStatus;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.lib.output.FileOutputCommitter;
import org.apache.hadoop.mapreduce.task.JobContextImpl;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * FileOutputCommitter v1's job commit through the shim, cut at each request it sends in turn, and
 * with each answer lost in turn, by a {@link StoreRelay} between the committing process and the
 * store. Two tasks commit first (files at the top of the output and in a partition); only the job
 * commit goes through the proxy. After every cut:
 *
 * <ul>
 *   <li>each file is in place byte for byte, or still pending: its upload open and its record
 *       listed by the shim under {@code _temporary};
 *   <li>{@code _SUCCESS} is never there without every file;
 *   <li>the job's abort, by a new process, aborts every pending upload and removes the temporary
 *       tree, and leaves the files in place as they were.
 * </ul>
 *
 * After the answer of any one write is lost, the job commit returns with every file in place, byte
 * for byte, and no upload open. Task commits (v1 and v2) are cut the same way, then retried as the
 * framework retries a task. A cut after the store acted on a read leaves what a cut before it
 * leaves, so only writes are cut both ways. No COPY in any of it.
 */
@EachStore
class ShimCommitCutIT {

  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(ShimCommitCutIT.class);

  private static final int TASKS = 2;
  private static final int FILES_PER_TASK = 2;

  private final TestStore store;

  ShimCommitCutIT(TestStore store) {
    this.store = store;
  }

  @TempDir Path scratch;

  private StoreRelay proxy;
  private int algorithm = 1;
  private String bucket;
  private BucketView view;

  @BeforeEach
  void startProxy() throws Exception {
    proxy = StoreRelay.start(store.endpoint());
    bucket = store.newBucket("shim-cut");
    view = new BucketView(store, bucket);
  }

  @AfterEach
  void stopProxy() throws Exception {
    closeFileSystems();
    proxy.close();
  }

  /** The suite's settings for FileOutputCommitter v1 through the shim, straight to the store. */
  private Configuration direct(String out) {
    Configuration conf = MapReduceJobs.classicConfiguration(store, scratch, algorithm, true);
    store.emptyObjectSettings().forEach(conf::set);
    conf.set("mapreduce.output.fileoutputformat.outputdir", out);
    return conf;
  }

  /** The same through the proxy, with few and quick retries: a dead client fails fast. */
  private Configuration throughProxy(String out) {
    Configuration conf = direct(out);
    conf.set("fs.s3a.endpoint", proxy.endpoint().toString());
    conf.setInt("fs.s3a.attempts.maximum", 2);
    conf.setInt("fs.s3a.retry.limit", 2);
    conf.set("fs.s3a.retry.interval", "10ms");
    return conf;
  }

  /** Closes every cached file system; a crashed one may fail to close, as a dead process would. */
  private static void closeFileSystems() {
    try {
      FileSystem.closeAll();
    } catch (IOException e) {
      LOG.info("closing a file system that lost its store: {}", e.toString());
    }
  }

  /** One job, its tasks committed straight to the store; returns each final key's content. */
  private Map<String, String> jobWithCommittedTasks(String root, int jobNumber) throws Exception {
    Map<String, String> files = setUpJob(root, jobNumber);
    for (int task = 0; task < TASKS; task++) {
      TaskAttempt attempt = writeTask(root, jobNumber, task, 0, direct(view.uri(root + "out")));
      attempt.committer().commitTask(attempt.context());
      files.putAll(attempt.files());
    }
    closeFileSystems();
    return files;
  }

  private Map<String, String> setUpJob(String root, int jobNumber) throws IOException {
    String out = view.uri(root + "out");
    Configuration conf = direct(out);
    JobContext job = new JobContextImpl(conf, jobId(jobNumber));
    new FileOutputCommitter(new org.apache.hadoop.fs.Path(out), job).setupJob(job);
    return new LinkedHashMap<>();
  }

  /** A task attempt whose files are written, not committed. */
  private record TaskAttempt(
      TaskAttemptContext context, FileOutputCommitter committer, Map<String, String> files) {}

  private TaskAttempt writeTask(
      String root, int jobNumber, int task, int attemptNumber, Configuration conf)
      throws IOException {
    String out = view.uri(root + "out");
    TaskAttemptContext context =
        new TaskAttemptContextImpl(
            conf, new TaskAttemptID("2026112600", jobNumber, TaskType.MAP, task, attemptNumber));
    FileOutputCommitter committer =
        new FileOutputCommitter(new org.apache.hadoop.fs.Path(out), context);
    committer.setupTask(context);
    FileSystem fs = committer.getWorkPath().getFileSystem(conf);
    String directory = task == 0 ? "" : "p=" + task + "/";
    Map<String, String> files = new LinkedHashMap<>();
    for (int i = 0; i < FILES_PER_TASK; i++) {
      String name = String.format(Locale.ROOT, "%spart-m-%05d-%03d", directory, task, i);
      String content = name + " of " + root + ", attempt " + attemptNumber + "\n";
      try (FSDataOutputStream stream =
          fs.create(new org.apache.hadoop.fs.Path(committer.getWorkPath(), name), false)) {
        stream.write(content.getBytes(StandardCharsets.UTF_8));
      }
      files.put(root + "out/" + name, content);
    }
    return new TaskAttempt(context, committer, files);
  }

  private static JobID jobId(int jobNumber) {
    return new JobID("2026112600", jobNumber);
  }

  /** Runs the job commit through the proxy under {@code faults}; returns its failure, if any. */
  private Throwable commitThroughProxy(String root, int jobNumber, Consumer<StoreRelay> faults) {
    Configuration conf = throughProxy(view.uri(root + "out"));
    JobContext job = new JobContextImpl(conf, jobId(jobNumber));
    Throwable failure = null;
    faults.accept(proxy);
    try {
      new FileOutputCommitter(new org.apache.hadoop.fs.Path(view.uri(root + "out")), job)
          .commitJob(job);
    } catch (Throwable e) {
      failure = e;
    }
    closeFileSystems();
    proxy.heal();
    return failure;
  }

  /** The final keys of the files the shim still lists as pending under the job's temporary tree. */
  private Set<String> pendingFiles(String root) throws IOException {
    org.apache.hadoop.fs.Path temporary =
        new org.apache.hadoop.fs.Path(view.uri(root + "out/_temporary"));
    FileSystem fs = temporary.getFileSystem(direct(view.uri(root + "out")));
    Set<String> pending = new TreeSet<>();
    if (!fs.exists(temporary)) {
      return pending;
    }
    RemoteIterator<LocatedFileStatus> files = fs.listFiles(temporary, true);
    while (files.hasNext()) {
      String path = files.next().getPath().toUri().getPath();
      // .../out/_temporary/0/task_.../NAME: the name the job commit gives it under out/
      String[] parts = path.split("/_temporary/\\d+/task_[^/]+/", 2);
      if (parts.length == 2) {
        pending.add(root + "out/" + parts[1]);
      }
    }
    return pending;
  }

  /** The invariants after a job commit that failed, then the job's abort by a new process. */
  private void assertEachFileInPlaceOrPendingThenAborted(
      String what, String root, int jobNumber, Map<String, String> files) throws Exception {
    List<String> inPlace = new ArrayList<>();
    for (Map.Entry<String, String> file : files.entrySet()) {
      if (!view.keys(file.getKey()).isEmpty()) {
        assertThat(view.read(file.getKey()))
            .as("%s: %s", what, file.getKey())
            .isEqualTo(file.getValue());
        inPlace.add(file.getKey());
      }
    }
    List<String> notInPlace = new ArrayList<>(files.keySet());
    notInPlace.removeAll(inPlace);
    if (!view.keys(root + "out/_SUCCESS").isEmpty()) {
      assertThat(notInPlace).as("%s: _SUCCESS with files missing", what).isEmpty();
    }
    assertThat(pendingFiles(root))
        .as("%s: files not in place are still pending, found through their records", what)
        .containsAll(notInPlace);
    assertThat(view.openUploads(notInPlace))
        .as("%s: the uploads of files not in place", what)
        .containsExactlyInAnyOrderElementsOf(notInPlace);
    Map<String, String> etags = view.etags(root + "out/");

    Configuration conf = direct(view.uri(root + "out"));
    JobContext job = new JobContextImpl(conf, jobId(jobNumber));
    new FileOutputCommitter(new org.apache.hadoop.fs.Path(view.uri(root + "out")), job)
        .abortJob(job, JobStatus.State.FAILED);
    closeFileSystems();
    assertThat(view.openUploads(files.keySet()))
        .as("%s: open uploads after the abort", what)
        .isEmpty();
    assertThat(view.keys(root + "out/_temporary"))
        .as("%s: the temporary tree after the abort", what)
        .isEmpty();
    for (String key : inPlace) {
      assertThat(view.etags(key))
          .as("%s: %s after the abort", what, key)
          .containsEntry(key, etags.get(key));
    }
    for (String key : notInPlace) {
      assertThat(view.keys(key)).as("%s: %s after the abort", what, key).isEmpty();
    }
  }

  private void assertCommitted(String what, String root, Map<String, String> files)
      throws IOException {
    for (Map.Entry<String, String> file : files.entrySet()) {
      assertThat(view.keys(file.getKey())).as("%s: %s", what, file.getKey()).isNotEmpty();
      assertThat(view.read(file.getKey()))
          .as("%s: %s", what, file.getKey())
          .isEqualTo(file.getValue());
    }
    assertThat(view.keys(root + "out/_SUCCESS")).as(what).isNotEmpty();
    assertThat(view.keys(root + "out/_temporary")).as(what).isEmpty();
    assertThat(view.openUploads(files.keySet())).as("%s: open uploads", what).isEmpty();
  }

  /**
   * Whether a request of a clean run changes what the store holds. A cut after the store acted on a
   * read leaves what a cut before it leaves, so the sweeps cut after writes only.
   */
  private static boolean changesTheStore(String numberedRequest) {
    String method = numberedRequest.split(" ")[1];
    return !method.equals("GET") && !method.equals("HEAD");
  }

  /** The requests the job commit sends when nothing fails, numbered. */
  private List<String> requestsOfACleanJobCommit() throws Exception {
    Map<String, String> files = jobWithCommittedTasks("clean/", 1);
    Throwable failure = commitThroughProxy("clean/", 1, p -> p.byOrdinal(n -> null));
    assertThat(failure).as("the job commit without faults").isNull();
    List<String> numbered = proxy.numbered();
    assertCommitted("without faults", "clean/", files);
    LOG.info(
        "{}: a clean job commit sends {} requests: {}", store.name(), numbered.size(), numbered);
    assertThat(numbered).as("requests of the job commit").isNotEmpty();
    return numbered;
  }

  @Test
  void aJobCommitCutAtAnyRequestLeavesEachFileInPlaceOrPendingAndTheAbortLeavesNoUploadOpen()
      throws Exception {
    Traffic before = store.meter().read();
    List<String> clean = requestsOfACleanJobCommit();
    int failed = 0;
    for (int n = 1; n <= clean.size(); n++) {
      for (boolean actedOn : new boolean[] {false, true}) {
        if (actedOn && !changesTheStore(clean.get(n - 1))) {
          continue;
        }
        String root = String.format(Locale.ROOT, "cut-%03d-%s/", n, actedOn ? "after" : "before");
        int jobNumber = 100 + 2 * n + (actedOn ? 1 : 0);
        Map<String, String> files = jobWithCommittedTasks(root, jobNumber);
        int cut = n;
        Throwable failure =
            commitThroughProxy(
                root, jobNumber, actedOn ? p -> p.crashAfter(cut) : p -> p.crashAt(cut));
        String what =
            "cut "
                + (actedOn ? "after" : "at")
                + " request "
                + n
                + " ("
                + proxy.numbered().stream()
                    .filter(r -> r.startsWith(cut + " "))
                    .findFirst()
                    .orElse("?")
                + ")";
        if (failure == null) {
          // The cut request was the last one, and its answer did not matter to the commit.
          assertCommitted(what, root, files);
        } else {
          failed++;
          assertEachFileInPlaceOrPendingThenAborted(what, root, jobNumber, files);
        }
      }
    }
    assertThat(failed).as("job commits the cuts failed").isGreaterThanOrEqualTo(clean.size() / 2);
    assertThat(store.meter().read().minus(before).requests(S3Api.COPY_OBJECT)).isZero();
  }

  @Test
  void aJobCommitThatLosesAnyOneAnswerCommitsEveryFileOnce() throws Exception {
    Traffic before = store.meter().read();
    List<String> clean = requestsOfACleanJobCommit();
    for (int n = 1; n <= clean.size(); n++) {
      if (!changesTheStore(clean.get(n - 1))) {
        continue; // a read whose answer is lost is read again, as after any transient failure
      }
      String root = String.format(Locale.ROOT, "lost-%03d/", n);
      int jobNumber = 1000 + n;
      Map<String, String> files = jobWithCommittedTasks(root, jobNumber);
      int lost = n;
      Throwable failure = commitThroughProxy(root, jobNumber, p -> p.loseAnswerOf(lost));
      String what = "answer " + n + " lost";
      assertThat(failure).as("%s: %s", what, failure).isNull();
      assertCommitted(what, root, files);
    }
    assertThat(store.meter().read().minus(before).requests(S3Api.COPY_OBJECT)).isZero();
  }

  /**
   * A task commit cut at each of its requests in turn, before and after the store acted on it: the
   * framework runs the task again, and the job commits the second attempt's files only. The first
   * attempt's uploads, whose records the cut left in its directory, in the committed task's
   * directory or in both, are aborted by the second attempt's commit or by the job's cleanup.
   */
  @Test
  void aTaskCommitCutAtAnyRequestIsReplacedByItsRetryAndLeavesNoUploadOpen() throws Exception {
    sweepTaskCommitCuts("task", 2000);
  }

  /**
   * The same with FileOutputCommitter v2, whose task commit completes each file into place: a cut
   * leaves some of the first attempt's files in place, which the retry's commit replaces.
   */
  @Test
  void aVersion2TaskCommitCutAtAnyRequestIsReplacedByItsRetryAndLeavesNoUploadOpen()
      throws Exception {
    algorithm = 2;
    sweepTaskCommitCuts("v2-task", 3000);
  }

  private void sweepTaskCommitCuts(String prefix, int jobNumbers) throws Exception {
    Traffic before = store.meter().read();
    taskCommitCutThenRetried(
        prefix + "-clean/", jobNumbers, "without faults", p -> p.byOrdinal(n -> null));
    List<String> clean = proxy.numbered();
    LOG.info(
        "{}: a clean task commit (v{}) sends {} requests: {}",
        store.name(),
        algorithm,
        clean.size(),
        clean);
    assertThat(clean).as("requests of the task commit").isNotEmpty();
    for (int n = 1; n <= clean.size(); n++) {
      int at = n;
      taskCommitCutThenRetried(
          String.format(Locale.ROOT, "%s-cut-%03d-before/", prefix, n),
          jobNumbers + 2 * n,
          "task commit (v" + algorithm + ") cut at request " + n,
          p -> p.crashAt(at));
      if (!changesTheStore(clean.get(n - 1))) {
        continue;
      }
      taskCommitCutThenRetried(
          String.format(Locale.ROOT, "%s-cut-%03d-after/", prefix, n),
          jobNumbers + 1 + 2 * n,
          "task commit (v" + algorithm + ") cut after request " + n,
          p -> p.crashAfter(at));
    }
    assertThat(store.meter().read().minus(before).requests(S3Api.COPY_OBJECT)).isZero();
  }

  /**
   * Commits task 0, then task 1's first attempt through the proxy under {@code faults}; then the
   * framework's retry of task 1 and the job commit, straight to the store; checks the job's output.
   */
  private void taskCommitCutThenRetried(
      String root, int jobNumber, String what, Consumer<StoreRelay> faults) throws Exception {
    String out = view.uri(root + "out");
    Map<String, String> files = setUpJob(root, jobNumber);
    TaskAttempt committed = writeTask(root, jobNumber, 0, 0, direct(out));
    committed.committer().commitTask(committed.context());
    files.putAll(committed.files());
    TaskAttempt cut = writeTask(root, jobNumber, 1, 0, direct(out));
    closeFileSystems();

    faults.accept(proxy);
    TaskAttemptContext throughProxy =
        new TaskAttemptContextImpl(throughProxy(out), cut.context().getTaskAttemptID());
    try {
      new FileOutputCommitter(new org.apache.hadoop.fs.Path(out), throughProxy)
          .commitTask(throughProxy);
    } catch (IOException e) {
      LOG.info("{}: the task commit failed: {}", what, e.toString());
    }
    closeFileSystems();
    proxy.heal();

    TaskAttempt retry = writeTask(root, jobNumber, 1, 1, direct(out));
    retry.committer().commitTask(retry.context());
    files.putAll(retry.files());
    JobContext job = new JobContextImpl(direct(out), jobId(jobNumber));
    new FileOutputCommitter(new org.apache.hadoop.fs.Path(out), job).commitJob(job);
    closeFileSystems();

    assertCommitted(what, root, files);
    assertThat(
            view.keys(root + "out/").stream()
                .filter(key -> !key.endsWith("/") && !key.endsWith("/_SUCCESS"))
                .toList())
        .as("%s: the job's files, each once, the retried task's from its second attempt", what)
        .containsExactlyInAnyOrderElementsOf(files.keySet());
  }

  /**
   * With Hadoop's file system cache disabled, FileOutputCommitter's job commit merges through one
   * instance and deletes the temporary tree through another: that delete still waits for the
   * completions the first instance queued, slowed here by the proxy, instead of aborting them.
   */
  @Test
  void withTheFileSystemCacheDisabledTheCleanupThroughAnotherInstanceWaitsForQueuedCompletions()
      throws Exception {
    Map<String, String> files = jobWithCommittedTasks("uncached/", 7);
    Configuration conf = throughProxy(view.uri("uncached/out"));
    conf.setBoolean("fs.s3a.impl.disable.cache", true);
    proxy.inject(StoreRelay.Request::isCompleteUpload, StoreRelay.Fault.DELAY_2S, files.size());
    JobContext job = new JobContextImpl(conf, jobId(7));
    new FileOutputCommitter(new org.apache.hadoop.fs.Path(view.uri("uncached/out")), job)
        .commitJob(job);
    proxy.heal();
    assertCommitted("cache disabled", "uncached/", files);
  }
}
