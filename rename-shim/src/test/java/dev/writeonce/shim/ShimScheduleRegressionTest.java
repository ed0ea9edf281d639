package dev.writeonce.shim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.testing.s3.MemoryS3;
import dev.writeonce.core.testing.s3.MemoryS3ClientFactory;
import dev.writeonce.core.testing.s3.MemoryS3Settings;
import dev.writeonce.core.testing.s3.RequestHook;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
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
 * Schedules the shim simulation found breaking an invariant, shrunk to the calls that matter and
 * kept as they were found. Each drives Hadoop's real FileOutputCommitter over the real shim on the
 * real S3A, against the in-memory store.
 */
class ShimScheduleRegressionTest {

  private static final String BUCKET = "bucket";
  private static final Path OUT = new Path("s3a://" + BUCKET + "/out");

  private final MemoryS3 store = new MemoryS3();
  private String driverEndpoint;
  private String executorEndpoint;

  @BeforeEach
  void start() {
    store.setMinimumPartSize(0);
    // Two endpoints of one store: two processes, each with its own state of the bucket.
    driverEndpoint = MemoryS3ClientFactory.register(store, RequestHook.NONE);
    executorEndpoint = MemoryS3ClientFactory.register(store, RequestHook.NONE);
  }

  @AfterEach
  void stop() throws IOException {
    FileSystem.closeAll();
    MemoryS3ClientFactory.unregister(driverEndpoint);
    MemoryS3ClientFactory.unregister(executorEndpoint);
  }

  private static JobConf jobConf(String endpoint) {
    Configuration conf = MemoryS3Settings.s3aConfiguration(endpoint);
    conf.set("fs.s3a.impl", RenameShimFileSystem.class.getName());
    conf.setBoolean("fs.s3a.impl.disable.cache", true);
    JobConf job = new JobConf(conf);
    job.set("mapreduce.output.fileoutputformat.outputdir", OUT.toString());
    job.setInt("mapreduce.fileoutputcommitter.algorithm.version", 1);
    return job;
  }

  /**
   * Seed 5052 (a dynamic partition overwrite, shrunk to a plain v1 job). A reader in the driver
   * lists the job attempt directory while the tasks still run; an executor then commits a task. The
   * job commit lists the same directory within the listing window and must see that task.
   */
  @Test
  void aJobCommitSeesATaskCommittedElsewhereAfterAReaderListedItsJobAttempt() throws Exception {
    JobConf driver = jobConf(driverEndpoint);
    JobID id = new JobID("202611260000", 1);
    JobContext job = new JobContextImpl(driver, id);
    FileOutputCommitter jobCommitter = new FileOutputCommitter(OUT, job);
    jobCommitter.setupJob(job);
    Path jobAttempt = new Path(OUT, "_temporary/0");
    FileSystem driverFs = jobAttempt.getFileSystem(driver);
    assertThat(driverFs.listStatus(jobAttempt)).as("no task committed yet").isEmpty();

    JobConf executor = jobConf(executorEndpoint);
    TaskAttemptContext task =
        new TaskAttemptContextImpl(executor, new TaskAttemptID(new TaskID(id, TaskType.MAP, 0), 0));
    FileOutputCommitter taskCommitter = new FileOutputCommitter(OUT, task);
    taskCommitter.setupTask(task);
    Path file = new Path(taskCommitter.getWorkPath(), "part-0");
    try (FSDataOutputStream out = file.getFileSystem(executor).create(file, true)) {
      out.write("rows of task 0".getBytes(StandardCharsets.UTF_8));
    }
    taskCommitter.commitTask(task);

    jobCommitter.commitJob(job);

    assertThat(store.getObject(BUCKET, "out/part-0"))
        .as("the task committed in the executor is in the output")
        .isPresent();
    assertThat(store.getObject(BUCKET, "out/_SUCCESS")).isPresent();
    assertThat(store.objects(BUCKET, "out/_temporary/")).isEmpty();
    assertThat(store.openUploads(BUCKET)).isEmpty();
  }

  /**
   * Seed 120 (Spark's insert into a Hive table, shrunk to one task). FileOutputCommitter writes
   * into Hive's staging directory and Hive's client moves the files into the table. Each file must
   * land by the completion of its upload, with nothing but the files left in the table.
   */
  @Test
  void aFileOutputCommitterWritingIntoHivesStagingLandsEachFileByItsCompletion() throws Exception {
    JobConf job = jobConf(driverEndpoint);
    Path staging = new Path("s3a://" + BUCKET + "/t/.hive-staging_hive_1/-ext-10000");
    job.set("mapreduce.output.fileoutputformat.outputdir", staging.toString());
    JobID id = new JobID("202611260000", 2);
    JobContext context = new JobContextImpl(job, id);
    FileOutputCommitter jobCommitter = new FileOutputCommitter(staging, context);
    jobCommitter.setupJob(context);
    TaskAttemptContext task =
        new TaskAttemptContextImpl(job, new TaskAttemptID(new TaskID(id, TaskType.MAP, 0), 0));
    FileOutputCommitter taskCommitter = new FileOutputCommitter(staging, task);
    taskCommitter.setupTask(task);
    Path file = new Path(taskCommitter.getWorkPath(), "day=1/part-0");
    FileSystem fs = file.getFileSystem(job);
    try (FSDataOutputStream out = fs.create(file, true)) {
      out.write("rows of task 0".getBytes(StandardCharsets.UTF_8));
    }
    taskCommitter.commitTask(task);
    jobCommitter.commitJob(context);

    // Hive's move: every file but the hidden ones, to the same path below the table.
    for (var files = fs.listFiles(staging, true); files.hasNext(); ) {
      Path staged = files.next().getPath();
      if (!staged.getName().startsWith("_")) {
        String below = staged.toUri().getPath().substring(staging.toUri().getPath().length() + 1);
        assertThat(fs.rename(staged, new Path("s3a://" + BUCKET + "/t/" + below))).isTrue();
      }
    }
    fs.delete(staging.getParent(), true);

    assertThat(store.objects(BUCKET, "t/").keySet()).containsExactly("t/day=1/part-0");
    assertThat(store.requestCount("CopyObject")).as("completed where predicted").isZero();
    assertThat(store.openUploads(BUCKET)).isEmpty();
  }
}
