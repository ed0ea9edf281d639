package dev.writeonce.shim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.store.check.StoreTrust;
import dev.writeonce.core.testing.s3.MemoryS3;
import dev.writeonce.core.testing.s3.MemoryS3ClientFactory;
import dev.writeonce.core.testing.s3.MemoryS3Settings;
import dev.writeonce.core.testing.s3.RequestHook;
import dev.writeonce.core.upload.UploadPool;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.lib.output.FileOutputCommitter;
import org.apache.hadoop.mapreduce.task.JobContextImpl;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A job attempt larger than one page: its committed tasks are listed in groups sharing a name
 * prefix, not one LIST per task; its round starts however long their listings take; merges of
 * several outputs through one instance keep their own pace of listing ahead.
 */
class LargeJobAttemptListingTest {

  private static final String PROCESS = "large-job-attempt";

  private final MemoryS3 store = new MemoryS3();
  private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
  private final AtomicLong perRead = new AtomicLong();

  /** Simulated time each LIST takes, shared by the listing threads. */
  private final AtomicLong perList = new AtomicLong();

  private final String endpoint =
      MemoryS3ClientFactory.register(
          store,
          (RequestHook)
              request -> {
                if (request.operation().equals("ListObjectsV2")) {
                  nanos.addAndGet(perList.get());
                }
                return dev.writeonce.core.testing.s3.Handling.PROCEED;
              });

  @AfterEach
  void tearDown() throws Exception {
    for (SimulatedShimFileSystem instance : SimulatedShimFileSystem.unregister(PROCESS)) {
      instance.close();
    }
    MemoryS3ClientFactory.unregister(endpoint);
  }

  private FileSystem fileSystem(String window) throws Exception {
    store.setMinimumPartSize(0);
    store.createBucket("b");
    SimulatedShimFileSystem.register(
        PROCESS,
        nanos::get,
        System::currentTimeMillis,
        (owner, threads) -> new UploadPool(owner, threads),
        (kind, keys) -> {
          if (kind.equals("READ")) {
            nanos.addAndGet(perRead.get());
          }
        });
    Configuration conf = new Configuration(false);
    MemoryS3Settings.apply(conf, endpoint);
    conf.set("fs.s3a.impl", SimulatedShimFileSystem.class.getName());
    conf.set(SimulatedShimFileSystem.PROCESS, PROCESS);
    conf.setBoolean(StoreTrust.CHECK, false);
    conf.set(ShimConfig.LISTING_WINDOW, window);
    conf.setInt(FileOutputCommitter.FILEOUTPUTCOMMITTER_ALGORITHM_VERSION, 1);
    return new Path("s3a://b/").getFileSystem(conf);
  }

  private long queuedSoFar() {
    long queued = 0;
    for (SimulatedShimFileSystem instance : SimulatedShimFileSystem.instancesOf(PROCESS)) {
      queued += instance.shimStatistics().completionsQueued();
    }
    return queued;
  }

  private FileOutputCommitter commitTasks(
      FileSystem fs, Path output, int tasks, List<String> partitions, int filesPerPartition)
      throws Exception {
    Configuration conf = fs.getConf();
    JobContext job = new JobContextImpl(conf, new JobID("20261129", 1));
    new FileOutputCommitter(output, job).setupJob(job);
    FileOutputCommitter committer = null;
    for (int t = 0; t < tasks; t++) {
      TaskAttemptContext task =
          new TaskAttemptContextImpl(conf, new TaskAttemptID("20261129", 1, TaskType.MAP, t, 0));
      committer = new FileOutputCommitter(output, task);
      committer.setupTask(task);
      for (String p : partitions) {
        for (int f = 0; f < filesPerPartition; f++) {
          Path file = new Path(committer.getWorkPath(), p + "/part-" + t + "-" + f + ".txt");
          try (FSDataOutputStream out = fs.create(file, true)) {
            out.write(("row " + p).getBytes(StandardCharsets.UTF_8));
          }
        }
      }
      committer.commitTask(task);
    }
    return committer;
  }

  /**
   * 600 tasks of two files (1,200 records: just over one page). One flat listing takes 2 LISTs and
   * answers well inside the 1 s window (the clock does not move); the task-by-task listing sends
   * one wasted page, one delimited LIST and then one LIST per committed task: 602.
   */
  @Test
  void aJobAttemptJustOverOnePageOfSmallTasksIsListedWithOneListPerTask() throws Exception {
    FileSystem fs = fileSystem("1s");
    Path output = new Path("s3a://b/t");
    commitTasks(fs, output, 600, List.of("p=0", "p=1"), 1);
    long before = store.requestCount("ListObjectsV2");
    fs.listStatus(new Path(output, "_temporary/0"));
    long lists = store.requestCount("ListObjectsV2") - before;
    assertThat(lists).as("LISTs of the job attempt's listing (one flat listing: 2)").isLessThan(10);
  }

  /** The whole job commit of the same job, for the record of the blow-up. */
  @Test
  void theJobCommitOfSixHundredTwoFileTasksSendsAListPerTask() throws Exception {
    FileSystem fs = fileSystem("1s");
    Path output = new Path("s3a://b/t");
    FileOutputCommitter committer = commitTasks(fs, output, 600, List.of("p=0", "p=1"), 1);
    long before = store.requestCount("ListObjectsV2");
    committer.commitJob(new JobContextImpl(fs.getConf(), new JobID("20261129", 1)));
    long lists = store.requestCount("ListObjectsV2") - before;
    assertThat(store.keys("b").stream().filter(k -> k.contains("/part-"))).hasSize(1_200);
    assertThat(lists).as("LISTs of the job commit").isLessThan(100);
  }

  /**
   * 2,000 one-file tasks (Spark's usual shape). A LIST takes 20 ms on the store and the 32 listing
   * threads run in parallel: 0.625 ms of the clock per LIST. One flat listing (2 pages) took 40 ms.
   * The task-by-task listing sends 2,003 LISTs, 1.25 s: the job attempt directory's own listing,
   * sent first, has aged past the 1 s window when the last task's listing returns, so no round is
   * started (not one completion is queued: each rename completes synchronously) and the listing
   * falls back to S3A.
   */
  @Test
  void aJobAttemptOfManyOneFileTasksOutlastsTheWindowAndStartsNoRound() throws Exception {
    FileSystem fs = fileSystem("1s");
    Path output = new Path("s3a://b/t");
    FileOutputCommitter committer = commitTasks(fs, output, 2_000, List.of("p=0"), 1);
    perList.set(625_000L);
    long queuedBefore = queuedSoFar();
    long before = store.requestCount("ListObjectsV2");
    committer.commitJob(new JobContextImpl(fs.getConf(), new JobID("20261129", 1)));
    long lists = store.requestCount("ListObjectsV2") - before;
    long queued = queuedSoFar() - queuedBefore;
    assertThat(store.keys("b").stream().filter(k -> k.contains("/part-"))).hasSize(2_000);
    assertThat(queued).as("completions queued by the job commit's round").isEqualTo(2_000);
  }

  private static final String TASK0 = "task_20261129_0001_m_000000";

  /**
   * Eight job commits of one JVM (Spark jobs run from eight threads of one driver, sharing the
   * cached file system) merge tables of 40 partitions, each holding 2,000 objects already (over the
   * one-page whole-output renewal). Each merge is slow: it enters its next partition 600 ms after
   * the last, more than half the 1 s window, so a destination listed ahead always ages unused. The
   * eight enter their partitions within a millisecond of each other, and the pace is measured per
   * instance, not per merge: it looks like 1 ms, and each partition lists up to 64 destinations
   * ahead. Without listing ahead this sequence costs one LIST per partition and merge (320).
   */
  @Test
  void interleavedSlowMergesOfOneInstanceListManyDestinationsAheadThatAgeUnused() throws Exception {
    FileSystem fs = fileSystem("1s");
    List<String> partitions = new ArrayList<>();
    for (int p = 0; p < 40; p++) {
      partitions.add("p=" + p);
    }
    int outputs = 8;
    List<Path> tasks = new ArrayList<>();
    for (int j = 0; j < outputs; j++) {
      Path output = new Path("s3a://b/t" + j);
      commitTasks(fs, output, 1, partitions, 1);
      for (int i = 0; i < 2_000; i++) {
        store.putObject("b", "t" + j + "/p=" + (i % 40) + "/existing-" + i + ".txt", new byte[1]);
      }
      tasks.add(new Path(output, "_temporary/0/" + TASK0));
    }
    long before = store.requestCount("ListObjectsV2");
    for (Path task : tasks) {
      fs.listStatus(task.getParent());
      fs.listStatus(task);
    }
    long setup = store.requestCount("ListObjectsV2") - before;
    before = store.requestCount("ListObjectsV2");
    for (String p : partitions) {
      for (Path task : tasks) {
        fs.listStatus(new Path(task, p));
        nanos.addAndGet(1_000_000L);
      }
      nanos.addAndGet(600_000_000L);
    }
    long lists = store.requestCount("ListObjectsV2") - before;
    assertThat(lists)
        .as("LISTs at the partitions of eight slow merges (one per partition: 320)")
        .isLessThanOrEqualTo(2L * outputs * partitions.size());
  }
}
