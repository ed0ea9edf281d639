package dev.writeonce.shim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.testing.s3.Handling;
import dev.writeonce.core.testing.s3.MemoryS3;
import dev.writeonce.core.testing.s3.MemoryS3ClientFactory;
import dev.writeonce.core.testing.s3.MemoryS3Settings;
import dev.writeonce.core.testing.s3.RequestHook;
import dev.writeonce.core.testing.s3.StoreRequest;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.JobStatus;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.lib.output.FileOutputCommitter;
import org.apache.hadoop.mapreduce.task.JobContextImpl;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The three ways the shim lost data, each driven with Hadoop's real FileOutputCommitter (or Hive's
 * move rule) over the real shim on the real S3A, against the in-memory store behind the SDK's
 * client interface. Each uses the file system's public API only.
 */
class RenameShimFaultsTest {

  private static final String BUCKET = "bucket";
  private static final Path OUT = new Path("s3a://" + BUCKET + "/out");

  private final MemoryS3 store = new MemoryS3();
  private volatile Predicate<StoreRequest> failing = request -> false;
  private volatile Predicate<StoreRequest> shortPages = request -> false;
  private volatile CountDownLatch holdFailure;
  private String endpoint;
  private Configuration conf;

  @BeforeEach
  void start() {
    store.setMinimumPartSize(0);
    endpoint =
        MemoryS3ClientFactory.register(
            store,
            new RequestHook() {
              @Override
              public Handling before(StoreRequest request) {
                if (failing.test(request)) {
                  CountDownLatch hold = holdFailure;
                  if (hold != null) {
                    await(hold);
                  }
                  return Handling.FAIL_UNSENT;
                }
                return Handling.PROCEED;
              }

              @Override
              public int pageSize(StoreRequest request, int requested) {
                return shortPages.test(request) ? 1 : requested;
              }
            });
    conf = MemoryS3Settings.s3aConfiguration(endpoint);
    conf.set("fs.s3a.impl", RenameShimFileSystem.class.getName());
    // Hadoop's cache as in a real process: one instance, whatever configuration a caller passes.
    conf.setBoolean("fs.s3a.impl.disable.cache", false);
  }

  @AfterEach
  void stop() throws IOException {
    FileSystem.closeAll();
    MemoryS3ClientFactory.unregister(endpoint);
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static Predicate<StoreRequest> completionOf(String key) {
    return request ->
        request.operation().equals("CompleteMultipartUpload") && key.equals(request.key());
  }

  /** A job of one task that writes the given files, committed by the task. */
  private JobContext jobWithCommittedTask(JobConf job, String... names) throws IOException {
    job.set("mapreduce.output.fileoutputformat.outputdir", OUT.toString());
    job.setInt("mapreduce.fileoutputcommitter.algorithm.version", 1);
    JobID id = new JobID("202611260000", 1);
    JobContext context = new JobContextImpl(job, id);
    new FileOutputCommitter(OUT, context).setupJob(context);
    TaskAttemptContext task =
        new TaskAttemptContextImpl(job, new TaskAttemptID(new TaskID(id, TaskType.MAP, 0), 0));
    FileOutputCommitter committer = new FileOutputCommitter(OUT, task);
    committer.setupTask(task);
    for (String name : names) {
      Path path = new Path(committer.getWorkPath(), name);
      try (FSDataOutputStream out = path.getFileSystem(job).create(path, true)) {
        out.write(("data of " + name).getBytes(StandardCharsets.UTF_8));
      }
    }
    committer.commitTask(task);
    return context;
  }

  private List<String> openUploads() {
    return store.openUploads(BUCKET).stream().map(MemoryS3.OpenUpload::key).toList();
  }

  /**
   * Fault 1. The completion of {@code out/part-1} fails after its rename returned. Another thread
   * of the process (a query listing the table) reaches the barrier first. The failure must still
   * fail the job commit, and the job's abort must leave no upload open.
   */
  @Test
  void aFailedCompletionSeenFirstByAReaderStillFailsTheJobCommit() throws Exception {
    JobConf job = new JobConf(conf);
    JobContext context = jobWithCommittedTask(job, "part-0", "part-1", "part-2");
    holdFailure = new CountDownLatch(1);
    failing = completionOf("out/part-1");
    AtomicReference<Throwable> readerSaw = new AtomicReference<>();
    FileOutputCommitter committer =
        new FileOutputCommitter(OUT, context) {
          @Override
          @SuppressWarnings("deprecation") // FileOutputCommitter's own job commit calls it
          public void cleanupJob(JobContext jobContext) throws IOException {
            // The merge returned; a reader in the same process lists the output first.
            Thread reader =
                new Thread(
                    () -> {
                      try {
                        OUT.getFileSystem(conf).listStatus(OUT);
                      } catch (Throwable e) {
                        readerSaw.set(e);
                      }
                    });
            reader.start();
            try {
              reader.join(30_000);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
            super.cleanupJob(jobContext);
          }
        };
    // The failure lands a moment after the merge, while the reader waits for it.
    Thread release =
        new Thread(
            () -> {
              sleep(300);
              holdFailure.countDown();
            });
    release.start();

    assertThatThrownBy(() -> committer.commitJob(context))
        .as("the job commit must report the failed completion")
        .hasMessageContaining("out/part-1");
    committer.abortJob(context, JobStatus.State.FAILED);

    assertThat(store.getObject(BUCKET, "out/_SUCCESS")).isEmpty();
    assertThat(openUploads()).as("the abort aborts the failed file's upload").isEmpty();
  }

  /**
   * Fault 2. The job's own configuration skips the success marker and ignores cleanup failures; the
   * file system instance was made earlier with the session's, which has neither. A failed
   * completion must fail the job commit all the same.
   */
  @Test
  void aJobWhoseOwnSettingsSkipEveryBarrierStillGetsItsFailedCompletion() throws Exception {
    FileSystem cached = OUT.getFileSystem(conf); // the session's instance, made first
    JobConf job = new JobConf(conf);
    job.setBoolean("mapreduce.fileoutputcommitter.marksuccessfuljobs", false);
    job.setBoolean("mapreduce.fileoutputcommitter.cleanup-failures.ignored", true);
    JobContext context = jobWithCommittedTask(job, "part-0", "part-1");
    assertThat(OUT.getFileSystem(job)).as("the cached instance").isSameAs(cached);
    failing = completionOf("out/part-1");
    FileOutputCommitter committer = new FileOutputCommitter(OUT, context);

    assertThatThrownBy(() -> committer.commitJob(context))
        .as("the job commit must report the failed completion")
        .hasMessageContaining("out/part-1");
    committer.abortJob(context, JobStatus.State.FAILED);

    assertThat(openUploads()).as("the abort aborts the failed file's upload").isEmpty();
  }

  /**
   * Fault 3. The store answers a listing of the table with short pages marked truncated, as the S3
   * API allows. A file that has been in the table for hours lies beyond the first page; Hive's move
   * checks each name before it renames onto it and must keep that file.
   */
  @Test
  void aFileBeyondAShortTruncatedPageIsNotTakenAsAbsentAndHivesMoveKeepsIt() throws Exception {
    byte[] old = "written hours ago".getBytes(StandardCharsets.UTF_8);
    store.putObject(BUCKET, "t/000000_0", old);
    store.putObject(BUCKET, "t/000001_0", old);
    store.advanceMillis(3 * 3600 * 1000L);
    shortPages = request -> request.operation().equals("ListObjectsV2");
    FileSystem fs = FileSystem.get(URI.create("s3a://" + BUCKET + "/"), conf);
    Path staging = new Path("s3a://" + BUCKET + "/t/.hive-staging_hive_1/-ext-10000");
    try (FSDataOutputStream out = fs.create(new Path(staging, "000000_0"), true)) {
      out.write("the statement's row".getBytes(StandardCharsets.UTF_8));
    }

    // Hive's move: each staged file under its own name, or the first free _copy_N.
    Path table = new Path("s3a://" + BUCKET + "/t");
    for (FileStatus staged : fs.listStatus(staging)) {
      Path target = new Path(table, staged.getPath().getName());
      for (int copy = 1; fs.exists(target); copy++) {
        target = new Path(table, staged.getPath().getName() + "_copy_" + copy);
      }
      assertThat(fs.rename(staged.getPath(), target)).isTrue();
    }
    fs.delete(staging.getParent(), true);

    assertThat(store.getObject(BUCKET, "t/000000_0")).as("the old file is kept").contains(old);
    assertThat(
            new String(
                store.getObject(BUCKET, "t/000000_0_copy_1").orElseThrow(), StandardCharsets.UTF_8))
        .isEqualTo("the statement's row");
    assertThat(store.requestCount("CopyObject")).as("predicted: completed, not copied").isZero();
    assertThat(openUploads()).isEmpty();
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
