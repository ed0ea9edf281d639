package dev.writeonce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.errors.ErrorKind;
import dev.writeonce.core.errors.JobCommittedException;
import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.json.SuccessDataFormat;
import dev.writeonce.core.model.CommitStatistics;
import dev.writeonce.core.model.ConflictMode;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.model.FinishedJob;
import dev.writeonce.core.model.JobRecord;
import dev.writeonce.core.model.SuccessData;
import dev.writeonce.core.model.TaskManifest;
import dev.writeonce.core.store.PeekedObject;
import dev.writeonce.core.store.RequestType;
import dev.writeonce.core.store.StoreGateway;
import dev.writeonce.core.testing.FaultInjectingStore;
import dev.writeonce.core.testing.ForwardingStore;
import dev.writeonce.core.testing.InMemoryStore;
import dev.writeonce.core.testing.PendingUploads;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * {@code _SUCCESS} names the jobs that finished on its destination before its own, so that a
 * restarted driver learns its job finished once the job's records are gone: bounded, carried over
 * by every job whatever stood there before, and never losing an entry to a job that finished at the
 * same time.
 */
class SuccessMarkerHistoryTest {

  private static final Destination DEST = Destination.of("s3a://bucket/table/");
  private static final String SUCCESS = "table/_SUCCESS";

  private final InMemoryStore memory = new InMemoryStore("bucket", System.currentTimeMillis());

  private static CommitterConfig config() {
    return CommitterConfig.defaults().withCommitThreads(2).withConflictMode(ConflictMode.APPEND);
  }

  private static String job(int n) {
    return String.format(java.util.Locale.ROOT, "job_20261126_%04d", n);
  }

  /** Commits a job of one file through the engine on {@code store}, without a job record. */
  private CommitResult commit(StoreGateway store, String jobId) throws Exception {
    TaskManifest task =
        PendingUploads.task(store, jobId, "attempt_" + jobId + "_m_0", List.of(fileOf(jobId)));
    return new JobCommitEngine(store, config(), DEST)
        .commit(new JobCommitRequest(jobId, "test", ConflictMode.APPEND, List.of(task), List.of()));
  }

  /** Commits a job of one file as a driver does: with its record, whose run id is given. */
  private void commitWithRecord(String jobId, String runUuid) throws Exception {
    long now = memory.clockMillis();
    JobRecord record =
        new JobRecord(jobId, runUuid, DEST, JobRecord.State.RUNNING, "host", now, now, 600_000L);
    JobCommitEngine engine = new JobCommitEngine(memory, config(), DEST);
    engine.records().saveJobRecord(record, true);
    TaskManifest task =
        PendingUploads.task(memory, jobId, "attempt_" + jobId + "_m_0", List.of(fileOf(jobId)));
    engine.commit(
        new JobCommitRequest(jobId, "test", ConflictMode.APPEND, List.of(task), List.of(), record));
  }

  private static String fileOf(String jobId) {
    return DEST.keyOf("part-" + jobId);
  }

  /** A _SUCCESS that Hadoop's S3A magic committer wrote: readable, but not this library's. */
  private static String hadoopsOwnSuccess() throws Exception {
    try (var in =
        SuccessMarkerHistoryTest.class.getResourceAsStream("/golden/hadoop-success.json")) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  private SuccessData success() throws Exception {
    return SuccessDataFormat.fromJson(memory.content(SUCCESS), SUCCESS);
  }

  private List<String> history() throws Exception {
    return success().finishedJobs().stream().map(FinishedJob::jobId).toList();
  }

  @Test
  void eachSuccessNamesTheEarlierJobsNewestFirstWithTheirRunIdsAndFinishTimes() throws Exception {
    commitWithRecord(job(1), "run-1");
    long firstFinished = success().timestamp();
    commitWithRecord(job(2), "run-2");
    commit(memory, job(3));

    SuccessData success = success();
    assertThat(success.jobId()).isEqualTo(job(3));
    assertThat(success.finishedJobs())
        .extracting(FinishedJob::jobId, FinishedJob::runUuid)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple(job(2), "run-2"),
            org.assertj.core.groups.Tuple.tuple(job(1), "run-1"));
    assertThat(success.finishedJobs().get(1).finishedAtMillis()).isEqualTo(firstFinished);
    assertThat(success.namesFinished(job(1))).isTrue();
    assertThat(success.namesFinished(job(4))).isFalse();
    // A job committed without a record carries no run id, and its successor says so.
    assertThat(success.diagnostics()).doesNotContainKey(CommitStatistics.RUN_UUID);
    commit(memory, job(4));
    assertThat(success().finishedJobs().get(0))
        .isEqualTo(new FinishedJob(job(3), "", success.timestamp()));
    assertThat(memory.keys()).noneMatch(key -> key.contains("_writeonce/"));
  }

  @Test
  void theHistoryKeepsTheLastHundredJobsAndDropsOlderOnes() throws Exception {
    int jobs = SuccessMarkerStage.FINISHED_JOBS_KEPT + 5;
    for (int n = 1; n <= jobs; n++) {
      commit(memory, job(n));
    }

    assertThat(success().jobId()).isEqualTo(job(jobs));
    assertThat(history())
        .hasSize(100)
        .containsExactlyElementsOf(
            IntStream.iterate(jobs - 1, n -> n - 1).limit(100).mapToObj(n -> job(n)).toList());
    assertThat(success().namesFinished(job(jobs - 100))).isTrue();
    assertThat(success().namesFinished(job(jobs - 101))).isFalse();
    assertThat(memory.content(SUCCESS).length).as("bytes of _SUCCESS").isLessThan(16_384);
  }

  @Test
  void anEmptySuccessOfAnotherWriterIsReplacedWithoutFailingAndStartsTheHistory() throws Exception {
    memory.putObject(SUCCESS, new byte[0], false); // FileOutputCommitter's

    commit(memory, job(1));

    assertThat(success().jobId()).isEqualTo(job(1));
    assertThat(success().finishedJobs()).isEmpty();
  }

  @Test
  void aForeignOrUnreadableSuccessIsReplacedWithoutFailingAndStartsTheHistory() throws Exception {
    for (String foreign :
        List.of(
            "written by another tool\n",
            "{ \"not\" : \"a success marker\" }",
            "{ truncated",
            hadoopsOwnSuccess())) {
      memory.putObject(SUCCESS, foreign.getBytes(StandardCharsets.UTF_8), false);
      String jobId = job(foreign.length());

      commit(memory, jobId);

      assertThat(success().jobId()).as(foreign).isEqualTo(jobId);
      assertThat(success().finishedJobs()).as(foreign).isEmpty();
    }
  }

  @Test
  void twoJobsFinishingAtOnceBothEndUpInTheHistoryWhenNoSuccessStoodBefore() throws Exception {
    assertBothJobsAreNamedAfterARace();
  }

  @Test
  void twoJobsFinishingAtOnceBothEndUpInTheHistoryOverAnEarlierJobsSuccess() throws Exception {
    commit(memory, job(1));

    assertBothJobsAreNamedAfterARace();

    assertThat(history()).containsExactly(job(3), job(1));
  }

  /**
   * Job 2 reads {@code _SUCCESS}; job 3 then commits and writes its own; job 2's write, conditional
   * on what it read, is refused, and it reads again and names job 3 among the earlier jobs.
   */
  private void assertBothJobsAreNamedAfterARace() throws Exception {
    boolean[] raced = {false};
    var before = memory.counters().snapshot();
    StoreGateway slow =
        new ForwardingStore(memory) {
          @Override
          public Optional<PeekedObject> peekObject(
              String key, int headBytes, Predicate<byte[]> wanted) throws StoreException {
            Optional<PeekedObject> read = super.peekObject(key, headBytes, wanted);
            if (key.equals(SUCCESS) && !raced[0]) {
              raced[0] = true;
              try {
                commit(memory, job(3)); // finishes between job 2's read and its write
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            }
            return read;
          }
        };

    commit(slow, job(2));

    assertThat(raced[0]).isTrue();
    assertThat(success().jobId()).isEqualTo(job(2));
    assertThat(history()).startsWith(job(3));
    assertThat(memory.keys()).contains(fileOf(job(2)), fileOf(job(3)));
    var sent = memory.counters().since(before);
    assertThat(sent.get(RequestType.COMPLETE_UPLOAD)).isEqualTo(2);
    // _SUCCESS: job 3 read it and wrote it once, job 2 twice, its first write refused; beside
    // that, each job's manifest and finished record
    assertThat(sent.get(RequestType.GET_OBJECT)).isEqualTo(3);
    assertThat(sent.get(RequestType.PUT_OBJECT)).isEqualTo(3 + 2 + 2);
    assertThat(memory.keys()).noneMatch(key -> key.contains("_writeonce/"));
  }

  @Test
  void aSuccessThatOtherJobsKeepReplacingFailsTheFinishAfterBoundedAttemptsAsCommitted()
      throws Exception {
    FaultInjectingStore store = new FaultInjectingStore(memory);
    commit(memory, job(1)); // a _SUCCESS stands: every write of the next is conditional on it
    store.failFrom(RequestType.PUT_OBJECT, 2, ErrorKind.PRECONDITION_FAILED); // all but manifest

    assertThatThrownBy(() -> commit(store, job(2)))
        .isInstanceOf(JobCommittedException.class)
        .hasMessageContaining("was replaced by other jobs");

    // Two finishing rounds, each reading and writing _SUCCESS at most WRITE_ATTEMPTS times.
    assertThat(store.calls(RequestType.PUT_OBJECT))
        .isEqualTo(1 + 2 * SuccessMarkerStage.WRITE_ATTEMPTS);
    store.heal();
    assertThat(new JobCommitEngine(memory, config(), DEST).resume(job(2))).isPresent();
    assertThat(success().jobId()).isEqualTo(job(2));
    assertThat(history()).containsExactly(job(1));
  }

  @Test
  void aRepeatedWriteForTheSameJobNeverNamesItTwice() throws Exception {
    commit(memory, job(1));
    int[] successWrites = {0};
    // The job record never takes the FINISHED state: both finishing rounds write _SUCCESS, the
    // second over the first's, and the job stays committed but unfinished.
    StoreGateway store =
        new ForwardingStore(memory) {
          @Override
          public String putObject(String key, byte[] data, boolean ifNoneMatch)
              throws StoreException {
            if (key.endsWith("/job.json")) {
              throw new StoreException(ErrorKind.TRANSIENT, 503, "injected: " + key, null);
            }
            successWrites[0] += key.equals(SUCCESS) ? 1 : 0;
            return super.putObject(key, data, ifNoneMatch);
          }

          @Override
          public String replaceObject(String key, byte[] data, String etag) throws StoreException {
            successWrites[0] += key.equals(SUCCESS) ? 1 : 0;
            return super.replaceObject(key, data, etag);
          }
        };

    assertThatThrownBy(() -> commit(store, job(2))).isInstanceOf(JobCommittedException.class);

    assertThat(successWrites[0]).isEqualTo(2);
    assertThat(success().jobId()).isEqualTo(job(2));
    assertThat(history()).containsExactly(job(1));

    // A later job finishes; then recovery rolls job 2 forward and writes _SUCCESS naming it again.
    commit(memory, job(3));
    assertThat(history()).containsExactly(job(2), job(1));
    assertThat(new JobCommitEngine(memory, config(), DEST).resume(job(2))).isPresent();

    assertThat(success().jobId()).isEqualTo(job(2));
    assertThat(history()).containsExactly(job(3), job(1));
    assertThat(memory.keys()).noneMatch(key -> key.contains("_writeonce/"));
  }
}
