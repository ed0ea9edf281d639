package dev.writeonce.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.upload.UploadOutputStream;
import dev.writeonce.magic.MagicCommitter;
import dev.writeonce.teststore.BucketView;
import dev.writeonce.teststore.S3Api;
import dev.writeonce.teststore.TestStore;
import dev.writeonce.teststore.Traffic;
import java.util.Arrays;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitter;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitterFactory;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.junit.jupiter.api.Test;

/** The committer contract for the magic committer, and what only streaming can show. */
class MagicCommitterIT extends AbstractCommitterContractIT {

  MagicCommitterIT(TestStore store) {
    super(store);
  }

  @Override
  protected String committerName() {
    return MagicCommitter.NAME;
  }

  @Test
  void a100MiBFileWithFiveMiBPartsUploadsWhileWritingWithinItsBufferBound() throws Exception {
    String bucket = store().newBucket("magic-stream");
    Configuration conf = jobConfiguration();
    conf.set(CommitterConfig.PART_SIZE, "5M");
    conf.setInt(CommitterConfig.MAGIC_BUFFERS_PER_STREAM, 2);
    Path out = new Path("s3a://" + bucket + "/out");
    conf.set("mapreduce.output.fileoutputformat.outputdir", out.toString());
    TaskAttemptContext context =
        new TaskAttemptContextImpl(conf, new TaskAttemptID("2026112202", 1, TaskType.MAP, 0, 0));
    PathOutputCommitter committer = PathOutputCommitterFactory.createCommitter(out, context);
    committer.setupJob(context);
    committer.setupTask(context);
    Path file = new Path(committer.getWorkPath(), "part-m-00000");
    FileSystem fs = file.getFileSystem(conf);

    byte[] block = new byte[1 << 20];
    Traffic before = store().meter().read();
    UploadOutputStream magic;
    try (FSDataOutputStream stream = fs.create(file, false)) {
      magic = (UploadOutputStream) stream.getWrappedStream();
      for (int mib = 0; mib < 50; mib++) {
        Arrays.fill(block, (byte) mib);
        stream.write(block);
      }
      Traffic halfway = store().meter().read().minus(before);
      // 10 full parts were handed over; with two buffers at most two are still in flight.
      assertThat(halfway.requests(S3Api.UPLOAD_PART) + halfway.requests(S3Api.PUT_OBJECT))
          .as("parts the store received before close: %s", halfway)
          .isGreaterThanOrEqualTo(8);
      for (int mib = 50; mib < 100; mib++) {
        Arrays.fill(block, (byte) mib);
        stream.write(block);
      }
    }
    Traffic written = store().meter().read().minus(before);

    assertThat(magic.peakBufferedBytes()).isLessThanOrEqualTo(2L * (5 << 20));
    assertThat(written.bytesReceived()).isBetween(100L << 20, (100L << 20) + (1L << 20));
    assertThat(written.requests(S3Api.COMPLETE_MULTIPART_UPLOAD)).isZero();
    assertThat(fs.getFileStatus(file).getLen()).isEqualTo(100L << 20);
    assertThat(
            store()
                .adminClient()
                .listObjectsV2(b -> b.bucket(bucket).prefix("out/part"))
                .keyCount())
        .as("nothing visible before the job commits")
        .isZero();

    committer.commitTask(context);
    committer.commitJob(context);
    assertThat(
            store().adminClient().headObject(b -> b.bucket(bucket).key("out/part-m-00000")).eTag())
        .endsWith("-20\"");
  }

  @Test
  void aFileCreatedThroughTheBuilderIsStreamedAndLeftPendingUntilTheJobCommits() throws Exception {
    String bucket = store().newBucket("magic-builder");
    Configuration conf = jobConfiguration();
    conf.set(CommitterConfig.PART_SIZE, "5M");
    Path out = new Path("s3a://" + bucket + "/out");
    conf.set("mapreduce.output.fileoutputformat.outputdir", out.toString());
    TaskAttemptContext context =
        new TaskAttemptContextImpl(conf, new TaskAttemptID("2026112204", 1, TaskType.MAP, 0, 0));
    PathOutputCommitter committer = PathOutputCommitterFactory.createCommitter(out, context);
    committer.setupJob(context);
    committer.setupTask(context);
    Path file = new Path(committer.getWorkPath(), "part-m-00000");
    FileSystem fs = file.getFileSystem(conf);
    byte[] data = new byte[(6 << 20) + 5];
    Arrays.fill(data, (byte) 'm');

    Traffic before = store().meter().read();
    try (FSDataOutputStream stream = fs.createFile(file).overwrite(true).build()) {
      stream.write(data);
    }
    BucketView view = new BucketView(store(), bucket);
    assertThat(view.keys("out/"))
        .as("nothing visible before the job commits")
        .noneMatch(key -> key.contains("part-m-00000"));
    assertThat(view.openUploads(java.util.List.of("out/part-m-00000"))).hasSize(1);

    committer.commitTask(context);
    committer.commitJob(context);
    Traffic job = store().meter().read().minus(before);

    assertThat(view.size("out/part-m-00000")).isEqualTo(data.length);
    assertThat(job.requests(S3Api.COPY_OBJECT)).isZero();
    assertThat(job.requests(S3Api.COMPLETE_MULTIPART_UPLOAD)).isEqualTo(1);
    assertThat(view.openUploads(java.util.List.of("out/part-m-00000"))).isEmpty();
  }

  @Test
  void aDeletedDirectoryUnderTheMagicPathIsNeverCommittedAndItsUploadsAreAborted()
      throws Exception {
    String bucket = store().newBucket("magic-delete");
    Configuration conf = jobConfiguration();
    Path out = new Path("s3a://" + bucket + "/out");
    conf.set("mapreduce.output.fileoutputformat.outputdir", out.toString());
    TaskAttemptContext context =
        new TaskAttemptContextImpl(conf, new TaskAttemptID("2026112203", 1, TaskType.MAP, 0, 0));
    PathOutputCommitter committer = PathOutputCommitterFactory.createCommitter(out, context);
    committer.setupJob(context);
    committer.setupTask(context);
    Path base = committer.getWorkPath();
    FileSystem fs = base.getFileSystem(conf);
    for (String name : java.util.List.of("keep/part-0", "drop/part-0", "drop/sub/part-1")) {
      try (FSDataOutputStream stream = fs.create(new Path(base, name), false)) {
        stream.write(name.getBytes(java.nio.charset.StandardCharsets.UTF_8));
      }
    }

    assertThat(fs.delete(new Path(base, "drop"), true)).isTrue();
    committer.commitTask(context);
    committer.commitJob(context);

    BucketView bucketView = new BucketView(store(), bucket);
    assertThat(bucketView.keys("out/")).containsExactly("out/_SUCCESS", "out/keep/part-0");
    assertThat(bucketView.openUploads(java.util.List.of("out/drop/part-0", "out/drop/sub/part-1")))
        .isEmpty();
  }

  /** Writes one file through a new task attempt of the job and returns its final key. */
  private String writeWithoutCommit(
      Configuration conf, Path out, String jtIdentifier, int task, String name) throws Exception {
    TaskAttemptContext context =
        new TaskAttemptContextImpl(conf, new TaskAttemptID(jtIdentifier, 1, TaskType.MAP, task, 0));
    PathOutputCommitter committer = PathOutputCommitterFactory.createCommitter(out, context);
    committer.setupTask(context);
    Path file = new Path(committer.getWorkPath(), name);
    try (FSDataOutputStream stream = file.getFileSystem(conf).create(file, false)) {
      stream.write(name.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }
    return "out/" + name;
  }

  /**
   * Hadoop's protocol scenario testCommitJobButNotTask: the attempt's upload must not stay open.
   */
  /** A job set up, and one task attempt that wrote a file and neither committed nor aborted. */
  private record UncommittedTask(
      PathOutputCommitter driver, TaskAttemptContext jobContext, BucketView view, String key) {}

  private UncommittedTask jobWithAnUncommittedTask(String bucketHint, String jtIdentifier)
      throws Exception {
    String bucket = store().newBucket(bucketHint);
    Configuration conf = jobConfiguration();
    Path out = new Path("s3a://" + bucket + "/out");
    conf.set("mapreduce.output.fileoutputformat.outputdir", out.toString());
    TaskAttemptContext jobContext =
        new TaskAttemptContextImpl(conf, new TaskAttemptID(jtIdentifier, 1, TaskType.MAP, 0, 0));
    PathOutputCommitter driver = PathOutputCommitterFactory.createCommitter(out, jobContext);
    driver.setupJob(jobContext);
    String key = writeWithoutCommit(conf, out, jtIdentifier, 0, "part-m-00000");
    BucketView bucketView = new BucketView(store(), bucket);
    assertThat(bucketView.openUploads(java.util.List.of(key))).hasSize(1);
    return new UncommittedTask(driver, jobContext, bucketView, key);
  }

  @Test
  void aJobCommittedWithoutItsTaskCommitLeavesTheTasksUploadAbortedNotOpen() throws Exception {
    UncommittedTask job = jobWithAnUncommittedTask("magic-no-task-commit", "2026112511");

    job.driver().commitJob(job.jobContext());

    assertThat(job.view().keys("out/")).doesNotContain(job.key());
    assertThat(job.view().openUploads(java.util.List.of(job.key()))).isEmpty();
  }

  /** Hadoop's protocol scenario testAbortJobNotTask. */
  @Test
  void aJobAbortedWithoutItsTaskAbortLeavesTheTasksUploadAbortedNotOpen() throws Exception {
    UncommittedTask job = jobWithAnUncommittedTask("magic-no-task-abort", "2026112512");

    job.driver().abortJob(job.jobContext(), org.apache.hadoop.mapreduce.JobStatus.State.FAILED);

    assertThat(job.view().keys("out/")).doesNotContain(job.key());
    assertThat(job.view().openUploads(java.util.List.of(job.key()))).isEmpty();
  }

  /**
   * Two runs of one Hadoop job id with distinct run ids (Spark's ids repeat within a second) keep
   * their attempts apart: each job commits its own file, and neither commit aborts the other's.
   */
  @Test
  void twoRunsOfOneJobIdWithDistinctRunIdsKeepTheirMagicAttemptsApart() throws Exception {
    String bucket = store().newBucket("magic-two-runs");
    Path out = new Path("s3a://" + bucket + "/out");
    Configuration first = jobConfiguration();
    first.set("mapreduce.output.fileoutputformat.outputdir", out.toString());
    first.set("writeonce.job.uuid", "run-a");
    Configuration second = new Configuration(first);
    second.set("writeonce.job.uuid", "run-b");
    TaskAttemptID attempt = new TaskAttemptID("2026112513", 1, TaskType.MAP, 0, 0);
    TaskAttemptContext firstJob = new TaskAttemptContextImpl(first, attempt);
    TaskAttemptContext secondJob = new TaskAttemptContextImpl(second, attempt);
    PathOutputCommitter firstDriver = PathOutputCommitterFactory.createCommitter(out, firstJob);
    PathOutputCommitter secondDriver = PathOutputCommitterFactory.createCommitter(out, secondJob);
    firstDriver.setupJob(firstJob);
    secondDriver.setupJob(secondJob);

    PathOutputCommitter firstTask = PathOutputCommitterFactory.createCommitter(out, firstJob);
    PathOutputCommitter secondTask = PathOutputCommitterFactory.createCommitter(out, secondJob);
    firstTask.setupTask(firstJob);
    secondTask.setupTask(secondJob);
    assertThat(firstTask.getWorkPath()).isNotEqualTo(secondTask.getWorkPath());
    for (var pair :
        java.util.List.of(
            java.util.Map.entry(firstTask, "a.txt"), java.util.Map.entry(secondTask, "b.txt"))) {
      Path file = new Path(pair.getKey().getWorkPath(), pair.getValue());
      try (FSDataOutputStream stream = file.getFileSystem(first).create(file, false)) {
        stream.write(pair.getValue().getBytes(java.nio.charset.StandardCharsets.UTF_8));
      }
    }
    firstTask.commitTask(firstJob);
    firstDriver.commitJob(firstJob);
    secondTask.commitTask(secondJob);
    secondDriver.commitJob(secondJob);

    BucketView bucketView = new BucketView(store(), bucket);
    assertThat(bucketView.keys("out/")).contains("out/a.txt", "out/b.txt");
    assertThat(bucketView.read("out/a.txt")).isEqualTo("a.txt");
    assertThat(bucketView.read("out/b.txt")).isEqualTo("b.txt");
  }
}
