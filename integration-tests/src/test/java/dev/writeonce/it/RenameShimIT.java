package dev.writeonce.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.shim.PendingFileNotReadableException;
import dev.writeonce.shim.RenameShimFileSystem;
import dev.writeonce.shim.ShimConfig;
import dev.writeonce.shim.ShimStatistics;
import dev.writeonce.teststore.BucketView;
import dev.writeonce.teststore.EachStore;
import dev.writeonce.teststore.S3Api;
import dev.writeonce.teststore.StoreRelay;
import dev.writeonce.teststore.TestStore;
import dev.writeonce.teststore.Traffic;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.JobStatus;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.lib.output.FileOutputCommitter;
import org.apache.hadoop.mapreduce.task.JobContextImpl;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hadoop's plain FileOutputCommitter, unmodified, through the rename shim: real LocalJobRunner jobs
 * compared with the same jobs on plain S3A, and the committer protocol driven step by step where
 * the runner cannot fail a task. Every count comes from the store's own meter.
 */
@EachStore
class RenameShimIT {

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(RenameShimIT.class);

  private static final int TASKS = 8;
  private static final int LINES_PER_TASK = 60_000;

  private final TestStore store;

  RenameShimIT(TestStore store) {
    this.store = store;
  }

  private TestStore store() {
    return store;
  }

  @TempDir Path scratch;

  /** One job's outcome: its output, read back, and what the store counted. */
  record Run(String label, Map<String, String> output, long dataBytes, int files, Traffic traffic) {
    double requestsPerFile() {
      return (double) traffic.totalRequests() / files;
    }
  }

  private Configuration configuration(int algorithm, boolean shim) {
    Configuration conf = MapReduceJobs.classicConfiguration(store(), scratch, algorithm, shim);
    // Files of more than one part, so the shim's early record and part streaming are exercised.
    conf.set(CommitterConfig.PART_SIZE, "5M");
    // FileOutputCommitter writes empty objects (_SUCCESS, markers) with or without the shim.
    store().emptyObjectSettings().forEach(conf::set);
    return conf;
  }

  private Path input() throws IOException {
    Path dir = scratch.resolve("input");
    if (Files.isDirectory(dir)) {
      return dir;
    }
    Files.createDirectories(dir);
    String padding = "x".repeat(80);
    for (int task = 0; task < TASKS; task++) {
      StringBuilder text = new StringBuilder();
      for (int line = 0; line < LINES_PER_TASK; line++) {
        text.append("day=")
            .append(1 + (task + line) % 3)
            .append(",task ")
            .append(task)
            .append(" line ")
            .append(line)
            .append(' ')
            .append(padding)
            .append('\n');
      }
      Files.writeString(dir.resolve("input-" + task + ".txt"), text);
    }
    return dir;
  }

  private Run run(String label, int algorithm, boolean shim, boolean partitioned) throws Exception {
    String bucket = store().newBucket("shim-" + label);
    Configuration conf = configuration(algorithm, shim);
    String destination = "s3a://" + bucket + "/out";
    Job job =
        partitioned
            ? MapReduceJobs.partitionedJob(conf, input(), destination)
            : MapReduceJobs.copyJob(conf, input(), destination);
    Traffic before = store().meter().read();
    assertThat(job.waitForCompletion(false)).as("job %s succeeded", label).isTrue();
    Traffic traffic = store().meter().read().minus(before);

    BucketView view = new BucketView(store(), bucket);
    Map<String, String> output = new TreeMap<>();
    long bytes = 0;
    int files = 0;
    for (String key : view.keys("")) {
      String text = view.read(key);
      output.put(key, text);
      if (!key.endsWith("_SUCCESS") && !key.endsWith("/")) {
        bytes += text.getBytes(StandardCharsets.UTF_8).length;
        files++;
      }
    }
    LOG.info("{}: {} files, {} bytes, {}", label, files, bytes, traffic);
    return new Run(label, output, bytes, files, traffic);
  }

  private ShimStatistics shimOf(String uri) throws IOException {
    return ((RenameShimFileSystem) FileSystem.get(java.net.URI.create(uri), configuration(1, true)))
        .shimStatistics();
  }

  /** The invariants of a job through the shim: no COPY, no DeleteObject, data sent once. */
  private void assertWrittenOnce(Run run) {
    assertThat(run.traffic().requests(S3Api.COPY_OBJECT)).as("COPY in %s", run.label()).isZero();
    assertThat(run.traffic().requests(S3Api.DELETE_OBJECT))
        .as("DeleteObject in %s: records go by DeleteObjects, data is never deleted", run.label())
        .isZero();
    assertThat(run.traffic().requests(S3Api.COMPLETE_MULTIPART_UPLOAD))
        .as("one completion per file")
        .isEqualTo(run.files());
    assertThat(run.traffic().bytesReceived())
        .as("bytes the store received in %s, against %d output bytes", run.label(), run.dataBytes())
        .isBetween(run.dataBytes(), (long) (run.dataBytes() * 1.02));
    assertThat(run.output().keySet())
        .as("nothing left under temporary directories")
        .noneMatch(key -> key.contains("_temporary"));
  }

  private void assertNoOpenUploads(String bucket, Iterable<String> keys) {
    List<String> all = new ArrayList<>();
    keys.forEach(all::add);
    assertThat(new BucketView(store(), bucket).openUploads(all)).as("open uploads").isEmpty();
  }

  @Test
  void fileOutputCommitterV1AndV2ThroughTheShimMatchPlainS3aWithoutCopyingData() throws Exception {
    List<Run> runs = new ArrayList<>();
    for (int algorithm : new int[] {1, 2}) {
      Run plain = run("v" + algorithm + "-plain", algorithm, false, false);
      Run shim = run("v" + algorithm + "-shim", algorithm, true, false);

      assertThat(shim.output()).as("output of v%d", algorithm).isEqualTo(plain.output());
      assertThat(shim.files()).isEqualTo(TASKS);
      assertWrittenOnce(shim);
      assertThat(plain.traffic().requests(S3Api.COPY_OBJECT))
          .as("plain S3A renames by COPY")
          .isGreaterThanOrEqualTo(plain.files());
      runs.add(plain);
      runs.add(shim);
    }
    writeComparison(runs);
  }

  @Test
  void aPartitionedJobOfV1ThroughTheShimMergesDirectoriesWithoutCopyingData() throws Exception {
    Run plain = run("part-plain", 1, false, true);
    Run shim = run("part-shim", 1, true, true);

    assertThat(shim.output()).isEqualTo(plain.output());
    assertThat(shim.output().keySet())
        .anyMatch(key -> key.startsWith("out/day=1/"))
        .anyMatch(key -> key.startsWith("out/day=3/"));
    assertThat(shim.files()).isEqualTo(3 * TASKS);
    assertWrittenOnce(shim);
  }

  /** A comparison table in Markdown, for docs/rename-shim.md. */
  private void writeComparison(List<Run> runs) throws IOException {
    StringBuilder table = new StringBuilder();
    table.append(
        String.format(
            Locale.ROOT,
            "Store: %s. %d map tasks, one output file each, %.1f MiB in all; one run.%n%n",
            store().name(),
            TASKS,
            runs.get(0).dataBytes() / 1048576.0));
    table.append(
        "| commit | requests | requests per file | COPY | COPY bytes / data bytes | DeleteObject"
            + " | PUT | multipart (create/part/complete) | GET | HEAD | LIST | bytes received /"
            + " data bytes |\n");
    table.append("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (Run run : runs) {
      Traffic t = run.traffic();
      table.append(
          String.format(
              Locale.ROOT,
              "| %s | %d | %.1f | %d | %.2f | %d | %d | %d/%d/%d | %d | %d | %d | %.3f |%n",
              describe(run.label()),
              t.totalRequests(),
              run.requestsPerFile(),
              t.requests(S3Api.COPY_OBJECT),
              // Every COPY moves one whole output file, and all files have the same size.
              (double) t.requests(S3Api.COPY_OBJECT) / run.files(),
              t.requests(S3Api.DELETE_OBJECT),
              t.requests(S3Api.PUT_OBJECT),
              t.requests(S3Api.CREATE_MULTIPART_UPLOAD),
              t.requests(S3Api.UPLOAD_PART),
              t.requests(S3Api.COMPLETE_MULTIPART_UPLOAD),
              t.requests(S3Api.GET_OBJECT),
              t.requests(S3Api.HEAD_OBJECT),
              t.requests(S3Api.LIST_OBJECTS),
              (double) t.bytesReceived() / run.dataBytes()));
    }
    if (store().name().equals("ceph-rgw")) {
      table.append(
          "\nRGW's usage log counts UploadPart under PUT and HEAD under GET; on RGW 16.2 both runs"
              + " use unsigned payloads (see below).\n");
    }
    Path report =
        Path.of(System.getProperty("writeonce.project.root", ".."))
            .resolve("integration-tests/target/rename-shim-" + store().name() + ".md");
    Files.createDirectories(report.getParent());
    Files.writeString(report, table);
    LOG.info("rename shim comparison, written to {}:\n{}", report, table);
  }

  private static String describe(String label) {
    String[] parts = label.split("-");
    return "FileOutputCommitter " + parts[0] + (parts[1].equals("shim") ? ", shim" : ", plain S3A");
  }

  // ---- the committer protocol step by step --------------------------------------------------

  private static void writeFile(FileSystem fs, org.apache.hadoop.fs.Path path, String text)
      throws IOException {
    try (FSDataOutputStream out = fs.create(path, false)) {
      out.write(text.getBytes(StandardCharsets.UTF_8));
    }
  }

  /** A FileOutputCommitter v1 job through the shim, set up on a new bucket. */
  private record ClassicJob(
      String bucket,
      Configuration conf,
      org.apache.hadoop.fs.Path out,
      JobContext job,
      FileOutputCommitter committer) {}

  private ClassicJob setUpClassicJob(String bucketName, int jobNumber) throws IOException {
    String bucket = store().newBucket(bucketName);
    Configuration conf = configuration(1, true);
    org.apache.hadoop.fs.Path out = new org.apache.hadoop.fs.Path("s3a://" + bucket + "/out");
    conf.set("mapreduce.output.fileoutputformat.outputdir", out.toString());
    JobContext job = new JobContextImpl(conf, new JobID("2026112222", jobNumber));
    FileOutputCommitter committer = new FileOutputCommitter(out, job);
    committer.setupJob(job);
    return new ClassicJob(bucket, conf, out, job, committer);
  }

  private TaskAttemptContext attempt(Configuration conf, int task, int attempt) {
    return new TaskAttemptContextImpl(
        conf, new TaskAttemptID("2026112222", 7, TaskType.MAP, task, attempt));
  }

  private static org.apache.hadoop.fs.Path write(
      FileOutputCommitter committer, TaskAttemptContext context, String text) throws IOException {
    org.apache.hadoop.fs.Path file =
        new org.apache.hadoop.fs.Path(
            committer.getWorkPath(),
            String.format(
                Locale.ROOT, "part-m-%05d", context.getTaskAttemptID().getTaskID().getId()));
    FileSystem fs = file.getFileSystem(context.getConfiguration());
    try (FSDataOutputStream out = fs.create(file, false)) {
      out.write(text.getBytes(StandardCharsets.UTF_8));
    }
    return file;
  }

  @Test
  void aFailedAttemptIsAbortedAndItsRetryLeavesExactlyOneFile() throws Exception {
    ClassicJob classic = setUpClassicJob("shim-retry", 7);
    String bucket = classic.bucket();
    Configuration conf = classic.conf();
    org.apache.hadoop.fs.Path out = classic.out();
    JobContext job = classic.job();
    FileOutputCommitter jobCommitter = classic.committer();

    TaskAttemptContext first = attempt(conf, 0, 0);
    FileOutputCommitter firstCommitter = new FileOutputCommitter(out, first);
    firstCommitter.setupTask(first);
    org.apache.hadoop.fs.Path firstFile = write(firstCommitter, first, "first attempt\n");
    FileSystem fs = firstFile.getFileSystem(conf);
    assertThat(fs.getFileStatus(firstFile).getLen())
        .as("a pending file's real length")
        .isEqualTo(14);
    firstCommitter.abortTask(first);

    TaskAttemptContext second = attempt(conf, 0, 1);
    FileOutputCommitter secondCommitter = new FileOutputCommitter(out, second);
    secondCommitter.setupTask(second);
    write(secondCommitter, second, "second attempt\n");
    assertThat(secondCommitter.needsTaskCommit(second)).isTrue();
    secondCommitter.commitTask(second);
    jobCommitter.commitJob(job);

    BucketView view = new BucketView(store(), bucket);
    assertThat(view.keys("")).containsExactly("out/_SUCCESS", "out/part-m-00000");
    assertThat(view.read("out/part-m-00000")).isEqualTo("second attempt\n");
    assertNoOpenUploads(bucket, List.of("out/part-m-00000"));
    assertThat(shimOf(out.toString()).uploadsAborted()).isGreaterThanOrEqualTo(1);
  }

  @Test
  void anAbortedJobLeavesNothingVisibleAndNoOpenUpload() throws Exception {
    ClassicJob classic = setUpClassicJob("shim-abort", 8);
    String bucket = classic.bucket();
    Configuration conf = classic.conf();
    org.apache.hadoop.fs.Path out = classic.out();
    JobContext job = classic.job();
    FileOutputCommitter jobCommitter = classic.committer();
    List<String> finalKeys = new ArrayList<>();
    for (int task = 0; task < 3; task++) {
      TaskAttemptContext context = attempt(conf, task, 0);
      FileOutputCommitter committer = new FileOutputCommitter(out, context);
      committer.setupTask(context);
      write(committer, context, "task " + task + "\n");
      committer.commitTask(context);
      finalKeys.add(String.format(Locale.ROOT, "out/part-m-%05d", task));
    }
    // A fourth attempt still uncommitted when the job fails.
    TaskAttemptContext running = attempt(conf, 3, 0);
    FileOutputCommitter runningCommitter = new FileOutputCommitter(out, running);
    runningCommitter.setupTask(running);
    write(runningCommitter, running, "task 3\n");
    finalKeys.add("out/part-m-00003");

    jobCommitter.abortJob(job, JobStatus.State.FAILED);

    BucketView view = new BucketView(store(), bucket);
    assertThat(view.keys("")).as("objects after abort").isEmpty();
    assertNoOpenUploads(bucket, finalKeys);
  }

  // ---- Hadoop's builder API -------------------------------------------------------------------

  @Test
  void aFileCreatedThroughTheBuilderIsAPendingUploadThatTheRenameCompletesWithoutCopy()
      throws Exception {
    String bucket = store().newBucket("shim-builder");
    Configuration conf = configuration(1, true);
    String base = "s3a://" + bucket + "/out";
    String temporaryKey = "out/_temporary/0/_temporary/attempt_2026112222_0013_m_000000_0/part-0";
    org.apache.hadoop.fs.Path pending =
        new org.apache.hadoop.fs.Path("s3a://" + bucket + "/" + temporaryKey);
    FileSystem fs = pending.getFileSystem(conf);
    byte[] data = new byte[(6 << 20) + 11];
    Arrays.fill(data, (byte) 'w');

    try (FSDataOutputStream out = fs.createFile(pending).overwrite(true).recursive().build()) {
      out.write(data);
    }

    BucketView view = new BucketView(store(), bucket);
    assertThat(view.keys(""))
        .as("only the record, at the temporary path")
        .containsExactly(temporaryKey);
    assertThat(view.read(temporaryKey))
        .as("a record, not the data")
        .contains("writeonce.pending-file");
    assertThat(view.openUploads(List.of("out/part-0"))).as("the pending upload").hasSize(1);
    assertThat(fs.getFileStatus(pending).getLen()).isEqualTo(data.length);

    Traffic before = store().meter().read();
    assertThat(fs.rename(pending, new org.apache.hadoop.fs.Path(base + "/part-0"))).isTrue();
    Traffic rename = store().meter().read().minus(before);

    assertThat(view.keys("")).containsExactly("out/part-0");
    assertThat(view.size("out/part-0")).isEqualTo(data.length);
    assertThat(rename.requests(S3Api.COPY_OBJECT)).as("COPY in the rename").isZero();
    assertThat(rename.requests(S3Api.COMPLETE_MULTIPART_UPLOAD)).isEqualTo(1);
    assertNoOpenUploads(bucket, List.of("out/part-0"));
  }

  /**
   * A long-lived shim instance trusts the records it wrote. When another process (purge) has
   * aborted the upload and removed the record meanwhile, the rename fails, naming the file, and
   * publishes nothing: a record remembered wrongly never publishes other data.
   */
  @Test
  void aRenameWhoseRecordWasPurgedMeanwhileFailsNamingTheFileAndPublishesNothing()
      throws Exception {
    String bucket = store().newBucket("shim-purged");
    Configuration conf = configuration(1, true);
    String temporaryKey = "out/_temporary/0/_temporary/attempt_2026112523_0014_m_000000_0/part-0";
    org.apache.hadoop.fs.Path pending =
        new org.apache.hadoop.fs.Path("s3a://" + bucket + "/" + temporaryKey);
    FileSystem fs = pending.getFileSystem(conf);
    try (FSDataOutputStream out = fs.create(pending, true)) {
      out.write("row\n".getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }
    BucketView view = new BucketView(store(), bucket);
    String uploadId =
        store()
            .adminClient()
            .listMultipartUploads(b -> b.bucket(bucket).prefix("out/part-0"))
            .uploads()
            .get(0)
            .uploadId();
    store()
        .adminClient()
        .abortMultipartUpload(b -> b.bucket(bucket).key("out/part-0").uploadId(uploadId));
    store().adminClient().deleteObject(b -> b.bucket(bucket).key(temporaryKey));

    org.apache.hadoop.fs.Path target =
        new org.apache.hadoop.fs.Path("s3a://" + bucket + "/out/part-0");
    assertThatThrownBy(() -> fs.rename(pending, target)).hasMessageContaining("part-0");

    assertThat(view.keys("")).doesNotContain("out/part-0");
    assertNoOpenUploads(bucket, List.of("out/part-0"));
  }

  // ---- the destination check of a rename --------------------------------------------------------

  @Test
  void aRenameIntoADestinationFoundAbsentJustBeforeDoesNotCheckItAgain() throws Exception {
    String bucket = store().newBucket("shim-absent");
    Configuration conf = configuration(1, true);
    String base = "s3a://" + bucket + "/out";
    org.apache.hadoop.fs.Path pending = writePending(conf, base, "merged\n");
    org.apache.hadoop.fs.Path target = new org.apache.hadoop.fs.Path(base + "/part-m-00000");
    FileSystem fs = pending.getFileSystem(conf);
    long skippedBefore = shimOf(base).destinationChecksSkipped();

    // FileOutputCommitter's merge: getFileStatus of the destination, then the rename.
    assertThat(catchThrowable(() -> fs.getFileStatus(target)))
        .isInstanceOf(java.io.FileNotFoundException.class);
    Traffic before = store().meter().read();
    assertThat(fs.rename(pending, target)).isTrue();
    Traffic rename = store().meter().read().minus(before);

    assertThat(rename.requests(S3Api.LIST_OBJECTS) + rename.requests(S3Api.HEAD_OBJECT))
        .as("checks of the destination in the rename: %s", rename)
        .isZero();
    assertThat(rename.requests(S3Api.COMPLETE_MULTIPART_UPLOAD)).isEqualTo(1);
    assertThat(shimOf(base).destinationChecksSkipped()).isEqualTo(skippedBefore + 1);
    BucketView view = new BucketView(store(), bucket);
    assertThat(view.read("out/part-m-00000")).isEqualTo("merged\n");
    assertNoOpenUploads(bucket, List.of("out/part-m-00000"));
  }

  @Test
  void aDestinationWrittenAfterItWasFoundAbsentStillRefusesTheRename() throws Exception {
    String bucket = store().newBucket("shim-absent-then-written");
    Configuration conf = configuration(1, true);
    String base = "s3a://" + bucket + "/out";
    org.apache.hadoop.fs.Path pending = writePending(conf, base, "pending\n");
    org.apache.hadoop.fs.Path target = new org.apache.hadoop.fs.Path(base + "/part-m-00000");
    FileSystem fs = pending.getFileSystem(conf);
    BucketView view = new BucketView(store(), bucket);

    // Found absent, then written by the same thread: the rename checks again and refuses.
    assertThat(fs.exists(target)).isFalse();
    try (FSDataOutputStream out = fs.create(target, false)) {
      out.write("written since\n".getBytes(StandardCharsets.UTF_8));
    }
    assertThat(fs.rename(pending, target)).isFalse();
    assertThat(view.read("out/part-m-00000")).isEqualTo("written since\n");

    assertThat(fs.delete(new org.apache.hadoop.fs.Path(base + "/_temporary"), true)).isTrue();
    assertThat(view.keys("")).containsExactly("out/part-m-00000");
    assertNoOpenUploads(bucket, List.of("out/part-m-00000"));
  }

  /**
   * Without the listing window, an absence another thread found is not remembered: a file another
   * writer created since is found by the rename's check, which refuses. (Within the window, an
   * absence the store reported to any thread of the JVM answers for the window, as a listing does:
   * the documented bound of another writer.)
   */
  @Test
  void withoutTheListingWindowAnAbsenceFoundByAnotherThreadIsCheckedAgain() throws Exception {
    String bucket = store().newBucket("shim-absent-elsewhere");
    Configuration conf = configuration(1, true);
    conf.set(ShimConfig.LISTING_WINDOW, "0s");
    String base = "s3a://" + bucket + "/out";
    org.apache.hadoop.fs.Path pending = writePending(conf, base, "pending\n");
    FileSystem fs = pending.getFileSystem(conf);
    BucketView view = new BucketView(store(), bucket);

    org.apache.hadoop.fs.Path elsewhere = new org.apache.hadoop.fs.Path(base + "/part-m-00001");
    Thread other = new Thread(() -> catchThrowable(() -> fs.getFileStatus(elsewhere)));
    other.start();
    other.join();
    view.put("out/part-m-00001", "another writer\n");
    assertThat(fs.rename(pending, elsewhere)).isFalse();
    assertThat(view.read("out/part-m-00001")).isEqualTo("another writer\n");

    assertThat(fs.delete(new org.apache.hadoop.fs.Path(base + "/_temporary"), true)).isTrue();
    assertThat(view.keys("")).containsExactly("out/part-m-00001");
    assertNoOpenUploads(bucket, List.of("out/part-m-00000"));
  }

  // ---- existence checks answered from one listing ----------------------------------------------

  /**
   * FileOutputCommitter's job commit lists the committed task's directory and checks each file's
   * destination before renaming it there: one LIST of the destination directory answers those
   * checks, instead of a HEAD and a LIST per file.
   */
  @Test
  void aJobCommitChecksTheDestinationsOfATasksFilesFromOneListing() throws Exception {
    int files = 20;
    ClassicJob classic = setUpClassicJob("shim-listing", 7);
    String bucket = classic.bucket();
    Configuration conf = classic.conf();
    org.apache.hadoop.fs.Path out = classic.out();
    JobContext job = classic.job();
    FileOutputCommitter jobCommitter = classic.committer();
    TaskAttemptContext task = attempt(conf, 0, 0);
    FileOutputCommitter committer = new FileOutputCommitter(out, task);
    committer.setupTask(task);
    FileSystem fs = out.getFileSystem(conf);
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < files; i++) {
      String name = String.format(Locale.ROOT, "part-m-%05d", i);
      writeFile(
          fs, new org.apache.hadoop.fs.Path(committer.getWorkPath(), name), "file " + i + "\n");
      keys.add("out/" + name);
    }
    committer.commitTask(task);
    long answeredBefore = shimOf(out.toString()).destinationChecksFromListing();

    Traffic before = store().meter().read();
    jobCommitter.commitJob(job);
    Traffic commit = store().meter().read().minus(before);

    assertThat(shimOf(out.toString()).destinationChecksFromListing() - answeredBefore)
        .as("destination checks answered by the listing")
        .isEqualTo(files);
    assertThat(commit.requests(S3Api.HEAD_OBJECT) + commit.requests(S3Api.LIST_OBJECTS))
        .as("checks per job, not per file: %s", commit)
        .isLessThan(files / 2);
    assertThat(commit.requests(S3Api.COMPLETE_MULTIPART_UPLOAD)).isEqualTo(files);
    assertThat(commit.requests(S3Api.COPY_OBJECT)).isZero();
    BucketView view = new BucketView(store(), bucket);
    for (int i = 0; i < files; i++) {
      assertThat(view.read(keys.get(i))).isEqualTo("file " + i + "\n");
    }
    assertNoOpenUploads(bucket, keys);
  }

  // ---- queued completions ----------------------------------------------------------------

  /** Commits one task of a classic job with {@code files} files; returns their final keys. */
  private List<String> commitTaskOf(ClassicJob classic, int task, int files, String prefix)
      throws IOException {
    TaskAttemptContext context = attempt(classic.conf(), task, 0);
    FileOutputCommitter committer = new FileOutputCommitter(classic.out(), context);
    committer.setupTask(context);
    FileSystem fs = classic.out().getFileSystem(context.getConfiguration());
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < files; i++) {
      String name = String.format(Locale.ROOT, "%spart-m-%05d-%03d", prefix, task, i);
      writeFile(fs, new org.apache.hadoop.fs.Path(committer.getWorkPath(), name), name + "\n");
      keys.add("out/" + name);
    }
    committer.commitTask(context);
    return keys;
  }

  /** Commits tasks 0 and 1 with {@code files} files each, the second's under {@code prefix}. */
  private List<String> commitTwoTasksOf(ClassicJob classic, int files, String prefix)
      throws IOException {
    List<String> keys = new ArrayList<>(commitTaskOf(classic, 0, files, ""));
    keys.addAll(commitTaskOf(classic, 1, files, prefix));
    return keys;
  }

  @Test
  void aJobCommitQueuesItsCompletionsAndReturnsWithEveryFileInPlaceAndTheRecordsDeletedInBulk()
      throws Exception {
    ClassicJob classic = setUpClassicJob("shim-queued", 11);
    List<String> keys = commitTwoTasksOf(classic, 20, "p=1/");
    ShimStatistics shim = shimOf(classic.out().toString());
    long queuedBefore = shim.completionsQueued();

    Traffic before = store().meter().read();
    classic.committer().commitJob(classic.job());
    Traffic commit = store().meter().read().minus(before);

    // The files of both tasks, the partition directory of the second moved whole.
    assertThat(shim.completionsQueued() - queuedBefore).isEqualTo(keys.size());
    assertThat(commit.requests(S3Api.COMPLETE_MULTIPART_UPLOAD)).isEqualTo(keys.size());
    // One DeleteObjects for the records of the queued files, and the cleanup's; not one per file.
    assertThat(commit.requests(S3Api.DELETE_OBJECTS)).as("%s", commit).isLessThanOrEqualTo(4);
    assertThat(commit.requests(S3Api.COPY_OBJECT)).isZero();
    BucketView view = new BucketView(store(), classic.bucket());
    for (String key : keys) {
      assertThat(view.read(key)).isEqualTo(key.substring("out/".length()) + "\n");
    }
    assertThat(view.keys("out/_temporary")).isEmpty();
    assertThat(view.keys("out/_SUCCESS")).hasSize(1);
    assertNoOpenUploads(classic.bucket(), keys);
  }

  /**
   * The first of two files a committed task left, renamed into place by a fresh instance after it
   * listed the job attempt's directory, as FileOutputCommitter's job commit does: its completion
   * queued (the rename of the round's last file would wait for it).
   */
  private record Queued(
      FileSystem fs, ShimStatistics shim, org.apache.hadoop.fs.Path destination, String record) {}

  private Queued queuedRename(String bucketName) throws IOException {
    ClassicJob classic = setUpClassicJob(bucketName, 12);
    String key = commitTaskOf(classic, 0, 2, "").get(0);
    String name = key.substring("out/".length());
    FileSystem fs = FileSystem.newInstance(classic.out().toUri(), classic.conf());
    ShimStatistics shim = ((RenameShimFileSystem) fs).shimStatistics();
    String task = "_temporary/0/task_2026112222_0007_m_000000/";
    fs.listStatus(new org.apache.hadoop.fs.Path(classic.out(), "_temporary/0"));
    org.apache.hadoop.fs.Path committed = new org.apache.hadoop.fs.Path(classic.out(), task + name);
    org.apache.hadoop.fs.Path destination = new org.apache.hadoop.fs.Path(classic.out(), name);
    assertThat(fs.rename(committed, destination)).isTrue();
    assertThat(shim.completionsQueued()).isEqualTo(1);
    return new Queued(fs, shim, destination, "out/" + task + name);
  }

  /**
   * Every call that could observe a queued completion waits for it: right after the call the file
   * is in the store and its record is gone. Checks of other destinations do not wait.
   */
  @Test
  void eachCallThatCouldObserveAQueuedCompletionWaitsForItAndOthersDoNot() throws Exception {
    Map<String, IoCall> calls = new java.util.LinkedHashMap<>();
    calls.put("getFileStatus of the file", (fs, dst) -> fs.getFileStatus(dst));
    calls.put("exists of the file", (fs, dst) -> fs.exists(dst));
    calls.put("open of the file", (fs, dst) -> fs.open(dst).close());
    calls.put("listStatus of its directory", (fs, dst) -> fs.listStatus(dst.getParent()));
    calls.put("listFiles of its directory", (fs, dst) -> fs.listFiles(dst.getParent(), true));
    calls.put(
        "create of _SUCCESS",
        (fs, dst) -> fs.create(new org.apache.hadoop.fs.Path(dst.getParent(), "_SUCCESS")).close());
    calls.put(
        "delete of the temporary tree",
        (fs, dst) -> fs.delete(new org.apache.hadoop.fs.Path(dst.getParent(), "_temporary"), true));
    calls.put(
        "rename of the temporary tree",
        (fs, dst) ->
            fs.rename(
                new org.apache.hadoop.fs.Path(dst.getParent(), "_temporary/0"),
                new org.apache.hadoop.fs.Path(dst.getParent(), "_temporary/1")));
    calls.put("close", (fs, dst) -> fs.close());
    int n = 0;
    for (Map.Entry<String, IoCall> call : calls.entrySet()) {
      Queued queued = queuedRename("shim-barrier-" + n++);
      String bucket = queued.destination().toUri().getHost();
      String key = "out/" + queued.destination().getName();
      FileSystem fs = queued.fs();
      try {
        // The next file's existence check and a status of the directory above wait for nothing.
        assertThat(fs.exists(new org.apache.hadoop.fs.Path(queued.destination() + "-next")))
            .isFalse();
        assertThat(fs.getFileStatus(queued.destination().getParent()).isDirectory()).isTrue();
        assertThat(queued.shim().barriers()).as(call.getKey()).isZero();

        call.getValue().run(fs, queued.destination());

        assertThat(queued.shim().barriers()).as(call.getKey()).isEqualTo(1);
        BucketView view = new BucketView(store(), bucket);
        assertThat(view.keys(key)).as(call.getKey()).containsExactly(key);
        assertThat(view.keys(queued.record())).as("the record of %s", call.getKey()).isEmpty();
      } finally {
        fs.close();
      }
    }
  }

  @FunctionalInterface
  private interface IoCall {
    void run(FileSystem fs, org.apache.hadoop.fs.Path destination) throws Exception;
  }

  /**
   * A completion that fails after its rename returned fails the job commit, naming the file; the
   * files completed meanwhile are in place, and the job's abort leaves no upload open.
   */
  @Test
  void aQueuedCompletionThatFailsMakesTheJobCommitFailAndTheAbortLeavesNoOpenUpload()
      throws Exception {
    ClassicJob classic = setUpClassicJob("shim-queued-failure", 13);
    List<String> keys = commitTwoTasksOf(classic, 3, "");
    // Another tool aborts one upload between the task commit and the job commit.
    String lost = keys.get(4);
    String uploadId =
        store()
            .adminClient()
            .listMultipartUploads(b -> b.bucket(classic.bucket()).prefix(lost))
            .uploads()
            .get(0)
            .uploadId();
    store()
        .adminClient()
        .abortMultipartUpload(b -> b.bucket(classic.bucket()).key(lost).uploadId(uploadId));

    assertThatThrownBy(() -> classic.committer().commitJob(classic.job()))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("s3a://" + classic.bucket() + "/" + lost)
        .hasMessageContaining("failed after its rename had returned");
    BucketView view = new BucketView(store(), classic.bucket());
    assertThat(view.keys("out/_SUCCESS")).isEmpty();
    for (String key : keys) {
      if (!key.equals(lost)) {
        assertThat(view.read(key)).as("completed before the failure was seen").isNotEmpty();
      }
    }
    assertThat(view.keys(lost)).isEmpty();

    classic.committer().abortJob(classic.job(), org.apache.hadoop.mapreduce.JobStatus.State.FAILED);
    assertThat(view.keys("out/_temporary")).isEmpty();
    assertNoOpenUploads(classic.bucket(), keys);
    // The next job on the same destination commits: the failure ended with the tree.
    ClassicJob next =
        new ClassicJob(
            classic.bucket(), classic.conf(), classic.out(), classic.job(), classic.committer());
    next.committer().setupJob(next.job());
    List<String> again = commitTaskOf(next, 2, 2, "again-");
    next.committer().commitJob(next.job());
    for (String key : again) {
      assertThat(view.read(key)).isNotEmpty();
    }
  }

  /** Task attempts committing at once through one instance, then one job commit of them all. */
  @Test
  void concurrentTaskCommitsThenOneJobCommitLeaveEveryFileOnceAndNoUploadOpen() throws Exception {
    ClassicJob classic = setUpClassicJob("shim-concurrent", 14);
    int tasks = 8;
    java.util.concurrent.ExecutorService pool =
        java.util.concurrent.Executors.newFixedThreadPool(tasks);
    List<java.util.concurrent.Future<List<String>>> commits = new ArrayList<>();
    try {
      for (int t = 0; t < tasks; t++) {
        int task = t;
        commits.add(pool.submit(() -> commitTaskOf(classic, task, 3, "p=" + (task % 2) + "/")));
      }
      List<String> keys = new ArrayList<>();
      for (java.util.concurrent.Future<List<String>> commit : commits) {
        keys.addAll(commit.get());
      }
      Traffic before = store().meter().read();
      classic.committer().commitJob(classic.job());
      Traffic commit = store().meter().read().minus(before);

      assertThat(commit.requests(S3Api.COMPLETE_MULTIPART_UPLOAD)).isEqualTo(keys.size());
      assertThat(commit.requests(S3Api.COPY_OBJECT)).isZero();
      BucketView view = new BucketView(store(), classic.bucket());
      List<String> dataKeys =
          view.keys("out/p=").stream().filter(key -> !key.endsWith("/")).toList();
      assertThat(dataKeys).containsExactlyInAnyOrderElementsOf(keys);
      assertThat(view.keys("out/_temporary")).isEmpty();
      assertNoOpenUploads(classic.bucket(), keys);
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * A partitioned job commit: the partition directories an earlier task's merge created are known
   * from the listing of the output directory, so the later tasks' merges into them check no
   * directory in the store.
   */
  @Test
  void aPartitionedJobCommitKnowsThePartitionDirectoriesFromTheListing() throws Exception {
    ClassicJob classic = setUpClassicJob("shim-listing-partitions", 9);
    FileSystem fs = classic.out().getFileSystem(classic.conf());
    List<String> keys = new ArrayList<>();
    for (int task = 0; task < 3; task++) {
      TaskAttemptContext context = attempt(classic.conf(), task, 0);
      FileOutputCommitter committer = new FileOutputCommitter(classic.out(), context);
      committer.setupTask(context);
      for (String partition : List.of("p=1", "p=2")) {
        String name = partition + String.format(Locale.ROOT, "/part-m-%05d", task);
        writeFile(fs, new org.apache.hadoop.fs.Path(committer.getWorkPath(), name), name + "\n");
        keys.add("out/" + name);
      }
      committer.commitTask(context);
    }
    ShimStatistics shim = shimOf(classic.out().toString());
    long directoriesBefore = shim.destinationDirectoriesFromListing() + shim.directoriesOfQueued();

    Traffic before = store().meter().read();
    classic.committer().commitJob(classic.job());
    Traffic commit = store().meter().read().minus(before);

    // The first task's partitions move whole, their completions queued; the two others merge into
    // both, and each finds the output directory and both partitions above queued files, or from
    // what the shim knows: at least 3 directories each, with no request.
    assertThat(
            shim.destinationDirectoriesFromListing()
                + shim.directoriesOfQueued()
                - directoriesBefore)
        .isGreaterThanOrEqualTo(6);
    // HEADs: the output directory's check once per task's merge, and FileOutputCommitter's own
    // (cleanup, _SUCCESS); none for the partition directories (4 more without the listing).
    assertThat(commit.requests(S3Api.HEAD_OBJECT)).as("%s", commit).isLessThanOrEqualTo(3 + 4);
    assertThat(commit.requests(S3Api.COMPLETE_MULTIPART_UPLOAD)).isEqualTo(keys.size());
    assertThat(commit.requests(S3Api.COPY_OBJECT)).isZero();
    BucketView view = new BucketView(store(), classic.bucket());
    for (String key : keys) {
      assertThat(view.read(key)).isEqualTo(key.substring("out/".length()) + "\n");
    }
    assertNoOpenUploads(classic.bucket(), keys);
  }

  /**
   * The bound of the listing: a file another writer creates in the destination directory after the
   * listing, within {@code writeonce.shim.listing-window}, is reported absent and overwritten by
   * the rename onto its name; without the listing, the check finds it and the rename is refused.
   */
  @Test
  void aFileAnotherWriterCreatesWithinTheListingWindowIsOverwrittenAndWithoutItRefused()
      throws Exception {
    String bucket = store().newBucket("shim-listing-window");
    String base = "s3a://" + bucket + "/out";
    BucketView view = new BucketView(store(), bucket);
    org.apache.hadoop.fs.Path target = new org.apache.hadoop.fs.Path(base + "/part-m-00000");
    for (String window : List.of("1h", "0s")) {
      Configuration conf = configuration(1, true);
      conf.set(ShimConfig.LISTING_WINDOW, window);
      org.apache.hadoop.fs.Path taskDir =
          new org.apache.hadoop.fs.Path(base + "/_temporary/0/task_2026112222_0022_m_000000");
      try (FileSystem fs = FileSystem.newInstance(java.net.URI.create(base), conf)) {
        writeFile(fs, new org.apache.hadoop.fs.Path(taskDir, "part-m-00000"), "ours\n");
        assertThat(fs.listStatus(taskDir)).hasSize(1);
        view.put("out/part-m-00000", "another writer\n");

        if (window.equals("1h")) {
          assertThat(fs.exists(target)).as("answered by the listing, within the window").isFalse();
          assertThat(fs.rename(new org.apache.hadoop.fs.Path(taskDir, "part-m-00000"), target))
              .isTrue();
          assertThat(fs.exists(target)).as("its own rename is never reported absent").isTrue();
          assertThat(view.read("out/part-m-00000")).isEqualTo("ours\n");
          view.delete("out/part-m-00000");
        } else {
          assertThat(fs.exists(target)).as("checked in the store").isTrue();
          assertThat(fs.rename(new org.apache.hadoop.fs.Path(taskDir, "part-m-00000"), target))
              .isFalse();
          assertThat(view.read("out/part-m-00000")).isEqualTo("another writer\n");
          assertThat(fs.delete(new org.apache.hadoop.fs.Path(base + "/_temporary"), true)).isTrue();
        }
      }
    }
    assertNoOpenUploads(bucket, List.of("out/part-m-00000"));
  }

  /**
   * What this instance itself writes into a listed destination directory after the listing, by a
   * rename of a file or a directory, a create or a mkdirs, is never reported absent.
   */
  @Test
  void whatTheShimItselfWritesAfterAListingIsNeverReportedAbsent() throws Exception {
    String bucket = store().newBucket("shim-listing-own");
    String base = "s3a://" + bucket + "/out";
    Configuration conf = configuration(1, true);
    conf.set(ShimConfig.LISTING_WINDOW, "1h");
    org.apache.hadoop.fs.Path taskDir =
        new org.apache.hadoop.fs.Path(base + "/_temporary/0/task_2026112222_0023_m_000000");
    try (FileSystem fs = FileSystem.newInstance(java.net.URI.create(base), conf)) {
      for (String name : List.of("part-m-00000", "p=1/part-m-00001")) {
        writeFile(fs, new org.apache.hadoop.fs.Path(taskDir, name), name + "\n");
      }
      assertThat(fs.listStatus(taskDir)).hasSize(2);

      org.apache.hadoop.fs.Path file = new org.apache.hadoop.fs.Path(base + "/part-m-00000");
      assertThat(fs.exists(file)).isFalse();
      assertThat(fs.rename(new org.apache.hadoop.fs.Path(taskDir, "part-m-00000"), file)).isTrue();
      assertThat(fs.exists(file)).as("a file renamed into place").isTrue();

      org.apache.hadoop.fs.Path partition = new org.apache.hadoop.fs.Path(base + "/p=1");
      assertThat(fs.exists(partition)).isFalse();
      assertThat(fs.rename(new org.apache.hadoop.fs.Path(taskDir, "p=1"), partition)).isTrue();
      assertThat(fs.exists(partition)).as("a directory renamed into place").isTrue();
      assertThat(
              fs.getFileStatus(new org.apache.hadoop.fs.Path(partition, "part-m-00001")).getLen())
          .isEqualTo("p=1/part-m-00001\n".length());

      org.apache.hadoop.fs.Path success = new org.apache.hadoop.fs.Path(base + "/_SUCCESS");
      assertThat(fs.exists(success)).isFalse();
      fs.create(success, true).close();
      assertThat(fs.exists(success)).as("a file created").isTrue();

      org.apache.hadoop.fs.Path made = new org.apache.hadoop.fs.Path(base + "/made/deeper");
      assertThat(fs.exists(new org.apache.hadoop.fs.Path(base + "/made"))).isFalse();
      assertThat(fs.mkdirs(made)).isTrue();
      assertThat(fs.exists(new org.apache.hadoop.fs.Path(base + "/made"))).as("mkdirs").isTrue();
    }
    assertNoOpenUploads(bucket, List.of("out/part-m-00000", "out/p=1/part-m-00001"));
  }

  // ---- a rename the rules did not predict -----------------------------------------------------

  @Test
  void aRenameToAnUnpredictedNameIsCompletedCopiedAndCountedAsAMiss() throws Exception {
    String bucket = store().newBucket("shim-miss");
    Configuration conf = configuration(1, true);
    String base = "s3a://" + bucket + "/out";
    org.apache.hadoop.fs.Path pending =
        new org.apache.hadoop.fs.Path(
            base + "/_temporary/0/_temporary/attempt_2026112222_0009_m_000000_0/part-m-00000");
    FileSystem fs = pending.getFileSystem(conf);
    long missesBefore = shimOf(base).misses();
    try (FSDataOutputStream out = fs.create(pending, false)) {
      out.write("mispredicted\n".getBytes(StandardCharsets.UTF_8));
    }
    assertThatThrownBy(() -> fs.open(pending).close())
        .isInstanceOf(PendingFileNotReadableException.class)
        .hasMessageContaining(pending.toString())
        .hasMessageContaining("hive.merge.mapfiles=false");

    Traffic before = store().meter().read();
    assertThat(fs.rename(pending, new org.apache.hadoop.fs.Path(base + "/renamed-00000"))).isTrue();
    Traffic rename = store().meter().read().minus(before);

    BucketView view = new BucketView(store(), bucket);
    assertThat(view.keys("")).containsExactly("out/renamed-00000");
    assertThat(view.read("out/renamed-00000")).isEqualTo("mispredicted\n");
    assertThat(rename.requests(S3Api.COPY_OBJECT)).as("a miss costs one COPY").isEqualTo(1);
    assertThat(rename.requests(S3Api.COMPLETE_MULTIPART_UPLOAD)).isEqualTo(1);
    assertThat(shimOf(base).misses()).isEqualTo(missesBefore + 1);
    assertNoOpenUploads(bucket, List.of("out/part-m-00000"));
  }

  /** A pending file under a task attempt, written through the shim of this configuration. */
  private org.apache.hadoop.fs.Path writePending(Configuration conf, String base, String text)
      throws IOException {
    org.apache.hadoop.fs.Path pending =
        new org.apache.hadoop.fs.Path(
            base + "/_temporary/0/_temporary/attempt_2026112222_0014_m_000000_0/part-m-00000");
    try (FSDataOutputStream out = pending.getFileSystem(conf).create(pending, false)) {
      out.write(text.getBytes(StandardCharsets.UTF_8));
    }
    return pending;
  }

  @Test
  void aMissWhoseCopyFailsLeavesNothingAtThePredictedKeyNorTheTargetAndNoOpenUpload()
      throws Exception {
    String bucket = store().newBucket("shim-miss-copy-fails");
    String base = "s3a://" + bucket + "/out";
    try (StoreRelay proxy = StoreRelay.start(store().endpoint())) {
      Configuration conf = configuration(1, true);
      conf.set("fs.s3a.endpoint", proxy.endpoint().toString());
      conf.set("fs.s3a.impl.disable.cache", "true");
      // One try per request, so that the injected failure reaches the rename.
      conf.setInt("fs.s3a.retry.limit", 0);
      conf.setInt("fs.s3a.attempts.maximum", 0);
      org.apache.hadoop.fs.Path pending = writePending(conf, base, "copy fails\n");
      FileSystem fs = pending.getFileSystem(conf);
      try {
        proxy.inject(
            request -> request.headers().containsKey("x-amz-copy-source"),
            StoreRelay.Fault.STATUS_500,
            100);

        Throwable failure =
            catchThrowable(
                () -> fs.rename(pending, new org.apache.hadoop.fs.Path(base + "/renamed-00000")));
        assertThat(proxy.injected()).as("COPY requests refused").isPositive();

        BucketView view = new BucketView(store(), bucket);
        assertThat(view.keys(""))
            .as("nothing at the predicted key or the target; no miss record")
            .allMatch(key -> key.startsWith("out/_temporary/0/"));
        assertThat(failure)
            .isInstanceOf(IOException.class)
            .hasMessageContaining(pending.toString())
            .hasMessageContaining(base + "/renamed-00000")
            .hasMessageContaining(base + "/part-m-00000");
        proxy.heal();
        assertThat(fs.delete(new org.apache.hadoop.fs.Path(base + "/_temporary"), true)).isTrue();
        assertThat(view.keys("")).isEmpty();
        assertNoOpenUploads(bucket, List.of("out/part-m-00000"));
      } finally {
        fs.close();
      }
    }
  }

  @Test
  void withOnMissFailAMissIsRefusedNothingIsVisibleAndDeletingTheTemporaryDirectoryAbortsIt()
      throws Exception {
    String bucket = store().newBucket("shim-miss-refused");
    String base = "s3a://" + bucket + "/out";
    Configuration conf = configuration(1, true);
    conf.set(ShimConfig.ON_MISS, "fail");
    org.apache.hadoop.fs.Path pending = writePending(conf, base, "refused\n");
    FileSystem fs = pending.getFileSystem(conf);

    Traffic before = store().meter().read();
    assertThatThrownBy(
            () -> fs.rename(pending, new org.apache.hadoop.fs.Path(base + "/renamed-00000")))
        .isInstanceOf(IOException.class)
        .hasMessageContaining(pending.toString())
        .hasMessageContaining(base + "/renamed-00000")
        .hasMessageContaining(base + "/part-m-00000")
        .hasMessageContaining(ShimConfig.ON_MISS + "=fail")
        .hasMessageContaining(ShimConfig.RULES)
        .hasMessageContaining("LoadPlanHook");
    Traffic refusal = store().meter().read().minus(before);

    BucketView view = new BucketView(store(), bucket);
    assertThat(view.keys("")).allMatch(key -> key.startsWith("out/_temporary/0/"));
    assertThat(refusal.requests(S3Api.COMPLETE_MULTIPART_UPLOAD)).isZero();
    assertThat(view.openUploads(List.of("out/part-m-00000"))).as("still pending").hasSize(1);
    assertThat(shimOf(base).missesRefused()).isEqualTo(1);

    assertThat(fs.delete(new org.apache.hadoop.fs.Path(base + "/_temporary"), true)).isTrue();
    assertThat(view.keys("")).isEmpty();
    assertNoOpenUploads(bucket, List.of("out/part-m-00000"));
  }

  @Test
  void aMissThatWouldOverwriteAnExistingObjectIsRefusedAndTheDataStaysAbortable() throws Exception {
    String bucket = store().newBucket("shim-clobber");
    Configuration conf = configuration(1, true);
    String base = "s3a://" + bucket + "/out";
    BucketView view = new BucketView(store(), bucket);
    view.put("out/000000_0", "earlier insert\n");
    org.apache.hadoop.fs.Path pending =
        new org.apache.hadoop.fs.Path(
            base + "/_temporary/0/_temporary/attempt_2026112222_0010_m_000000_0/000000_0");
    FileSystem fs = pending.getFileSystem(conf);
    try (FSDataOutputStream out = fs.create(pending, false)) {
      out.write("later insert\n".getBytes(StandardCharsets.UTF_8));
    }

    assertThatThrownBy(
            () -> fs.rename(pending, new org.apache.hadoop.fs.Path(base + "/000000_0_copy_1")))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("would be overwritten")
        .hasMessageContaining(base + "/000000_0_copy_1");
    assertThat(view.read("out/000000_0")).isEqualTo("earlier insert\n");

    assertThat(fs.delete(new org.apache.hadoop.fs.Path(base + "/_temporary"), true)).isTrue();
    assertThat(view.keys("")).containsExactly("out/000000_0");
    assertNoOpenUploads(bucket, List.of("out/000000_0"));
  }

  @Test
  void theUploadOfAWriterThatDiedIsNamedByItsRecordAndAbortedByADelete() throws Exception {
    String bucket = store().newBucket("shim-dead");
    Configuration conf = configuration(1, true);
    String attemptDir =
        "s3a://" + bucket + "/out/_temporary/0/_temporary/attempt_2026112222_0012_m_000000_0";
    org.apache.hadoop.fs.Path file = new org.apache.hadoop.fs.Path(attemptDir + "/part-m-00000");
    FileSystem writer = FileSystem.newInstance(java.net.URI.create(attemptDir), conf);
    FSDataOutputStream out = writer.create(file, false);
    byte[] block = new byte[1 << 20];
    for (int mib = 0; mib < 11; mib++) {
      out.write(block);
    }
    out.hflush();
    // The writer dies here: never closed. Its first parts are in the store, its record names them.
    BucketView view = new BucketView(store(), bucket);
    assertThat(view.openUploads(List.of("out/part-m-00000"))).hasSize(1);

    FileSystem other = FileSystem.newInstance(java.net.URI.create(attemptDir), conf);
    try {
      assertThatThrownBy(
              () -> other.rename(file, new org.apache.hadoop.fs.Path("s3a://" + bucket + "/out/x")))
          .hasMessageContaining("never closed");
      assertThat(other.delete(new org.apache.hadoop.fs.Path("s3a://" + bucket + "/out"), true))
          .isTrue();
    } finally {
      other.close();
    }
    assertThat(view.openUploads(List.of("out/part-m-00000"))).isEmpty();
    assertThat(view.keys("")).isEmpty();
  }

  @Test
  void listingsAndSummariesOfTemporaryDirectoriesReportPendingFilesWithTheirLengths()
      throws Exception {
    String bucket = store().newBucket("shim-list");
    Configuration conf = configuration(1, true);
    String attemptDir =
        "s3a://" + bucket + "/out/_temporary/0/_temporary/attempt_2026112222_0011_m_000000_0";
    FileSystem fs = new org.apache.hadoop.fs.Path(attemptDir).getFileSystem(conf);
    byte[] big = new byte[(6 << 20) + 3];
    Arrays.fill(big, (byte) 'b');
    for (String name : new String[] {"a/part-0", "a/part-1", "big"}) {
      try (FSDataOutputStream out =
          fs.create(new org.apache.hadoop.fs.Path(attemptDir + "/" + name), false)) {
        out.write(name.equals("big") ? big : name.getBytes(StandardCharsets.UTF_8));
      }
    }
    // A second filesystem instance knows nothing of what the first wrote: it reads the records.
    FileSystem other = FileSystem.newInstance(java.net.URI.create(attemptDir), conf);
    try {
      org.apache.hadoop.fs.Path dir = new org.apache.hadoop.fs.Path(attemptDir);
      Map<String, Long> listed = new TreeMap<>();
      for (FileStatus status : other.listStatus(new org.apache.hadoop.fs.Path(dir, "a"))) {
        listed.put(status.getPath().getName(), status.getLen());
      }
      assertThat(listed).containsEntry("part-0", 8L).containsEntry("part-1", 8L);
      assertThat(other.getFileStatus(new org.apache.hadoop.fs.Path(dir, "big")).getLen())
          .isEqualTo(big.length);
      assertThat(other.getContentSummary(dir).getLength()).isEqualTo(big.length + 16L);
      assertThat(other.getContentSummary(dir).getFileCount()).isEqualTo(3);
      long recursive = 0;
      var files = other.listFiles(dir, true);
      while (files.hasNext()) {
        recursive += files.next().getLen();
      }
      assertThat(recursive).isEqualTo(big.length + 16L);
      assertThat(other.globStatus(new org.apache.hadoop.fs.Path(attemptDir + "/a/part-*")))
          .extracting(FileStatus::getLen)
          .containsExactly(8L, 8L);
      assertThat(other.exists(new org.apache.hadoop.fs.Path(dir, "a/part-1"))).isTrue();
      assertThat(other.getFileStatus(new org.apache.hadoop.fs.Path(dir, "a")).isDirectory())
          .isTrue();
    } finally {
      other.close();
    }
    assertThat(new BucketView(store(), bucket).keys("out/").stream())
        .as("nothing outside the temporary directory before any rename")
        .allMatch(key -> key.contains("_temporary"));
    fs.delete(new org.apache.hadoop.fs.Path("s3a://" + bucket + "/out"), true);
    assertThat(new BucketView(store(), bucket).keys("")).isEmpty();
    assertNoOpenUploads(bucket, List.of("out/a/part-0", "out/a/part-1", "out/big"));
  }
}
