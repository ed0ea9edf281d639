package dev.writeonce.shim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.store.check.StoreTrust;
import dev.writeonce.core.testing.s3.MemoryS3;
import dev.writeonce.core.testing.s3.MemoryS3ClientFactory;
import dev.writeonce.core.testing.s3.MemoryS3Settings;
import dev.writeonce.core.upload.UploadPool;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;
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
 * A task attempt that runs again under the same id after it committed (a stage retry numbering its
 * attempts from 0 again): FileOutputCommitter v1's second task commit deletes the committed task's
 * directory, whose records have twins at the attempt's paths, where the second run wrote its own
 * files' records. The simulation's schedules with a rerun (seed 94) lost those files: the delete
 * took the new records for twins.
 */
class TaskAttemptRunAgainTest {

  private static final String PROCESS = "attempt-run-again";

  private final MemoryS3 store = new MemoryS3();
  private final String endpoint =
      MemoryS3ClientFactory.register(
          store, request -> dev.writeonce.core.testing.s3.Handling.PROCEED);

  @AfterEach
  void tearDown() throws Exception {
    for (SimulatedShimFileSystem instance : SimulatedShimFileSystem.unregister(PROCESS)) {
      instance.close();
    }
    MemoryS3ClientFactory.unregister(endpoint);
  }

  private Configuration conf(int pageSize) {
    store.setMinimumPartSize(0);
    store.createBucket("b");
    SimulatedShimFileSystem.register(
        PROCESS,
        System::nanoTime,
        System::currentTimeMillis,
        (owner, threads) -> new UploadPool(owner, threads),
        (kind, keys) -> {},
        pageSize);
    Configuration conf = new Configuration(false);
    MemoryS3Settings.apply(conf, endpoint);
    conf.set("fs.s3a.impl", SimulatedShimFileSystem.class.getName());
    conf.set(SimulatedShimFileSystem.PROCESS, PROCESS);
    conf.setBoolean(StoreTrust.CHECK, false);
    conf.setBoolean("fs.s3a.impl.disable.cache", true);
    conf.setInt(FileOutputCommitter.FILEOUTPUTCOMMITTER_ALGORITHM_VERSION, 1);
    return conf;
  }

  /** Runs one attempt of a map task writing {@code files} files; returns what it wrote. */
  private Map<String, String> runAttempt(
      Configuration conf, Path output, int task, int attempt, int files, String run)
      throws Exception {
    TaskAttemptContext context =
        new TaskAttemptContextImpl(
            conf, new TaskAttemptID("20261129", 1, TaskType.MAP, task, attempt));
    FileOutputCommitter committer = new FileOutputCommitter(output, context);
    committer.setupTask(context);
    FileSystem fs = committer.getWorkPath().getFileSystem(conf);
    Map<String, String> written = new TreeMap<>();
    for (int f = 0; f < files; f++) {
      String name = "p=" + (f % 2) + "/part-" + task + "-" + f;
      String content = run + " " + name;
      try (FSDataOutputStream out = fs.create(new Path(committer.getWorkPath(), name), true)) {
        out.write(content.getBytes(StandardCharsets.UTF_8));
      }
      written.put("t/" + name, content);
    }
    committer.commitTask(context);
    return written;
  }

  private void theRerunsFilesAreAllCommitted(int pageSize) throws Exception {
    Configuration conf = conf(pageSize);
    Path output = new Path("s3a://b/t");
    JobContext job = new JobContextImpl(conf, new JobID("20261129", 1));
    FileOutputCommitter committer = new FileOutputCommitter(output, job);
    committer.setupJob(job);
    Map<String, String> expected = new TreeMap<>();
    for (int task = 0; task < 10; task++) {
      expected.putAll(runAttempt(conf, output, task, 0, 1, "first"));
    }
    expected.putAll(runAttempt(conf, output, 7, 0, 3, "again"));

    committer.commitJob(job);

    Map<String, String> found = new TreeMap<>();
    for (String key : store.keys("b")) {
      if (key.contains("/part-")) {
        found.put(key, new String(store.getObject("b", key).orElseThrow(), StandardCharsets.UTF_8));
      }
    }
    assertThat(found).isEqualTo(expected);
    assertThat(store.openUploads("b")).isEmpty();
  }

  @Test
  void aTaskAttemptRunAgainUnderItsIdHasEveryFileOfItsSecondRunCommitted() throws Exception {
    theRerunsFilesAreAllCommitted(-1);
  }

  @Test
  void theSameWhenTheJobAttemptIsListedInGroupsOfTasks() throws Exception {
    theRerunsFilesAreAllCommitted(2);
  }
}
