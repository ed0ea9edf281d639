package dev.writeonce.shim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.store.check.StoreTrust;
import dev.writeonce.core.testing.s3.MemoryS3;
import dev.writeonce.core.testing.s3.MemoryS3ClientFactory;
import dev.writeonce.core.testing.s3.MemoryS3Settings;
import dev.writeonce.core.testing.s3.RequestHook;
import dev.writeonce.core.upload.UploadPool;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
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

/** The limits of the listings a merge round holds past the window. */
class HeldListingLimitsTest {

  private static final String PROCESS = "held-listing-limits";

  private final MemoryS3 store = new MemoryS3();
  private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
  private final String endpoint = MemoryS3ClientFactory.register(store, RequestHook.NONE);

  /** Run once, by the hook, when an operation names a key ending so. */
  private volatile String triggerSuffix;

  private volatile Runnable trigger;
  private final AtomicBoolean fired = new AtomicBoolean();

  @AfterEach
  void tearDown() throws Exception {
    for (SimulatedShimFileSystem instance : SimulatedShimFileSystem.unregister(PROCESS)) {
      instance.close();
    }
    MemoryS3ClientFactory.unregister(endpoint);
  }

  private FileSystem fileSystem(String window) throws Exception {
    store.createBucket("b");
    SimulatedShimFileSystem.register(
        PROCESS,
        nanos::get,
        System::currentTimeMillis,
        (owner, threads) -> new UploadPool(owner, threads),
        (kind, keys) -> {
          if (kind.equals("READ")) {
            nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(1)); // each read takes a little time
          }
          String suffix = triggerSuffix;
          if (suffix != null
              && keys.stream().anyMatch(k -> k.endsWith(suffix))
              && fired.compareAndSet(false, true)) {
            trigger.run();
          }
        });
    return new Path("s3a://b/").getFileSystem(conf(window));
  }

  private Configuration conf(String window) {
    Configuration conf = new Configuration(false);
    MemoryS3Settings.apply(conf, endpoint);
    conf.set("fs.s3a.impl", SimulatedShimFileSystem.class.getName());
    conf.set(SimulatedShimFileSystem.PROCESS, PROCESS);
    conf.setBoolean(StoreTrust.CHECK, false);
    conf.set(ShimConfig.LISTING_WINDOW, window);
    conf.setInt(FileOutputCommitter.FILEOUTPUTCOMMITTER_ALGORITHM_VERSION, 1);
    return conf;
  }

  private FileOutputCommitter commitTasks(
      FileSystem fs, Path output, int job, int tasks, List<String> partitions, String prefix)
      throws Exception {
    Configuration conf = fs.getConf();
    JobContext context = new JobContextImpl(conf, new JobID("20261129", job));
    new FileOutputCommitter(output, context).setupJob(context);
    FileOutputCommitter committer = null;
    for (int t = 0; t < tasks; t++) {
      TaskAttemptContext task =
          new TaskAttemptContextImpl(conf, new TaskAttemptID("20261129", job, TaskType.MAP, t, 0));
      committer = new FileOutputCommitter(output, task);
      committer.setupTask(task);
      for (String p : partitions) {
        Path file =
            new Path(committer.getWorkPath(), (p.isEmpty() ? "" : p + "/") + prefix + t + ".txt");
        try (FSDataOutputStream out = fs.create(file, true)) {
          out.write(("row " + p).getBytes(StandardCharsets.UTF_8));
        }
      }
      committer.commitTask(task);
    }
    return committer;
  }

  private static final String TASK0 = "task_20261129_0001_m_000000";

  /** Starts a round of job 1 on t and leaves it unfinished (a job commit that failed half-way). */
  private void stuckRound(FileSystem fs) throws Exception {
    Path output = new Path("s3a://b/t");
    commitTasks(fs, output, 1, 2, List.of("p=1", "p=2"), "part-");
    Path attempt = new Path(output, "_temporary/0");
    Path task = new Path(attempt, TASK0);
    fs.listStatus(attempt); // the round starts
    fs.listStatus(task); // t held for p=1, p=2
    fs.listStatus(new Path(task, "p=1")); // t/p=1 held for part-0.txt
  }

  /**
   * The listing window is 0 once another instance of this JVM opens with 0 ("0 keeps no listing and
   * no absence"); a held listing still answers "absent" for the round's names, for 10 minutes.
   */
  @Test
  void aWindowOfZeroStillAnswersFromAHeldListing() throws Exception {
    FileSystem fs = fileSystem("1s");
    stuckRound(fs);
    FileSystem strict = FileSystem.newInstance(new URI("s3a://b/"), conf("0"));
    nanos.addAndGet(TimeUnit.SECONDS.toNanos(5));
    store.putObject("b", "t/p=1/part-0.txt", new byte[1]); // another process
    assertThat(strict.exists(new Path("s3a://b/t/p=1/part-0.txt")))
        .as("an instance with a listing window of 0 asks the store")
        .isTrue();
  }

  /**
   * A round that never ends (job commit failed half-way, cleanup skipped or failed) holds every
   * later listing of its directories that any other round of this JVM sends: here a job writing
   * t/p=1 every 5 minutes. 17 minutes after the stuck round started, 7 minutes after the listing
   * another round sent (and ended), another process's file is "absent" for the stuck round's name.
   */
  @Test
  void aStuckRoundHoldsListingsOtherRoundsSendForeverNotTenMinutes() throws Exception {
    FileSystem fs = fileSystem("1s");
    stuckRound(fs);
    Path partition = new Path("s3a://b/t/p=1");
    for (int job = 2; job <= 3; job++) {
      nanos.addAndGet(TimeUnit.MINUTES.toNanos(5));
      FileOutputCommitter committer =
          commitTasks(fs, partition, job, 1, List.of(""), "job" + job + "-");
      committer.commitJob(new JobContextImpl(fs.getConf(), new JobID("20261129", job)));
      assertThat(store.keys("b")).contains("t/p=1/job" + job + "-0.txt");
    }
    nanos.addAndGet(TimeUnit.MINUTES.toNanos(7));
    store.putObject("b", "t/p=1/part-0.txt", new byte[1]); // another process, 17 min on
    nanos.addAndGet(TimeUnit.SECONDS.toNanos(5));
    assertThat(fs.exists(new Path("s3a://b/t/p=1/part-0.txt")))
        .as("17 minutes after the stuck round started, 7 after the last listing of t/p=1")
        .isTrue();
  }
}
