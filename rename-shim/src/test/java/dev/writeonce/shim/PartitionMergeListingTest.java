package dev.writeonce.shim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.store.check.StoreTrust;
import dev.writeonce.core.testing.s3.MemoryS3;
import dev.writeonce.core.testing.s3.MemoryS3ClientFactory;
import dev.writeonce.core.testing.s3.MemoryS3Settings;
import dev.writeonce.core.testing.s3.RequestHook;
import dev.writeonce.core.upload.UploadPool;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
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
 * FileOutputCommitter's job commit of a task that wrote many partitions, while listings age past
 * half the window between partitions (a slow store, a busy driver): the listings that answer the
 * merge's checks are renewed for the whole output at once, not one LIST per partition.
 */
class PartitionMergeListingTest {

  private static final String PROCESS = "partition-merge";
  private static final int PARTITIONS = 40;

  private final MemoryS3 store = new MemoryS3();
  private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
  private final String endpoint = MemoryS3ClientFactory.register(store, RequestHook.NONE);

  @AfterEach
  void tearDown() throws Exception {
    for (SimulatedShimFileSystem instance : SimulatedShimFileSystem.unregister(PROCESS)) {
      instance.close();
    }
    MemoryS3ClientFactory.unregister(endpoint);
  }

  @Test
  void aMergeOfManyPartitionsRenewsTheOutputsListingWholeNotOnePartitionAtATime() throws Exception {
    store.createBucket("b");
    // Each directory the merge reads takes 200 ms of the window's clock: every third partition
    // finds the listings older than half the window (1 s).
    SimulatedShimFileSystem.register(
        PROCESS,
        nanos::get,
        System::currentTimeMillis,
        (owner, threads) -> new UploadPool(owner, threads),
        (kind, keys) -> {
          if (kind.equals("READ")) {
            nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(200));
          }
        });
    Configuration conf = new Configuration(false);
    MemoryS3Settings.apply(conf, endpoint);
    conf.set("fs.s3a.impl", SimulatedShimFileSystem.class.getName());
    conf.set(SimulatedShimFileSystem.PROCESS, PROCESS);
    conf.setBoolean(StoreTrust.CHECK, false);
    conf.set(ShimConfig.LISTING_WINDOW, "1s");
    conf.setInt(FileOutputCommitter.FILEOUTPUTCOMMITTER_ALGORITHM_VERSION, 1);
    Path output = new Path("s3a://b/table");
    FileSystem fs = output.getFileSystem(conf);

    JobContext job = new JobContextImpl(conf, new JobID("20261129", 1));
    new FileOutputCommitter(output, job).setupJob(job);
    // Two tasks write every partition: the merge of the second finds each partition in place
    // and lists it before it moves the task's file in.
    FileOutputCommitter committer = null;
    for (int t = 0; t < 2; t++) {
      TaskAttemptContext task =
          new TaskAttemptContextImpl(conf, new TaskAttemptID("20261129", 1, TaskType.MAP, t, 0));
      committer = new FileOutputCommitter(output, task);
      committer.setupTask(task);
      for (int p = 0; p < PARTITIONS; p++) {
        Path file = new Path(committer.getWorkPath(), "p=" + p + "/part-0000" + t + ".txt");
        try (FSDataOutputStream out = fs.create(file, true)) {
          out.write(("row " + p).getBytes(StandardCharsets.UTF_8));
        }
      }
      committer.commitTask(task);
    }

    long listsBefore = store.requestCount("ListObjectsV2");
    committer.commitJob(job);
    long lists = store.requestCount("ListObjectsV2") - listsBefore;

    assertThat(store.keys("b").stream().filter(k -> k.endsWith(".txt"))).hasSize(2 * PARTITIONS);
    // The output's whole listing renewed every third partition (two LISTs: before and after its
    // temporary directory): 25 LISTs, where renewing each partition's own listing sent 51.
    assertThat(lists).isLessThanOrEqualTo(30);
  }
}
