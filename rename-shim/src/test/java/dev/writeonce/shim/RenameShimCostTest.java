package dev.writeonce.shim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.testing.s3.MemoryS3;
import dev.writeonce.core.testing.s3.MemoryS3ClientFactory;
import dev.writeonce.core.testing.s3.MemoryS3Settings;
import dev.writeonce.core.testing.s3.RequestHook;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
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
 * What FileOutputCommitter v1 costs through the shim, counted by the store: the request counts the
 * benchmarks rest on, pinned where they are deterministic.
 */
class RenameShimCostTest {

  private static final Path OUT = new Path("s3a://bucket/out");

  private final MemoryS3 store = new MemoryS3();
  private String endpoint;
  private JobConf job;

  @BeforeEach
  void start() {
    store.setMinimumPartSize(0);
    endpoint = MemoryS3ClientFactory.register(store, RequestHook.NONE);
    Configuration conf = MemoryS3Settings.s3aConfiguration(endpoint);
    conf.set("fs.s3a.impl", RenameShimFileSystem.class.getName());
    conf.setBoolean("fs.s3a.impl.disable.cache", false);
    job = new JobConf(conf);
    job.set("mapreduce.output.fileoutputformat.outputdir", OUT.toString());
    job.setInt("mapreduce.fileoutputcommitter.algorithm.version", 1);
  }

  @AfterEach
  void stop() throws IOException {
    FileSystem.closeAll();
    MemoryS3ClientFactory.unregister(endpoint);
  }

  private SortedMap<String, Long> since(SortedMap<String, Long> before) {
    SortedMap<String, Long> delta = new TreeMap<>();
    for (Map.Entry<String, Long> entry : store.requestCounts().entrySet()) {
      long count = entry.getValue() - before.getOrDefault(entry.getKey(), 0L);
      if (count > 0) {
        delta.put(entry.getKey(), count);
      }
    }
    return delta;
  }

  private List<String> commitTask(JobID id, int task, int files, String prefix) throws IOException {
    TaskAttemptContext context =
        new TaskAttemptContextImpl(job, new TaskAttemptID(new TaskID(id, TaskType.MAP, task), 0));
    FileOutputCommitter committer = new FileOutputCommitter(OUT, context);
    committer.setupTask(context);
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < files; i++) {
      String name = prefix + "part-" + task + "-" + i;
      Path path = new Path(committer.getWorkPath(), name);
      try (FSDataOutputStream out = path.getFileSystem(job).create(path, true)) {
        out.write(name.getBytes(StandardCharsets.UTF_8));
      }
      keys.add("out/" + name);
    }
    committer.commitTask(context);
    return keys;
  }

  @Test
  void aJobCommitCompletesEveryFileOnceAndDeletesTheRecordsInBulk() throws Exception {
    JobID id = new JobID("202611260000", 1);
    JobContext context = new JobContextImpl(job, id);
    FileOutputCommitter committer = new FileOutputCommitter(OUT, context);
    committer.setupJob(context);
    List<String> keys = new ArrayList<>(commitTask(id, 0, 20, ""));
    keys.addAll(commitTask(id, 1, 20, "p=1/"));
    RenameShimFileSystem fs = (RenameShimFileSystem) OUT.getFileSystem(job);
    long queuedBefore = fs.shimStatistics().completionsQueued();
    SortedMap<String, Long> before = store.requestCounts();

    committer.commitJob(context);

    SortedMap<String, Long> commit = since(before);
    assertThat(fs.shimStatistics().completionsQueued() - queuedBefore).isEqualTo(keys.size());
    assertThat(commit.get("CompleteMultipartUpload")).isEqualTo(keys.size());
    assertThat(commit.get("DeleteObjects"))
        .as("the records in one DeleteObjects, the cleanup's in another: %s", commit)
        .isLessThanOrEqualTo(2);
    assertThat(commit.getOrDefault("CopyObject", 0L)).isZero();
    assertThat(commit.getOrDefault("HeadObject", 0L) + commit.getOrDefault("ListObjectsV2", 0L))
        .as("checks per job, not per file: %s", commit)
        .isLessThanOrEqualTo(8);
    for (String key : keys) {
      assertThat(store.getObject("bucket", key)).isPresent();
    }
    assertThat(store.objects("bucket", "out/_temporary/")).isEmpty();
    assertThat(store.openUploads("bucket")).isEmpty();
  }

  @Test
  void aTaskCommitMovesEachRecordWithOnePutAndChecksOnlyTheCommittedTasksPath() throws Exception {
    JobID id = new JobID("202611260000", 2);
    JobContext context = new JobContextImpl(job, id);
    new FileOutputCommitter(OUT, context).setupJob(context);
    TaskAttemptContext task =
        new TaskAttemptContextImpl(job, new TaskAttemptID(new TaskID(id, TaskType.MAP, 0), 0));
    FileOutputCommitter committer = new FileOutputCommitter(OUT, task);
    for (int i = 0; i < 5; i++) {
      Path path = new Path(committer.getWorkPath(), "part-" + i);
      try (FSDataOutputStream out = path.getFileSystem(job).create(path, true)) {
        out.write(1);
      }
    }
    SortedMap<String, Long> before = store.requestCounts();

    committer.commitTask(task);

    SortedMap<String, Long> commit = since(before);
    assertThat(commit.get("PutObject")).as("%s", commit).isEqualTo(5);
    assertThat(commit.getOrDefault("GetObject", 0L)).as("records known to this JVM").isZero();
    // The records' PUTs and one LIST: FileOutputCommitter's check of the committed task's path.
    // The attempt's files are known from the records this JVM wrote; their old copies stay until
    // the job commit deletes them with the records.
    assertThat(commit.values().stream().mapToLong(Long::longValue).sum())
        .as("%s", commit)
        .isEqualTo(5 + 1);
    assertThat(commit.get("ListObjectsV2")).isEqualTo(1);
  }
}
