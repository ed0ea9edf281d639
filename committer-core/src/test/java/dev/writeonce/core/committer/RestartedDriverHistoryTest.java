package dev.writeonce.core.committer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.engine.JobCommitEngine;
import dev.writeonce.core.engine.JobLayout;
import dev.writeonce.core.engine.JobRecords;
import dev.writeonce.core.errors.JobAlreadyFinishedException;
import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.json.SuccessDataFormat;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.model.FinishedJob;
import dev.writeonce.core.model.SuccessData;
import dev.writeonce.core.simulation.SimCommitter;
import dev.writeonce.core.store.PeekedObject;
import dev.writeonce.core.store.RequestType;
import dev.writeonce.core.testing.ForwardingStore;
import dev.writeonce.core.testing.InMemoryStore;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.task.JobContextImpl;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A restarted MapReduce application master whose job's records are gone learns from {@code
 * _SUCCESS} that its earlier attempt's job finished, also once a later job's {@code _SUCCESS} names
 * the later job: the job is then among the earlier jobs it names.
 */
class RestartedDriverHistoryTest {

  private static final Path OUT = new Path("s3a://bucket/table");
  private static final Destination DEST = Destination.of("s3a://bucket/table/");
  private static final String SUCCESS = "table/_SUCCESS";

  private final InMemoryStore memory = new InMemoryStore("bucket", System.currentTimeMillis());
  private final SimCommitter.LocalFiles files = new SimCommitter.LocalFiles();

  /** The earlier attempt's driver dies at its read of _SUCCESS, after every completion. */
  private static final class DriverDied extends RuntimeException {
    private static final long serialVersionUID = 1L;

    DriverDied() {
      super("the driver died", null, false, false);
    }
  }

  private final ForwardingStore dyingDriver =
      new ForwardingStore(memory) {
        private boolean dead;

        @Override
        public Optional<PeekedObject> peekObject(
            String key, int headBytes, Predicate<byte[]> wanted) throws StoreException {
          dead |= key.equals(SUCCESS);
          if (dead) {
            throw new DriverDied();
          }
          return super.peekObject(key, headBytes, wanted);
        }
      };

  @AfterEach
  void stopLeases() {
    JobRecords.releaseEveryLeaseOfThisProcess();
  }

  private static Configuration conf(int applicationAttempt) {
    Configuration conf = new Configuration(false);
    conf.set(CommitterConfig.CONFLICT_MODE, "append");
    conf.setInt(CommitterConfig.COMMIT_THREADS, 1);
    conf.setInt("mapreduce.job.application.attempt.id", applicationAttempt);
    return conf;
  }

  private SimCommitter committer(JobContext context, dev.writeonce.core.store.StoreGateway store)
      throws Exception {
    return new SimCommitter(OUT, context, store, files);
  }

  /** Sets a job up, commits one task per file name, and returns its context for the commit. */
  private JobContext setUpAndRunTasks(
      JobID jobId,
      int applicationAttempt,
      dev.writeonce.core.store.StoreGateway driver,
      String... names)
      throws Exception {
    JobContext job = new JobContextImpl(conf(applicationAttempt), jobId);
    committer(job, driver).setupJob(job);
    for (int t = 0; t < names.length; t++) {
      TaskAttemptID attempt =
          new TaskAttemptID(
              jobId.getJtIdentifier(), jobId.getId(), TaskType.MAP, t, applicationAttempt);
      TaskAttemptContext task = new TaskAttemptContextImpl(job.getConfiguration(), attempt);
      SimCommitter taskCommitter = committer(task, memory);
      taskCommitter.setupTask(task);
      files.byAttempt.put(
          attempt.toString(),
          Map.of(names[t], ("rows of " + names[t]).getBytes(StandardCharsets.UTF_8)));
      taskCommitter.commitTask(task);
    }
    return job;
  }

  private SuccessData success() throws Exception {
    return SuccessDataFormat.fromJson(memory.content(SUCCESS), SUCCESS);
  }

  @Test
  void aRestartWhoseJobIsOnlyInTheHistoryIsRefusedAsFinishedAndCompletesNothingTwice()
      throws Exception {
    JobID finishedElsewhere = new JobID("20261126", 1);
    JobContext first = setUpAndRunTasks(finishedElsewhere, 0, dyingDriver, "part-m-00000");
    assertThatThrownBy(() -> committer(first, dyingDriver).commitJob(first))
        .isInstanceOf(DriverDied.class);
    assertThat(memory.keys())
        .as("committed, its files completed, no _SUCCESS yet")
        .contains(new JobLayout(DEST).jobManifestKey(finishedElsewhere.toString()))
        .contains("table/part-m-00000")
        .doesNotContain(SUCCESS);

    // An operator's recover finishes the job and removes its records; a later job then finishes.
    new JobCommitEngine(memory, CommitterConfig.from(conf(0)), DEST)
        .resume(finishedElsewhere.toString());
    JobID later = new JobID("20261126", 2);
    JobContext next = setUpAndRunTasks(later, 0, memory, "part-m-00001");
    committer(next, memory).commitJob(next);
    assertThat(success().jobId()).isEqualTo(later.toString());
    assertThat(success().finishedJobs())
        .extracting(FinishedJob::jobId)
        .containsExactly(finishedElsewhere.toString());
    assertThat(memory.keys())
        .as("the output and _SUCCESS only")
        .containsExactlyInAnyOrder("table/part-m-00000", "table/part-m-00001", SUCCESS);
    List<String> before = memory.keys();
    byte[] successBefore = memory.content(SUCCESS);
    var sentBefore = memory.counters().snapshot();

    JobContext restarted = new JobContextImpl(conf(1), finishedElsewhere);
    assertThatThrownBy(() -> committer(restarted, memory).setupJob(restarted))
        .isInstanceOf(JobAlreadyFinishedException.class)
        .hasMessageContaining("earlier attempt");

    var sent = memory.counters().since(sentBefore);
    assertThat(sent.get(RequestType.COMPLETE_UPLOAD)).as("completions").isZero();
    assertThat(sent.get(RequestType.CREATE_UPLOAD)).isZero();
    assertThat(sent.get(RequestType.PUT_OBJECT)).isZero();
    assertThat(sent.get(RequestType.HEAD_OBJECT)).isZero();
    // One LIST finds no job's records; one GET of _SUCCESS tells; the job record and manifest
    // are read as the job is finished, and are gone.
    assertThat(sent.get(RequestType.LIST_OBJECTS)).isEqualTo(1);
    assertThat(sent.get(RequestType.GET_OBJECT)).isEqualTo(3);
    assertThat(memory.keys()).isEqualTo(before);
    assertThat(memory.content(SUCCESS)).isEqualTo(successBefore);
    assertThat(memory.openUploadIds()).isEmpty();
  }

  @Test
  void aRestartWhoseEarlierAttemptLeftARecordIsDecidedByThatRecordWhateverTheHistorySays()
      throws Exception {
    // A run of the job id finished long ago; a later job finished after it.
    JobID reused = new JobID("20261126", 7);
    JobContext earlierRun = setUpAndRunTasks(reused, 0, memory, "part-m-00000");
    committer(earlierRun, memory).commitJob(earlierRun);
    JobID later = new JobID("20261126", 8);
    JobContext next = setUpAndRunTasks(later, 0, memory, "part-m-00001");
    committer(next, memory).commitJob(next);
    assertThat(success().finishedJobs()).extracting(FinishedJob::jobId).contains(reused.toString());

    // A new run of the same job id dies before it commits; its restart takes the job over.
    setUpAndRunTasks(reused, 0, memory, "part-m-00002");
    JobContext restarted = setUpAndRunTasks(reused, 1, memory, "part-m-00002");
    committer(restarted, memory).commitJob(restarted);

    assertThat(memory.content("table/part-m-00002"))
        .isEqualTo("rows of part-m-00002".getBytes(StandardCharsets.UTF_8));
    assertThat(success().jobId()).isEqualTo(reused.toString());
    assertThat(success().finishedJobs())
        .extracting(FinishedJob::jobId)
        .containsExactly(later.toString());
    assertThat(memory.openUploadIds()).isEmpty();
    assertThat(memory.keys()).noneMatch(key -> key.contains("_writeonce/"));
  }
}
