package dev.writeonce.staging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.committer.ConflictPolicy;
import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.testing.InMemoryStore;
import java.io.File;
import java.io.IOException;
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
 * where Java turns such characters in local file names into '?': the encoding work path keeps them
 * exact, and the default {@code file:} one refuses to commit what it may have lost.
 */
class StagingCommitterLocaleTest {

  private static final boolean C_LOCALE = Boolean.getBoolean("writeonce.test.c-locale");

  @TempDir Path staging;

  private static final org.apache.hadoop.fs.Path OUT =
      new org.apache.hadoop.fs.Path("s3a://bucket/table");

  /** A job set up over the store, and its first task attempt set up. */
  private record Run(
      JobContext job, TaskAttemptContext attempt, StagingCommitter committer, InMemoryStore store) {
    void commitJob() throws java.io.IOException {
      new StagingCommitter("directory", OUT, job, ConflictPolicy.directory(), (p, c) -> store)
          .commitJob(job);
    }
  }

  private static Run setUpJobAndTask(InMemoryStore memory, Configuration conf, JobID id)
      throws java.io.IOException {
    JobContext job = new JobContextImpl(conf, id);
    new StagingCommitter("directory", OUT, job, ConflictPolicy.directory(), (p, c) -> memory)
        .setupJob(job);
    TaskAttemptContext attempt =
        new TaskAttemptContextImpl(
            conf, new TaskAttemptID(id.getJtIdentifier(), id.getId(), TaskType.MAP, 0, 0));
    StagingCommitter committer =
        new StagingCommitter(
            "directory", OUT, attempt, ConflictPolicy.directory(), (p, c) -> memory);
    committer.setupTask(attempt);
    return new Run(job, attempt, committer, memory);
  }

  @Test
  void onTheEncodingWorkPathPartitionNamesOutsideAsciiBecomeExactKeysWhateverTheLocale()
      throws Exception {
    InMemoryStore memory = new InMemoryStore("bucket", System.currentTimeMillis());
    Configuration conf = new Configuration(false);
    conf.set(CommitterConfig.STAGING_DIR, staging.toString());
    conf.set(CommitterConfig.STAGING_WORK_SCHEME, StagingLocalFileSystem.SCHEME);
    Run run = setUpJobAndTask(memory, conf, new JobID("20261123", 11));
    TaskAttemptContext attempt = run.attempt();
    StagingCommitter committer = run.committer();

    // Written as engines write: through the filesystem of the committer's work path, opened with
    // the task's configuration, where the committer registered it (no service file names it).
    assertThat(committer.getWorkPath().toUri().getScheme())
        .isEqualTo(StagingLocalFileSystem.SCHEME);
    FileSystem fs = committer.getWorkPath().getFileSystem(attempt.getConfiguration());
    List<String> partitions = List.of("p=日本", "p=中国", "p=café", "p=100%", "p=a b");
    for (String partition : partitions) {
      org.apache.hadoop.fs.Path file =
          new org.apache.hadoop.fs.Path(committer.getWorkPath(), partition + "/part-00000");
      try (FSDataOutputStream stream = fs.create(file, false)) {
        stream.write(partition.getBytes(StandardCharsets.UTF_8));
      }
    }
    committer.commitTask(attempt);
    run.commitJob();

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

  @Test
  void onTheDefaultFileWorkPathNamesTheLocaleCannotHoldFailTheTaskCommitAndUploadNothing()
      throws Exception {
    InMemoryStore memory = new InMemoryStore("bucket", System.currentTimeMillis());
    Configuration conf = new Configuration(false);
    conf.set(CommitterConfig.STAGING_DIR, staging.toString());
    Run run = setUpJobAndTask(memory, conf, new JobID("20261125", 12));
    TaskAttemptContext attempt = run.attempt();
    StagingCommitter committer = run.committer();

    // Hadoop's contract: the work path is on the local filesystem, so getLocal opens it.
    assertThat(committer.getWorkPath().toUri().getScheme()).isEqualTo("file");
    FileSystem fs = FileSystem.getLocal(conf);
    List<String> partitions = List.of("p=日本", "p=中国");
    for (int i = 0; i < partitions.size(); i++) {
      org.apache.hadoop.fs.Path file =
          new org.apache.hadoop.fs.Path(
              committer.getWorkPath(), partitions.get(i) + "/part-0000" + i);
      try (FSDataOutputStream stream = fs.create(file, false)) {
        stream.write(partitions.get(i).getBytes(StandardCharsets.UTF_8));
      }
    }

    if (C_LOCALE) {
      assertThatThrownBy(() -> committer.commitTask(attempt))
          .isInstanceOf(IOException.class)
          .hasMessageContaining("LANG=C.UTF-8")
          .hasMessageContaining(CommitterConfig.STAGING_WORK_SCHEME + "=writeonce-staging");
      assertThat(memory.openUploadIds()).isEmpty();
      assertThat(memory.keys().stream().filter(k -> k.contains("part-"))).isEmpty();
      return;
    }
    committer.commitTask(attempt);
    run.commitJob();
    for (int i = 0; i < partitions.size(); i++) {
      byte[] content = memory.content("table/" + partitions.get(i) + "/part-0000" + i);
      assertThat(new String(content, StandardCharsets.UTF_8)).isEqualTo(partitions.get(i));
    }
  }

  @Test
  void underACharsetThatIsNotUnicodeAQuestionMarkInANameRefusesTheTasksFiles() {
    Path attemptDir = staging.resolve("attempt");
    List<Path> kept = List.of(attemptDir.resolve("p=a%3Fb/part-00000"));
    List<Path> lost = List.of(attemptDir.resolve("p=??/part-00000"));

    assertThatCode(
            () ->
                StagingCommitter.checkNamesKeptByTheLocale(
                    "attempt_1", attemptDir, kept, "ANSI_X3.4-1968"))
        .doesNotThrowAnyException();
    assertThatCode(
            () ->
                StagingCommitter.checkNamesKeptByTheLocale("attempt_1", attemptDir, lost, "UTF-8"))
        .doesNotThrowAnyException();
    assertThatThrownBy(
            () ->
                StagingCommitter.checkNamesKeptByTheLocale(
                    "attempt_1", attemptDir, lost, "ANSI_X3.4-1968"))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("attempt_1")
        .hasMessageContaining("p=??")
        .hasMessageContaining("ANSI_X3.4-1968");
  }
}
