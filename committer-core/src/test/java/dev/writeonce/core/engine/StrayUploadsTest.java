package dev.writeonce.core.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.model.ConflictMode;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.model.JobRecord;
import dev.writeonce.core.model.TaskIntent;
import dev.writeonce.core.store.RequestType;
import dev.writeonce.core.testing.InMemoryStore;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The scan for uploads that dead task attempts started but never recorded: it aborts an upload by
 * key only where no other run may own it (MapReduce reruns reuse {@code part-r-00000}).
 */
class StrayUploadsTest {

  private static final Destination DEST = Destination.of("s3a://bucket/table/");
  private static final String OLD = "job_20261120_0001";
  private static final String RERUN = "job_20261121_0001";
  private static final String KEY = DEST.keyOf("part-r-00000");

  private final InMemoryStore store = new InMemoryStore("bucket", System.currentTimeMillis());
  private final JobLayout layout = new JobLayout(DEST);
  private final JobRecords records = new JobRecords(store, layout);

  private JobCommitEngine engine() {
    return new JobCommitEngine(
        store,
        CommitterConfig.defaults()
            .withConflictMode(ConflictMode.APPEND)
            .withCommitThreads(2)
            .withFenceRetentionMillis(7L * 24 * 3600 * 1000),
        DEST);
  }

  /** An attempt that named KEY in its intent, created an upload and died before its manifest. */
  private String deadAttemptUpload(String jobId, String attempt) throws Exception {
    records.saveTaskIntent(new TaskIntent(jobId, attempt, List.of(KEY)));
    String uploadId = store.createUpload(KEY);
    store.uploadPart(KEY, uploadId, 1, ByteBuffer.wrap(bytes(jobId)));
    return uploadId;
  }

  private void jobRecord(String jobId, JobRecord.State state) throws Exception {
    long now = store.clockMillis();
    records.saveJobRecord(
        new JobRecord(jobId, "run-" + jobId, DEST, state, "host", now, now, 600_000L), false);
  }

  @Test
  void aStrayScanLeavesTheLiveUploadOfARerunThatNamesTheSameKey() throws Exception {
    String stray = deadAttemptUpload(OLD, "attempt_20261120_0001_r_000000_0");
    engine().abort(OLD, List.of());
    assertThat(store.openUploadIds()).as("the ended job's stray is aborted").doesNotContain(stray);

    // The next run of the job writes the same file name while the old job's intent is kept.
    jobRecord(RERUN, JobRecord.State.RUNNING);
    String live = deadAttemptUpload(RERUN, "attempt_20261121_0001_r_000000_0");
    String laterStray = store.createUpload(KEY); // the old attempt, still alive, uploads late

    engine().cleanAborted(OLD); // as 'recover' does for the old job, within its retention

    assertThat(store.openUploadIds())
        .as("the rerun's upload, and the late stray that cannot be told from it, stay open")
        .contains(live, laterStray);

    // Once the rerun has ended, a later scan may abort what is left.
    jobRecord(RERUN, JobRecord.State.FINISHED);
    engine().cleanAborted(OLD);
    assertThat(store.openUploadIds()).doesNotContain(live, laterStray);
  }

  @Test
  void anUploadStartedLongBeforeTheIntentsLastRewriteIsStillAborted() throws Exception {
    String attempt = "attempt_20261120_0001_r_000000_0";
    String first = deadAttemptUpload(OLD, attempt);
    store.advanceClock(60_000); // files close a minute apart: the intent is rewritten for each
    records.saveTaskIntent(new TaskIntent(OLD, attempt, List.of(KEY, DEST.keyOf("part-r-00001"))));

    engine().abort(OLD, List.of());

    assertThat(store.openUploadIds()).doesNotContain(first).isEmpty();
  }

  @Test
  void aStrayScanWithNothingOpenReadsNoOtherJobsRecords() throws Exception {
    records.saveTaskIntent(new TaskIntent(OLD, "attempt_20261120_0001_r_000000_0", List.of(KEY)));
    jobRecord(RERUN, JobRecord.State.RUNNING);
    records.saveTaskIntent(new TaskIntent(RERUN, "attempt_20261121_0001_r_000000_0", List.of(KEY)));
    var before = store.counters().snapshot();

    engine().abort(OLD, List.of());

    var sent = store.counters().since(before);
    assertThat(sent.getOrDefault(RequestType.LIST_UPLOADS, 0L)).isEqualTo(1);
    assertThat(sent.getOrDefault(RequestType.ABORT_UPLOAD, 0L)).isZero();
    // One GET of the old job's own intent and one of its commit point; none of the rerun's.
    assertThat(sent.getOrDefault(RequestType.GET_OBJECT, 0L)).isLessThanOrEqualTo(3);
  }

  @Test
  void aLiveJobWithoutIntentsDefersEveryStrayOfTheDestination() throws Exception {
    String stray = deadAttemptUpload(OLD, "attempt_20261120_0001_r_000000_0");
    jobRecord("job_magic_0001", JobRecord.State.RUNNING); // the magic committer names no keys

    engine().abort(OLD, List.of());

    assertThat(store.openUploadIds()).contains(stray);
  }

  @Test
  void aCommittedUnfinishedJobKeepsOnlyTheUploadsItsManifestNames() throws Exception {
    // A job committed through the engine alone (no intents) whose completions all failed.
    String theirs = store.createUpload(KEY);
    store.uploadPart(KEY, theirs, 1, ByteBuffer.wrap(bytes("committed rows")));
    dev.writeonce.core.testing.FaultInjectingStore failing =
        new dev.writeonce.core.testing.FaultInjectingStore(store)
            .failFrom(
                dev.writeonce.core.store.RequestType.COMPLETE_UPLOAD,
                1,
                dev.writeonce.core.errors.ErrorKind.FATAL);
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () ->
                new JobCommitEngine(
                        failing,
                        CommitterConfig.defaults().withConflictMode(ConflictMode.APPEND),
                        DEST)
                    .commit(
                        new JobCommitRequest(
                            RERUN,
                            "test",
                            ConflictMode.APPEND,
                            List.of(
                                new dev.writeonce.core.model.TaskManifest(
                                    RERUN,
                                    "attempt_20261121_0001_r_000000_0",
                                    List.of(
                                        new dev.writeonce.core.model.PendingUpload(
                                            "bucket",
                                            KEY,
                                            theirs,
                                            List.of(
                                                new dev.writeonce.core.model.UploadPart(
                                                    1,
                                                    dev.writeonce.core.model.Etags.md5Hex(
                                                        bytes("committed rows")),
                                                    14)),
                                            "attempt_20261121_0001_r_000000_0")),
                                    java.util.Map.of())),
                            List.of())))
        .isInstanceOf(dev.writeonce.core.errors.JobCommittedException.class);
    String stray = deadAttemptUpload(OLD, "attempt_20261120_0001_r_000000_0");

    engine().abort(OLD, List.of());

    assertThat(store.openUploadIds())
        .as("the committed job's upload stays for its recovery; the dead attempt's is aborted")
        .contains(theirs)
        .doesNotContain(stray);
  }

  @Test
  void anIntentNamingAKeyOutsideItsDestinationIsRefusedAndNothingIsAborted() throws Exception {
    String otherTable = Destination.of("s3a://bucket/other/").keyOf("part-r-00000");
    String theirs = store.createUpload(otherTable);
    store.putObject(
        layout.intentKey(OLD, "attempt_planted"),
        dev.writeonce.core.json.ManifestFormats.toJson(
            new TaskIntent(OLD, "attempt_planted", List.of(otherTable))),
        false);
    jobRecord(OLD, JobRecord.State.FINISHED);

    assertThatThrownBy(() -> records.loadTaskIntent(OLD, layout.intentKey(OLD, "attempt_planted")))
        .hasMessageContaining(DEST.uriOf(layout.intentKey(OLD, "attempt_planted")))
        .hasMessageContaining("other/part-r-00000");
    engine().resume(OLD); // a finished job's cleanup: it keeps the intent and aborts nothing
    assertThat(store.openUploadIds()).contains(theirs);
    assertThat(store.keys()).contains(layout.intentKey(OLD, "attempt_planted"));
    assertThat(new JobInspector(store, layout).inspect().jobs())
        .singleElement()
        .satisfies(job -> assertThat(job.state()).isEqualTo(JobInspector.State.DAMAGED));
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}
