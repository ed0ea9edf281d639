package dev.writeonce.staging;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.committer.ConflictPolicy;
import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.testing.InMemoryStore;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.task.JobContextImpl;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Non-ASCII partition names through the staging committer. The build runs this class a second time
 * in a JVM started with {@code LANG=C LC_ALL=C} (as many YARN containers and slim images run),
 * where Java turns such characters in local file names into '?'.
 */
class StagingCommitterLocaleTest {

  private static final boolean C_LOCALE = Boolean.getBoolean("writeonce.test.c-locale");

  @TempDir Path staging;

  @Test
  void partitionNamesOutsideAsciiBecomeExactKeysWhateverTheLocale() throws Exception {
    InMemoryStore memory = new InMemoryStore("bucket", System.currentTimeMillis());
    Configuration conf = new Configuration(false);
    conf.set(CommitterConfig.STAGING_DIR, staging.toString());
    JobID id = new JobID("20261123", 11);
    JobContext job = new JobContextImpl(conf, id);
    org.apache.hadoop.fs.Path out = new org.apache.hadoop.fs.Path("s3a://bucket/table");
    new StagingCommitter("directory", out, job, ConflictPolicy.directory(), (p, c) -> memory)
        .setupJob(job);
    TaskAttemptContext attempt =
        new TaskAttemptContextImpl(conf, new TaskAttemptID("20261123", 11, TaskType.MAP, 0, 0));
    StagingCommitter committer =
        new StagingCommitter(
            "directory", out, attempt, ConflictPolicy.directory(), (p, c) -> memory);
    committer.setupTask(attempt);

    // Written as engines write: through the filesystem of the committer's work path.
    FileSystem fs = committer.getWorkPath().getFileSystem(conf);
    List<String> partitions = List.of("p=日本", "p=中国", "p=café", "p=100%", "p=a b");
    for (String partition : partitions) {
      org.apache.hadoop.fs.Path file =
          new org.apache.hadoop.fs.Path(committer.getWorkPath(), partition + "/part-00000");
      try (FSDataOutputStream stream = fs.create(file, false)) {
        stream.write(partition.getBytes(StandardCharsets.UTF_8));
      }
    }
    committer.commitTask(attempt);
    new StagingCommitter("directory", out, job, ConflictPolicy.directory(), (p, c) -> memory)
        .commitJob(job);

    for (String partition : partitions) {
      byte[] content = memory.content("table/" + partition + "/part-00000");
      assertThat(content).as(partition).isNotNull();
      assertThat(new String(content, StandardCharsets.UTF_8)).isEqualTo(partition);
    }
    assertThat(memory.keys().stream().filter(k -> k.endsWith("/part-00000"))).hasSize(5);
  }

  @Test
  void theCLocaleRunReallyMapsNonAsciiFileNamesToQuestionMarks() throws Exception {
    if (!C_LOCALE) {
      // In a UTF-8 JVM, the plain file API keeps the names: nothing to show there.
      assertThat(System.getProperty("sun.jnu.encoding")).isNotNull();
      return;
    }
    // What the test above survives: the plain file API folds both names into one.
    assertThat(System.getProperty("sun.jnu.encoding")).isNotEqualToIgnoringCase("UTF-8");
    File first = new File(staging.toFile(), "p=日本");
    assertThat(first.mkdir()).isTrue();
    assertThat(new File(staging.toFile(), "p=中国").exists()).isTrue();
  }
}
