package dev.writeonce.shim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.testing.s3.Handling;
import dev.writeonce.core.testing.s3.MemoryS3;
import dev.writeonce.core.testing.s3.MemoryS3ClientFactory;
import dev.writeonce.core.testing.s3.MemoryS3Settings;
import dev.writeonce.core.testing.s3.RequestHook;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.JobID;
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
 * The LISTs of FileOutputCommitter v1's job commit through the shim where listings are large: a job
 * attempt just above one page, and destinations holding more children than a listing keeps.
 */
class JobCommitListingCostTest {

  private static final String BUCKET = "bucket";

  private final MemoryS3 store = new MemoryS3();
  private final List<String> trace = Collections.synchronizedList(new ArrayList<>());
  private String endpoint;
  private Configuration conf;

  @BeforeEach
  void start() {
    store.setMinimumPartSize(0);
    endpoint =
        MemoryS3ClientFactory.register(
            store,
            (RequestHook)
                request -> {
                  trace.add(request.operation() + " " + request.key());
                  return Handling.PROCEED;
                });
    conf = MemoryS3Settings.s3aConfiguration(endpoint);
    conf.set("fs.s3a.impl", RenameShimFileSystem.class.getName());
    conf.setBoolean("fs.s3a.impl.disable.cache", false);
  }

  @AfterEach
  void stop() throws IOException {
    FileSystem.closeAll();
    MemoryS3ClientFactory.unregister(endpoint);
  }

  private JobConf job(Path output) {
    JobConf job = new JobConf(conf);
    job.set("mapreduce.output.fileoutputformat.outputdir", output.toString());
    job.setInt("mapreduce.fileoutputcommitter.algorithm.version", 1);
    return job;
  }

  private void runTasks(JobConf job, JobID id, Path output, int tasks, int partitions)
      throws Exception {
    java.util.concurrent.ExecutorService threads =
        java.util.concurrent.Executors.newFixedThreadPool(2);
    try {
      List<java.util.concurrent.Future<?>> running = new ArrayList<>();
      for (int t = 0; t < tasks; t++) {
        int index = t;
        running.add(
            threads.submit(
                () -> {
                  TaskAttemptContext task =
                      new TaskAttemptContextImpl(
                          job, new TaskAttemptID(new TaskID(id, TaskType.MAP, index), 0));
                  FileOutputCommitter committer = new FileOutputCommitter(output, task);
                  committer.setupTask(task);
                  for (int p = 0; p < Math.max(1, partitions); p++) {
                    String name = "part-" + index + ".parquet";
                    Path path =
                        new Path(
                            committer.getWorkPath(),
                            partitions == 0 ? name : String.format("p=%02d/%s", p, name));
                    FileSystem fs = path.getFileSystem(job);
                    try (FSDataOutputStream out = fs.create(path, false)) {
                      out.write(path.getName().getBytes(StandardCharsets.UTF_8));
                    }
                  }
                  committer.commitTask(task);
                  return null;
                }));
      }
      for (java.util.concurrent.Future<?> task : running) {
        task.get();
      }
    } finally {
      threads.shutdownNow();
    }
  }

  /** The LISTs of the job commit of {@code tasks} tasks, each writing one file per partition. */
  private long listsOfJobCommit(int tasks, int partitions) throws Exception {
    Path output = new Path("s3a://" + BUCKET + "/out");
    JobConf job = job(output);
    JobID id = new JobID("202611260000", 1);
    JobContext context = new JobContextImpl(job, id);
    FileOutputCommitter committer = new FileOutputCommitter(output, context);
    committer.setupJob(context);
    runTasks(job, id, output, tasks, partitions);
    trace.clear();
    committer.commitJob(context);
    Map<String, Long> counts = new TreeMap<>();
    for (String request : trace) {
      counts.merge(request.substring(0, request.indexOf(' ')), 1L, Long::sum);
    }
    return counts.getOrDefault("ListObjectsV2", 0L);
  }

  /** 1,100 tasks of one file: the job attempt holds ~1,100 records, just above one page. */
  @Test
  void aJobAttemptJustAboveOnePageCostsAFewListsNotOnePerTask() throws Exception {
    long lists = listsOfJobCommit(1_100, 0);
    assertThat(store.objects(BUCKET, "out/")).hasSize(1_100 + 1);
    assertThat(lists).as("LISTs sent by the job commit of 1,100 one-file tasks").isLessThan(20);
  }

  static final int PARTITIONS = 20;
  static final int BIG = 1_001;

  /**
   * Appending to a table whose partitions hold more than a listing keeps (1,000 children): no
   * destination listing is ever kept, so each partition the merge enters lists its own destination
   * and every next one again: 2 LISTs (1,000 + 1 keys) per task and partition, 410 in all.
   */
  @Test
  void partitionsTooLargeToKeepAreNotListedAheadAgainAndAgain() throws Exception {
    store.createBucket(BUCKET);
    for (int p = 0; p < PARTITIONS; p++) {
      for (int f = 0; f < BIG; f++) {
        store.putObject(BUCKET, String.format("out/p=%02d/old-%04d.parquet", p, f), new byte[1]);
      }
    }
    int tasks = 4;
    // A window long enough that the merge's pace never limits the listings ahead.
    conf.set(ShimConfig.LISTING_WINDOW, "60s");
    long lists = listsOfJobCommit(tasks, PARTITIONS);
    assertThat(store.objects(BUCKET, "out/p=07/")).hasSize(BIG + tasks);
    assertThat(lists)
        .as("LISTs of a job commit of %d tasks x %d partitions", tasks, PARTITIONS)
        .isLessThanOrEqualTo(410L);
  }
}
