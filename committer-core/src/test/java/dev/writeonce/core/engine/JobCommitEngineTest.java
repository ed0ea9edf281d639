package dev.writeonce.core.engine;

import static dev.writeonce.core.testing.PendingUploads.contentOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.errors.CommitConflictException;
import dev.writeonce.core.errors.CommitStateUnknownException;
import dev.writeonce.core.errors.ErrorKind;
import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.errors.InvalidJobException;
import dev.writeonce.core.errors.JobCommittedException;
import dev.writeonce.core.errors.UploadLostException;
import dev.writeonce.core.json.SuccessDataFormat;
import dev.writeonce.core.model.CommitStatistics;
import dev.writeonce.core.model.ConflictMode;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.SuccessData;
import dev.writeonce.core.model.TaskManifest;
import dev.writeonce.core.store.RequestType;
import dev.writeonce.core.testing.FaultInjectingStore;
import dev.writeonce.core.testing.InMemoryStore;
import dev.writeonce.core.testing.PendingUploads;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class JobCommitEngineTest {

  private static final Destination DEST = Destination.of("s3a://bucket/table/");
  private static final String JOB = "job_20261122_0001";

  /** A clock near now, as a real store's: abort fences stand for their retention. */
  private final InMemoryStore memory = new InMemoryStore("bucket", System.currentTimeMillis());

  private final FaultInjectingStore store = new FaultInjectingStore(memory);

  private JobCommitEngine engine() {
    return new JobCommitEngine(store, config(4), DEST);
  }

  private static CommitterConfig config(int threads) {
    return CommitterConfig.defaults()
        .withCommitThreads(threads)
        .withConflictMode(ConflictMode.APPEND)
        .withConditionalManifestWrite(true)
        .withSuccessFileLimit(100)
        .withTaskUploadThreads(2)
        .withStagingDir("/tmp")
        .withMagicBuffersPerStream(2)
        .withMagicUploadThreads(2)
        .withRecoverOnSetup(false)
        .withUnfinishedAfterMillis(600_000L)
        .withFenceRetentionMillis(7L * 24 * 3600 * 1000)
        .withLeaseMillis(600_000L);
  }

  private static org.apache.hadoop.conf.Configuration configuration(String key, String value) {
    org.apache.hadoop.conf.Configuration conf = new org.apache.hadoop.conf.Configuration(false);
    conf.set(key, value);
    return conf;
  }

  private List<TaskManifest> tasks(int taskCount, int filesPerTask) throws Exception {
    List<TaskManifest> tasks = new ArrayList<>();
    for (int t = 0; t < taskCount; t++) {
      int task = t;
      List<String> keys =
          IntStream.range(0, filesPerTask)
              .mapToObj(f -> DEST.keyOf("part-" + task + "-" + f))
              .toList();
      tasks.add(PendingUploads.task(store, JOB, "attempt_" + t + "_0", keys));
    }
    return tasks;
  }

  private static JobCommitRequest append(List<TaskManifest> tasks) {
    return new JobCommitRequest(JOB, "test", ConflictMode.APPEND, tasks, List.of());
  }

  private List<String> outputKeys() {
    return memory.keys().stream().filter(k -> k.contains("part-")).toList();
  }

  @Test
  void commitPublishesEveryFileWithItsBytesAndLeavesNoUploadOrRecord() throws Exception {
    List<TaskManifest> tasks = tasks(3, 4);
    CommitResult result = engine().commit(append(tasks));

    assertThat(result.files()).isEqualTo(12);
    assertThat(result.completed()).isEqualTo(12);
    assertThat(outputKeys()).hasSize(12);
    for (String key : outputKeys()) {
      assertThat(memory.content(key)).isEqualTo(contentOf(key));
    }
    assertThat(memory.openUploadIds()).isEmpty();
    // The output and _SUCCESS, nothing else: no record of the finished job is left.
    List<String> expected = new ArrayList<>(outputKeys());
    expected.add("table/_SUCCESS");
    assertThat(memory.keys()).containsExactlyInAnyOrderElementsOf(expected);
  }

  @Test
  void commitSendsOneCompletePerFileAndAConstantNumberOfOtherRequests() throws Exception {
    List<TaskManifest> tasks = tasks(2, 50);
    var before = memory.counters().snapshot();
    CommitResult result = engine().commit(append(tasks));
    var sent = memory.counters().since(before);

    assertThat(sent.get(RequestType.COMPLETE_UPLOAD)).isEqualTo(100);
    // manifest, _SUCCESS, the job record marked finished; the GET of the _SUCCESS it replaces;
    // one LIST of the job's records; two deletes (the records, then the job record last)
    assertThat(sent.get(RequestType.PUT_OBJECT)).isEqualTo(3);
    assertThat(sent.get(RequestType.GET_OBJECT)).isEqualTo(1);
    assertThat(sent.get(RequestType.LIST_OBJECTS)).isEqualTo(1);
    assertThat(sent.get(RequestType.DELETE_OBJECTS)).isEqualTo(2);
    assertThat(sent.get(RequestType.HEAD_OBJECT)).isZero();
    assertThat(result.requests().get(RequestType.COMPLETE_UPLOAD)).isEqualTo(100);
  }

  @Test
  void successMarkerCarriesCountsInHadoopShape() throws Exception {
    engine().commit(append(tasks(1, 3)));
    SuccessData success =
        SuccessDataFormat.fromJson(memory.content("table/_SUCCESS"), "table/_SUCCESS");

    assertThat(success.jobId()).isEqualTo(JOB);
    assertThat(success.committer()).isEqualTo("test");
    assertThat(success.filenames()).hasSize(3);
    assertThat(success.metrics()).containsEntry("writeonce.files", 3L);
    assertThat(success.counters()).containsEntry("writeonce.requests.complete_upload", 3L);
    assertThat(success.counters()).containsEntry("writeonce.requests.put_object", 2L);
    assertThat(success.counters()).containsEntry("writeonce.requests.get_object", 1L);
    assertThat(new String(memory.content("table/_SUCCESS"), StandardCharsets.UTF_8))
        .contains("\"name\" : \"" + SuccessDataFormat.HADOOP_NAME + "\"");
  }

  @Test
  void successMarkerCountsTheTasksRequestsWithTheCommitsAndNamesWhatItCounts() throws Exception {
    TaskManifest task = tasks(1, 3).get(0);
    TaskManifest reported =
        new TaskManifest(
            task.jobId(),
            task.taskAttemptId(),
            task.uploads(),
            Map.of("writeonce.files", 3L, "writeonce.requests.put_object", 1L));
    engine().commit(append(List.of(reported)));
    SuccessData success =
        SuccessDataFormat.fromJson(memory.content("table/_SUCCESS"), "table/_SUCCESS");

    // The task's intent, the job manifest and _SUCCESS.
    assertThat(success.counters()).containsEntry("writeonce.requests.put_object", 3L);
    assertThat(success.diagnostics())
        .containsEntry(CommitStatistics.REQUESTS_COUNTED, CommitStatistics.REQUESTS_OF_THE_JOB);
  }

  @Test
  void nothingIsVisibleBeforeTheCommitPoint() throws Exception {
    tasks(2, 3);
    assertThat(outputKeys()).isEmpty();
    assertThat(memory.openUploadIds()).hasSize(6);
  }

  @Test
  void crashAfterSomeCompletionsIsFinishedByANewEngineFromTheManifestAlone() throws Exception {
    List<TaskManifest> tasks = tasks(4, 25);
    store.failFrom(RequestType.COMPLETE_UPLOAD, 38, ErrorKind.FATAL);

    assertThatThrownBy(() -> engine().commit(append(tasks))).hasMessageContaining("injected");
    int completedBeforeCrash = outputKeys().size();
    assertThat(completedBeforeCrash).isBetween(37, 99);
    assertThat(memory.keys()).contains(DEST.keyOf("_writeonce/jobs/" + JOB + "/manifest.json"));

    store.heal();
    CommitResult resumed = new JobCommitEngine(store, config(3), DEST).resume(JOB).orElseThrow();

    assertThat(outputKeys()).hasSize(100);
    outputKeys().forEach(key -> assertThat(memory.content(key)).isEqualTo(contentOf(key)));
    assertThat(resumed.confirmed()).isEqualTo(completedBeforeCrash);
    assertThat(resumed.completed()).isEqualTo(100 - completedBeforeCrash);
    assertThat(memory.openUploadIds()).isEmpty();
    assertThat(memory.keys()).noneMatch(k -> k.contains("_writeonce/"));
  }

  @Test
  void resumeTwiceAfterACrashBeforeSuccessNeitherFailsNorRedoes() throws Exception {
    List<TaskManifest> tasks = tasks(2, 5);
    store.failFrom(RequestType.PUT_OBJECT, 2, ErrorKind.TRANSIENT); // the _SUCCESS write
    assertThatThrownBy(() -> engine().commit(append(tasks))).hasMessageContaining("injected");
    assertThat(outputKeys()).hasSize(10);
    store.heal();

    CommitResult first = engine().resume(JOB).orElseThrow();
    assertThat(first.completed()).isZero();
    assertThat(first.confirmed()).isEqualTo(10);
    assertThat(engine().resume(JOB)).isEmpty();
    assertThat(outputKeys()).hasSize(10);
  }

  @Test
  void resumeOfAFinishedJobWhoseCleanupFailedOnlyRemovesRecords() throws Exception {
    List<TaskManifest> tasks = tasks(1, 2);
    store.failFrom(RequestType.DELETE_OBJECTS, 1, ErrorKind.TRANSIENT);
    engine().commit(append(tasks)); // cleanup failure is logged, not thrown
    assertThat(memory.keys()).anyMatch(k -> k.endsWith("manifest.json"));
    store.heal();

    var before = memory.counters().snapshot();
    CommitResult result = engine().resume(JOB).orElseThrow();
    assertThat(result.completed()).isZero();
    assertThat(memory.counters().since(before).get(RequestType.COMPLETE_UPLOAD)).isZero();
    assertThat(memory.keys()).noneMatch(k -> k.contains("_writeonce/"));
  }

  @Test
  void resumeOfAJobThatNeverReachedItsCommitPointFindsNothing() throws Exception {
    tasks(1, 2);
    assertThat(engine().resume(JOB)).isEmpty();
    assertThat(outputKeys()).isEmpty();
  }

  @Test
  void abortBeforeTheCommitPointLeavesNoObjectNoUploadNoRecord() throws Exception {
    List<TaskManifest> tasks = tasks(3, 3);
    JobCommitEngine engine = engine();
    engine.records().saveTaskManifest(tasks.get(0)); // as MapReduce persists them
    engine.abort(JOB, tasks.subList(1, 3), true); // by the job's own driver, before committing

    assertThat(memory.keys()).isEmpty();
    assertThat(memory.openUploadIds()).isEmpty();
  }

  @Test
  void anAbortByAnotherProcessLeavesOnlyItsFenceUntilTheRetentionEnds() throws Exception {
    List<TaskManifest> tasks = tasks(2, 2);
    JobCommitEngine engine = engine();
    tasks.forEach(
        t -> {
          try {
            engine.records().saveTaskManifest(t);
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
        });
    engine.abort(JOB, List.of());

    assertThat(memory.keys())
        .containsExactly(DEST.keyOf("_writeonce/jobs/" + JOB + "/manifest.json"));
    assertThat(memory.openUploadIds()).isEmpty();
    assertThat(new JobInspector(store, engine.layout()).inspect().jobs())
        .singleElement()
        .satisfies(job -> assertThat(job.state()).isEqualTo(JobInspector.State.ABORTED));
    assertThat(engine.cleanAborted(JOB)).as("the fence stands for its retention").isFalse();
    JobCommitEngine eightDaysLater =
        new JobCommitEngine(
            store, config(4), DEST, () -> System.currentTimeMillis() + 8 * 86_400_000L);
    assertThat(eightDaysLater.cleanAborted(JOB)).isTrue();
    assertThat(memory.keys()).isEmpty();
  }

  @Test
  void abortAfterTheCommitPointIsRefused() throws Exception {
    List<TaskManifest> tasks = tasks(1, 3);
    store.failFrom(RequestType.COMPLETE_UPLOAD, 1, ErrorKind.FATAL);
    assertThatThrownBy(() -> engine().commit(append(tasks)));
    store.heal();

    assertThatThrownBy(() -> engine().abort(JOB, tasks))
        .isInstanceOf(CommitConflictException.class)
        .hasMessageContaining("recovery");
    assertThat(memory.openUploadIds()).hasSize(3);
  }

  @Test
  void aKeyWrittenByTwoTaskAttemptsIsRefusedBeforeAnythingHappens() throws Exception {
    String key = DEST.keyOf("part-0");
    TaskManifest a = PendingUploads.task(store, JOB, "attempt_0_0", List.of(key));
    TaskManifest b = PendingUploads.task(store, JOB, "attempt_0_1", List.of(key));

    assertThatThrownBy(() -> engine().commit(append(List.of(a, b))))
        .isInstanceOf(InvalidJobException.class)
        .hasMessageContaining("attempt_0_0")
        .hasMessageContaining("attempt_0_1")
        .hasMessageContaining("s3a://bucket/table/part-0");
    assertThat(store.calls(RequestType.COMPLETE_UPLOAD)).isZero();
    assertThat(store.calls(RequestType.PUT_OBJECT)).isZero();
  }

  @Test
  void anUploadOutsideTheDestinationIsRefused() throws Exception {
    TaskManifest outside =
        PendingUploads.task(store, JOB, "attempt_0_0", List.of("elsewhere/part-0"));
    assertThatThrownBy(() -> engine().commit(append(List.of(outside))))
        .isInstanceOf(InvalidJobException.class)
        .hasMessageContaining("s3a://bucket/elsewhere/part-0")
        .hasMessageContaining("outside");
    assertThat(store.calls(RequestType.COMPLETE_UPLOAD)).isZero();
  }

  @Test
  void aSecondDriverCommittingTheSameJobIsRefused() throws Exception {
    List<TaskManifest> first = tasks(1, 2);
    store.failFrom(RequestType.COMPLETE_UPLOAD, 1, ErrorKind.FATAL);
    assertThatThrownBy(() -> engine().commit(append(first)));
    store.heal();
    int completesBefore = store.calls(RequestType.COMPLETE_UPLOAD);

    List<TaskManifest> other =
        List.of(PendingUploads.task(store, JOB, "attempt_9_0", List.of(DEST.keyOf("other"))));
    assertThatThrownBy(() -> engine().commit(append(other)))
        .isInstanceOf(CommitConflictException.class)
        .hasMessageContaining("already committed");
    assertThat(store.calls(RequestType.COMPLETE_UPLOAD)).isEqualTo(completesBefore);
  }

  @Test
  void aManifestWriteWhoseAnswerWasLostButLandedGoesOn() throws Exception {
    List<TaskManifest> tasks = tasks(1, 2);
    store.loseAnswerOf(RequestType.PUT_OBJECT, 1, ErrorKind.TRANSIENT);
    CommitResult result = engine().commit(append(tasks));
    assertThat(result.completed()).isEqualTo(2);
  }

  @Test
  void aManifestWriteOfUnknownOutcomeCleansNothingUp() throws Exception {
    List<TaskManifest> tasks = tasks(1, 2);
    store.failFrom(RequestType.PUT_OBJECT, 1, ErrorKind.TRANSIENT);
    assertThatThrownBy(() -> engine().commit(append(tasks)))
        .isInstanceOf(CommitStateUnknownException.class)
        .hasMessageContaining("recovery");
    assertThat(store.calls(RequestType.ABORT_UPLOAD)).isZero();
    assertThat(store.calls(RequestType.DELETE_OBJECTS)).isZero();
    assertThat(memory.openUploadIds()).hasSize(2);
  }

  @Test
  void anUploadLostBeforeResumeIsReportedWithItsPath() throws Exception {
    List<TaskManifest> tasks = tasks(1, 2);
    store.failFrom(RequestType.COMPLETE_UPLOAD, 1, ErrorKind.FATAL);
    assertThatThrownBy(() -> engine().commit(append(tasks)));
    store.heal();
    PendingUpload lost = tasks.get(0).uploads().get(1);
    memory.abortUpload(lost.key(), lost.uploadId());

    assertThatThrownBy(() -> engine().resume(JOB))
        .isInstanceOf(UploadLostException.class)
        .hasMessageContaining("s3a://bucket/" + lost.key())
        .hasMessageContaining("no object");
  }

  @Test
  void replaceDeletesOldObjectsOnlyAfterTheCommitPointAndKeepsOtherPrefixes() throws Exception {
    memory.putObject(DEST.keyOf("p=1/old"), new byte[] {1}, false);
    memory.putObject(DEST.keyOf("p=2/old"), new byte[] {2}, false);
    memory.putObject(DEST.keyOf("p=1/part-0"), new byte[] {3}, false);
    TaskManifest task =
        PendingUploads.task(store, JOB, "attempt_0_0", List.of(DEST.keyOf("p=1/part-0")));
    store.failFrom(RequestType.COMPLETE_UPLOAD, 1, ErrorKind.FATAL);
    JobCommitRequest request =
        new JobCommitRequest(
            JOB, "test", ConflictMode.REPLACE, List.of(task), List.of(DEST.keyOf("p=1/")));

    assertThatThrownBy(() -> engine().commit(request));
    assertThat(memory.keys()).contains(DEST.keyOf("p=1/old")); // not yet deleted
    store.heal();
    CommitResult result = engine().resume(JOB).orElseThrow();

    assertThat(result.deleted()).isEqualTo(1);
    assertThat(memory.keys()).doesNotContain(DEST.keyOf("p=1/old"));
    assertThat(memory.keys()).contains(DEST.keyOf("p=2/old"));
    assertThat(memory.content(DEST.keyOf("p=1/part-0")))
        .isEqualTo(contentOf(DEST.keyOf("p=1/part-0")));
  }

  @Test
  void aGarbledManifestInTheStoreIsRefusedWithItsPathAndNothingIsTouched() throws Exception {
    tasks(1, 2);
    String key = DEST.keyOf("_writeonce/jobs/" + JOB + "/manifest.json");
    memory.putObject(key, "{\"format\":\"writeonce.job-manifest\",\"vers".getBytes(), false);

    assertThatThrownBy(() -> engine().resume(JOB))
        .isInstanceOf(FormatException.class)
        .hasMessageContaining("s3a://bucket/" + key)
        .hasMessageContaining("not valid JSON");
    assertThat(store.calls(RequestType.COMPLETE_UPLOAD)).isZero();
    assertThat(store.calls(RequestType.DELETE_OBJECTS)).isZero();
  }

  @Test
  void aManifestNamingAWiderDestinationIsRefusedBeforeAnyKeyIsTouched() throws Exception {
    Destination wider = Destination.of("s3a://bucket/");
    TaskManifest outside =
        PendingUploads.task(store, JOB, "attempt_0_0", List.of("finance/ledger/part-0"));
    String key = DEST.keyOf("_writeonce/jobs/" + JOB + "/manifest.json");
    memory.putObject(
        key,
        dev.writeonce.core.json.ManifestFormats.toJson(
            new dev.writeonce.core.model.JobManifest(
                JOB, wider, ConflictMode.APPEND, "test", 0, outside.uploads(), List.of())),
        false);

    assertThatThrownBy(() -> engine().resume(JOB))
        .isInstanceOf(FormatException.class)
        .hasMessageContaining("names destination s3a://bucket/")
        .hasMessageContaining("refusing to touch keys outside");
    assertThat(store.calls(RequestType.COMPLETE_UPLOAD)).isZero();
    assertThat(memory.openUploadIds()).hasSize(1);
  }

  @Test
  void progressMetricsAreRecordedForEveryStage() throws Exception {
    CommitResult result = engine().commit(append(tasks(1, 1)));
    assertThat(result.stageMillis())
        .containsKeys("validate", "commit-point", "complete", "replace", "success", "cleanup");
    assertThat(result.success().metrics()).containsKey("writeonce.stage.complete.millis");
    assertThat(result.success().metrics()).isNotEqualTo(Map.of());
  }

  @Test
  void aLostUploadDoesNotStopTheOthersAndAcceptLostEndsTheJobListingIt() throws Exception {
    List<TaskManifest> tasks = tasks(1, 4);
    store.failFrom(RequestType.COMPLETE_UPLOAD, 1, ErrorKind.FATAL);
    assertThatThrownBy(() -> engine().commit(append(tasks)))
        .isInstanceOf(JobCommittedException.class)
        .hasMessageContaining("do NOT run the job again")
        .hasMessageContaining("writeonce recover");
    store.heal();
    PendingUpload expired = tasks.get(0).uploads().get(0);
    memory.abortUpload(expired.key(), expired.uploadId()); // a lifecycle rule, MinIO's 24 h

    assertThatThrownBy(() -> engine().resume(JOB))
        .isInstanceOf(UploadLostException.class)
        .hasMessageContaining("1 of 4 uploads are lost")
        .hasMessageContaining("--accept-lost")
        .satisfies(
            e -> assertThat(((UploadLostException) e).lostKeys()).containsExactly(expired.key()));
    assertThat(outputKeys()).as("every other upload completed").hasSize(3);
    assertThat(memory.keys()).doesNotContain("table/_SUCCESS");

    CommitResult accepted =
        new JobCommitEngine(store, config(4), DEST).resume(JOB, true).orElseThrow();
    SuccessData success = SuccessDataFormat.fromJson(memory.content("table/_SUCCESS"), "_SUCCESS");
    assertThat(success.metrics()).containsEntry("writeonce.uploads.lost", 1L);
    assertThat(success.diagnostics().get("writeonce.lost"))
        .isEqualTo("s3a://bucket/" + expired.key());
    assertThat(success.filenames()).hasSize(3).doesNotContain("s3a://bucket/" + expired.key());
    assertThat(accepted.files()).isEqualTo(4);
    assertThat(memory.keys()).noneMatch(k -> k.contains("_writeonce/"));
    assertThat(memory.openUploadIds()).isEmpty();
    assertThat(engine().resume(JOB)).as("the job has ended").isEmpty();
  }

  @Test
  void aManifestWriteLandingAfterTheAbortFenceIsRefusedByTheStore() throws Exception {
    List<TaskManifest> tasks = tasks(1, 2);
    store.failOnce(RequestType.PUT_OBJECT, 1, ErrorKind.TRANSIENT); // the manifest: unknown
    assertThatThrownBy(() -> engine().commit(append(tasks)))
        .isInstanceOf(CommitStateUnknownException.class);
    engine().abort(JOB, tasks);
    assertThat(memory.openUploadIds()).as("aborted once the outcome was known").isEmpty();

    String manifestKey = DEST.keyOf("_writeonce/jobs/" + JOB + "/manifest.json");
    assertThatThrownBy(() -> memory.putObject(manifestKey, new byte[] {'{', '}'}, true))
        .isInstanceOf(dev.writeonce.core.errors.StoreException.class)
        .satisfies(
            e ->
                assertThat(
                        ((dev.writeonce.core.errors.StoreException) e)
                            .is(ErrorKind.PRECONDITION_FAILED))
                    .isTrue());
    assertThat(engine().resume(JOB)).as("a fenced job is never finished").isEmpty();
  }

  @Test
  void abortAfterAManifestThatLandedLateIsRefusedAndNoUploadIsAborted() throws Exception {
    List<TaskManifest> tasks = tasks(1, 2);
    store.loseAnswerOf(RequestType.PUT_OBJECT, 1, ErrorKind.TRANSIENT);
    store.failFrom(RequestType.GET_OBJECT, 1, ErrorKind.TRANSIENT); // the check cannot tell
    assertThatThrownBy(() -> engine().commit(append(tasks)))
        .isInstanceOf(CommitStateUnknownException.class);
    store.heal();

    assertThatThrownBy(() -> engine().abort(JOB, tasks))
        .isInstanceOf(CommitConflictException.class)
        .hasMessageContaining("passed its commit point");
    assertThat(memory.openUploadIds()).hasSize(2);
    engine().resume(JOB);
    assertThat(outputKeys()).hasSize(2);
  }

  @Test
  void confirmingALostCompletionAnswerDoesNotDependOnMd5Etags() {
    // SSE-KMS and SSE-C part ETags are not MD5s of the data: nothing can be predicted from them.
    PendingUpload encrypted =
        new PendingUpload(
            "bucket",
            "table/part-0",
            "u-1",
            List.of(
                new dev.writeonce.core.model.UploadPart(1, "kms-part-etag-1", 5),
                new dev.writeonce.core.model.UploadPart(2, "kms-part-etag-2", 3)),
            "attempt_0");
    assertThat(
            dev.writeonce.core.upload.UploadCompletion.isCompletedObject(
                encrypted,
                new dev.writeonce.core.store.ObjectInfo(
                    "table/part-0", 8, "9b2cf535f27731c974343645a3985328-2", 0)))
        .isTrue();
    assertThat(
            dev.writeonce.core.upload.UploadCompletion.isCompletedObject(
                encrypted,
                new dev.writeonce.core.store.ObjectInfo(
                    "table/part-0", 8, "9b2cf535f27731c974343645a3985328", 0)))
        .as("a single PUT by another writer")
        .isFalse();
    assertThat(
            dev.writeonce.core.upload.UploadCompletion.isCompletedObject(
                encrypted, new dev.writeonce.core.store.ObjectInfo("table/part-0", 7, "x-2", 0)))
        .as("another size")
        .isFalse();
  }

  @Test
  void aLostManifestAnswerIsConfirmedByContentWhenTheStoreGivesNoMd5Etags() throws Exception {
    List<TaskManifest> tasks = tasks(1, 2);
    var kmsStore =
        new dev.writeonce.core.testing.ForwardingStore(store) {
          @Override
          public java.util.Optional<dev.writeonce.core.store.ObjectInfo> headObject(String key)
              throws dev.writeonce.core.errors.StoreException {
            return super.headObject(key)
                .map(
                    o ->
                        new dev.writeonce.core.store.ObjectInfo(
                            o.key(), o.size(), "kms-" + o.etag(), 0));
          }
        };
    store.loseAnswerOf(RequestType.PUT_OBJECT, 1, ErrorKind.TRANSIENT);
    CommitResult result = new JobCommitEngine(kmsStore, config(4), DEST).commit(append(tasks));
    assertThat(result.completed()).isEqualTo(2);
  }

  @Test
  void leftoverRecordsOfAFinishedJobAreNeverFinishedAgainWhateverSuccessSays() throws Exception {
    memory.putObject(DEST.keyOf("p=1/old"), new byte[] {1}, false);
    TaskManifest task =
        PendingUploads.task(store, JOB, "attempt_0_0", List.of(DEST.keyOf("p=1/part-0")));
    // The driver dies during cleanup: the job record (finished) and the manifest stay.
    store.failFrom(RequestType.DELETE_OBJECTS, 2, ErrorKind.FATAL);
    engine()
        .commit(
            new JobCommitRequest(
                JOB, "test", ConflictMode.REPLACE, List.of(task), List.of(DEST.keyOf("p=1/"))));
    store.heal();
    assertThat(memory.keys()).anyMatch(k -> k.endsWith(JOB + "/job.json"));
    // A later job writes p=1/old again and its own _SUCCESS, which does not name the first job.
    memory.putObject(DEST.keyOf("p=1/old"), new byte[] {2}, false);
    memory.putObject(DEST.keyOf("_SUCCESS"), new byte[0], false);

    var before = memory.counters().snapshot();
    engine().resume(JOB);
    var sent = memory.counters().since(before);

    assertThat(memory.content(DEST.keyOf("p=1/old"))).containsExactly(2);
    assertThat(memory.content(DEST.keyOf("_SUCCESS"))).isEmpty();
    assertThat(sent.get(RequestType.COMPLETE_UPLOAD)).isZero();
    assertThat(memory.keys()).noneMatch(k -> k.contains("_writeonce/"));
  }

  @Test
  void anEmptySuccessMarkerOfAnotherWriterIsIgnored() throws Exception {
    List<TaskManifest> tasks = tasks(1, 2);
    memory.putObject(DEST.keyOf("_SUCCESS"), new byte[0], false); // FileOutputCommitter's
    store.failFrom(RequestType.COMPLETE_UPLOAD, 1, ErrorKind.FATAL);
    assertThatThrownBy(() -> engine().commit(append(tasks)));
    store.heal();

    assertThat(new JobInspector(store, engine().layout()).inspect().success()).isEmpty();
    engine().resume(JOB).orElseThrow();
    assertThat(outputKeys()).hasSize(2);
  }

  @Test
  void aReplaceJobFinishesAnotherCommittedJobBeforeDeletingItsFiles() throws Exception {
    // Found by the protocol simulation: a replace job deleted the completed files of a job whose
    // driver died before _SUCCESS, which recovery then could never confirm.
    List<TaskManifest> first = tasks(1, 2);
    store.failFrom(RequestType.PUT_OBJECT, 2, ErrorKind.FATAL); // _SUCCESS, twice: driver gone
    assertThatThrownBy(() -> engine().commit(append(first)))
        .isInstanceOf(JobCommittedException.class);
    store.heal();
    assertThat(outputKeys()).hasSize(2);

    String second = "job_20261122_0002";
    TaskManifest replacing =
        PendingUploads.task(store, second, "attempt_9_0", List.of(DEST.keyOf("part-new")));
    engine()
        .commit(
            new JobCommitRequest(
                second, "test", ConflictMode.REPLACE, List.of(replacing), List.of(DEST.prefix())));

    assertThat(outputKeys()).containsExactly(DEST.keyOf("part-new"));
    assertThat(engine().resume(JOB)).as("the first job was finished, not left to fail").isEmpty();
    assertThat(memory.keys()).noneMatch(k -> k.contains("_writeonce/"));
    assertThat(memory.openUploadIds()).isEmpty();
  }
}
