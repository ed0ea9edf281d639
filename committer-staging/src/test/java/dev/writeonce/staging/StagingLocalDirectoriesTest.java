package dev.writeonce.staging;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.committer.ConflictPolicy;
import dev.writeonce.core.committer.MultipartOutputCommitter;
import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.TaskManifest;
import dev.writeonce.core.testing.InMemoryStore;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Local staging directories are named by what is unique to a run, not by Hadoop's job and attempt
 * ids, which two Spark writes started in the same second at the same stage share.
 */
class StagingLocalDirectoriesTest {

  private static final org.apache.hadoop.fs.Path OUT =
      new org.apache.hadoop.fs.Path("s3a://bucket/table");

  @TempDir Path staging;

  private final InMemoryStore store = new InMemoryStore("bucket", System.currentTimeMillis());

  /** A task of a Spark write: Hadoop ids from the second and the stage, records by write id. */
  private TaskAttemptContext sparkTask(String writeId) {
    Configuration conf = new Configuration(false);
    conf.set(CommitterConfig.STAGING_DIR, staging.toString());
    conf.set(CommitterConfig.UPLOAD_ON_CLOSE, "false");
    conf.set(MultipartOutputCommitter.RECORDS_JOB_ID, writeId);
    conf.set(MultipartOutputCommitter.SPARK_WRITE_JOB_UUID, writeId);
    return new TaskAttemptContextImpl(
        conf, new TaskAttemptID("20261125184501", 3, TaskType.MAP, 0, 0));
  }

  private StagingCommitter committer(TaskAttemptContext context) throws Exception {
    return new StagingCommitter(
        "directory", OUT, context, ConflictPolicy.directory(), (path, c) -> store);
  }

  private static void write(StagingCommitter committer, String name, String content)
      throws Exception {
    org.apache.hadoop.fs.Path path = new org.apache.hadoop.fs.Path(committer.getWorkPath(), name);
    FileSystem fs = path.getFileSystem(new Configuration());
    try (FSDataOutputStream out = fs.create(path, true)) {
      out.write(content.getBytes(StandardCharsets.UTF_8));
    }
  }

  @Test
  void twoSparkWritesWithEqualHadoopIdsOnOneHostKeepTheirFilesApart() throws Exception {
    TaskAttemptContext first = sparkTask("write-1111");
    TaskAttemptContext second = sparkTask("write-2222");
    StagingCommitter firstCommitter = committer(first);
    StagingCommitter secondCommitter = committer(second);
    firstCommitter.setupTask(first);
    secondCommitter.setupTask(second);
    write(firstCommitter, "part-00000-a.parquet", "rows of the first write");
    write(secondCommitter, "part-00000-b.parquet", "rows of the second write");

    assertThat(firstCommitter.getWorkPath()).isNotEqualTo(secondCommitter.getWorkPath());
    TaskManifest manifest = firstCommitter.commitTaskToManifest(first);

    assertThat(manifest.uploads())
        .extracting(PendingUpload::key)
        .containsExactly("table/part-00000-a.parquet");
    TaskManifest other = secondCommitter.commitTaskToManifest(second);
    assertThat(other.uploads())
        .extracting(PendingUpload::key)
        .containsExactly("table/part-00000-b.parquet");
  }
}
