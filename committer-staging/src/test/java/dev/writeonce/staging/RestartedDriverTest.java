package dev.writeonce.staging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.committer.ConflictPolicy;
import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.engine.JobCommitEngine;
import dev.writeonce.core.engine.JobLayout;
import dev.writeonce.core.errors.CommitConflictException;
import dev.writeonce.core.errors.ErrorKind;
import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.testing.ForwardingStore;
import dev.writeonce.core.testing.InMemoryStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.task.JobContextImpl;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A restarted MapReduce application master (application attempt id above 0) sets the job up again
 * under the same job id, with a new run id, while its earlier attempt is dead.
 */
class RestartedDriverTest {

  private static final org.apache.hadoop.fs.Path OUT =
      new org.apache.hadoop.fs.Path("s3a://bucket/table");
  private static final Destination DEST = Destination.of("s3a://bucket/table/");

  @TempDir Path staging;

  private final InMemoryStore memory = new InMemoryStore("bucket", System.currentTimeMillis());

  /** The manifest PUT of the first attempt, held back in flight: it lands when the test says. */
  private byte[] manifestInFlight;

  private final ForwardingStore store =
      new ForwardingStore(memory) {
        @Override
        public String putObject(String key, byte[] data, boolean ifNoneMatch)
            throws StoreException {
          if (holdManifest && key.endsWith("/manifest.json") && manifestInFlight == null) {
            manifestInFlight = data;
            throw new StoreException(ErrorKind.TRANSIENT, 0, "connection reset", null);
          }
          return super.putObject(key, data, ifNoneMatch);
        }
      };

  private boolean holdManifest;
  private final JobID jobId = new JobID("20261125", 9);

  @BeforeEach
  void setUp() {}

  private Configuration conf(int applicationAttempt) {
    Configuration conf = new Configuration(false);
    conf.set(CommitterConfig.STAGING_DIR, staging.toString());
    conf.set(CommitterConfig.CONFLICT_MODE, "append");
    conf.setInt("mapreduce.job.application.attempt.id", applicationAttempt);
    return conf;
  }

  private StagingCommitter committer(JobContext context) throws IOException {
    return new StagingCommitter(
        "directory", OUT, context, ConflictPolicy.directory(), (path, c) -> store);
  }

  private void runTask(Configuration conf, int task) throws IOException {
    TaskAttemptContext context =
        new TaskAttemptContextImpl(
            conf, new TaskAttemptID(jobId.getJtIdentifier(), jobId.getId(), TaskType.MAP, task, 0));
    StagingCommitter committer = committer(context);
    committer.setupTask(context);
    Path file = Path.of(committer.getWorkPath().toUri().getPath()).resolve("part-m-0000" + task);
    Files.createDirectories(file.getParent());
    Files.writeString(file, "rows of task " + task);
    committer.commitTask(context);
  }

  private String jobRecordKey() {
    return new JobLayout(DEST).jobRecordKey(jobId.toString());
  }

  private String manifestKey() {
    return new JobLayout(DEST).jobManifestKey(jobId.toString());
  }

  @Test
  void aRestartAfterTheEarlierAttemptBeganCommittingKeepsTheFenceSoItsLateManifestNeverLands()
      throws Exception {
    JobContext first = new JobContextImpl(conf(0), jobId);
    committer(first).setupJob(first);
    runTask(first.getConfiguration(), 0);
    holdManifest = true;
    assertThatThrownBy(() -> committer(first).commitJob(first)).isInstanceOf(IOException.class);
    assertThat(manifestInFlight).as("the first attempt's manifest write is in flight").isNotNull();

    JobContext restarted = new JobContextImpl(conf(1), jobId);
    assertThatThrownBy(() -> committer(restarted).setupJob(restarted))
        .isInstanceOf(CommitConflictException.class)
        .hasMessageContaining("was committing in an earlier attempt");

    // The first attempt's manifest write arrives now: the fence refuses it.
    assertThatThrownBy(() -> memory.putObject(manifestKey(), manifestInFlight, true))
        .isInstanceOfSatisfying(
            StoreException.class, e -> assertThat(e.is(ErrorKind.PRECONDITION_FAILED)).isTrue());
    assertThat(memory.openUploadIds()).isEmpty();
    assertThat(memory.keys()).doesNotContain("table/part-m-00000", jobRecordKey());
  }

  @Test
  void aRestartWhoseEarlierAttemptNeverBeganCommittingTakesTheJobOverAndCommitsIt()
      throws Exception {
    JobContext first = new JobContextImpl(conf(0), jobId);
    committer(first).setupJob(first);
    runTask(first.getConfiguration(), 0);

    JobContext restarted = new JobContextImpl(conf(1), jobId);
    committer(restarted).setupJob(restarted);
    runTask(restarted.getConfiguration(), 0);
    runTask(restarted.getConfiguration(), 1);
    committer(restarted).commitJob(restarted);

    assertThat(memory.keys()).contains("table/part-m-00000", "table/part-m-00001");
    assertThat(memory.openUploadIds()).isEmpty();
    assertThat(memory.keys()).noneMatch(k -> k.contains("_writeonce/"));
  }

  @Test
  void aRestartOfAJobThatAnotherProcessAbortedIsRefusedAndLeavesNoRecordBesideTheFence()
      throws Exception {
    JobContext first = new JobContextImpl(conf(0), jobId);
    committer(first).setupJob(first);
    runTask(first.getConfiguration(), 0);
    // An operator's recover aborts the job: its fence stands for the retention.
    new JobCommitEngine(store, CommitterConfig.from(conf(0)), DEST)
        .abort(jobId.toString(), java.util.List.of());

    JobContext restarted = new JobContextImpl(conf(1), jobId);
    assertThatThrownBy(() -> committer(restarted).setupJob(restarted))
        .isInstanceOf(CommitConflictException.class)
        .hasMessageContaining("abort fence stands");

    assertThat(memory.keys()).containsExactly(manifestKey());
    assertThat(memory.openUploadIds()).isEmpty();
  }
}
