package dev.writeonce.core.engine;

import static dev.writeonce.core.testing.PendingUploads.contentOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.errors.CommitConflictException;
import dev.writeonce.core.errors.ErrorKind;
import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.errors.InvalidJobException;
import dev.writeonce.core.json.ManifestFormats;
import dev.writeonce.core.model.ConflictMode;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.model.JobManifest;
import dev.writeonce.core.model.TaskManifest;
import dev.writeonce.core.store.RequestType;
import dev.writeonce.core.testing.FaultInjectingStore;
import dev.writeonce.core.testing.InMemoryStore;
import dev.writeonce.core.testing.PendingUploads;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * A job with more uploads than {@code writeonce.manifest.chunk-uploads} is committed through chunks
 * that its manifest names: the same guarantees as an inline manifest, at any point of failure.
 */
class ChunkedJobManifestTest {

  private static final Destination DEST = Destination.of("s3a://bucket/table/");
  private static final String JOB = "job_20261125_0001";
  private static final int CHUNK = 10;

  private final InMemoryStore memory = new InMemoryStore("bucket", System.currentTimeMillis());
  private final FaultInjectingStore store = new FaultInjectingStore(memory);
  private final JobLayout layout = new JobLayout(DEST);

  private JobCommitEngine engine() {
    return new JobCommitEngine(
        store,
        CommitterConfig.defaults().withCommitThreads(4).withManifestChunkUploads(CHUNK),
        DEST);
  }

  private List<TaskManifest> tasks(int taskCount, int filesPerTask) throws Exception {
    List<TaskManifest> tasks = new ArrayList<>();
    for (int t = 0; t < taskCount; t++) {
      int task = t;
      List<String> keys =
          IntStream.range(0, filesPerTask)
              .mapToObj(f -> DEST.keyOf("p=" + (task % 2) + "/part-" + task + "-" + f))
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

  private List<String> chunkKeys() {
    return memory.keys().stream()
        .filter(k -> k.startsWith(layout.manifestChunkPrefix(JOB)))
        .toList();
  }

  private JobManifest storedManifest() throws Exception {
    return new JobRecords(memory, layout).loadJobManifest(JOB).orElseThrow();
  }

  private void assertEveryFilePublished(int files) {
    assertThat(outputKeys()).hasSize(files);
    outputKeys().forEach(key -> assertThat(memory.content(key)).isEqualTo(contentOf(key)));
    assertThat(memory.openUploadIds()).isEmpty();
    assertThat(memory.keys()).noneMatch(k -> k.contains("_writeonce/"));
  }

  @Test
  void aJobOfMoreUploadsThanAChunkIsCommittedThroughChunksAndLeavesNothing() throws Exception {
    List<TaskManifest> tasks = tasks(5, 7);
    var before = memory.counters().snapshot();
    CommitResult result = engine().commit(append(tasks));
    var sent = memory.counters().since(before);

    assertThat(result.files()).isEqualTo(35);
    assertThat(result.completed()).isEqualTo(35);
    assertEveryFilePublished(35);
    assertThat(sent.get(RequestType.COMPLETE_UPLOAD)).isEqualTo(35);
    // 4 chunks of at most 10, the manifest, _SUCCESS and the job record marked finished
    assertThat(sent.get(RequestType.PUT_OBJECT)).isEqualTo(7);
    // each chunk read to complete it, and again for the names _SUCCESS lists (at most 100); the
    // _SUCCESS it replaces
    assertThat(sent.get(RequestType.GET_OBJECT)).isEqualTo(9);
    assertThat(sent.get(RequestType.HEAD_OBJECT)).isZero();
    assertThat(result.success().filenames()).hasSize(35);
  }

  @Test
  void aJobOfExactlyOneChunkKeepsTheInlineManifestAndItsRequests() throws Exception {
    List<TaskManifest> tasks = tasks(2, 5);
    store.failFrom(RequestType.COMPLETE_UPLOAD, 1, ErrorKind.FATAL);
    assertThatThrownBy(() -> engine().commit(append(tasks))).hasMessageContaining("injected");

    assertThat(storedManifest().isChunked()).isFalse();
    assertThat(new String(memory.content(layout.jobManifestKey(JOB)), StandardCharsets.UTF_8))
        .contains("\"version\" : " + ManifestFormats.JOB_MANIFEST_VERSION);
    assertThat(chunkKeys()).isEmpty();
    store.heal();
    var before = memory.counters().snapshot();
    engine().resume(JOB).orElseThrow();
    assertThat(memory.counters().since(before).get(RequestType.GET_OBJECT))
        .as("job record, manifest and the _SUCCESS it replaces only")
        .isEqualTo(3);
    assertEveryFilePublished(10);
  }

  @Test
  void aCrashAfterSomeCompletionsIsFinishedFromTheChunksAlone() throws Exception {
    List<TaskManifest> tasks = tasks(6, 6);
    store.failFrom(RequestType.COMPLETE_UPLOAD, 15, ErrorKind.FATAL);

    assertThatThrownBy(() -> engine().commit(append(tasks))).hasMessageContaining("injected");
    int completedBeforeCrash = outputKeys().size();
    assertThat(completedBeforeCrash).isBetween(10, 35);
    assertThat(storedManifest().chunks()).hasSize(4);

    store.heal();
    CommitResult resumed = engine().resume(JOB).orElseThrow();
    assertThat(resumed.confirmed()).isEqualTo(completedBeforeCrash);
    assertThat(resumed.completed()).isEqualTo(36 - completedBeforeCrash);
    assertEveryFilePublished(36);
  }

  @Test
  void aChunkChangedAfterTheCommitPointIsRefusedAndItsUploadsStayForAnOperator() throws Exception {
    List<TaskManifest> tasks = tasks(3, 8);
    store.failFrom(RequestType.COMPLETE_UPLOAD, 1, ErrorKind.FATAL);
    assertThatThrownBy(() -> engine().commit(append(tasks))).hasMessageContaining("injected");
    store.heal();
    String second = storedManifest().chunks().get(1).key();
    byte[] original = memory.content(second);
    String tampered = new String(original, StandardCharsets.UTF_8).replace("part-1-", "part-9-");
    memory.putObject(second, tampered.getBytes(StandardCharsets.UTF_8), false);

    assertThatThrownBy(() -> engine().resume(JOB))
        .isInstanceOf(FormatException.class)
        .hasMessageContaining(DEST.uriOf(second))
        .hasMessageContaining("changed after the commit point");
    assertThat(memory.openUploadIds()).hasSizeGreaterThanOrEqualTo(14);
    assertThat(memory.keys()).noneMatch(k -> k.contains("part-9-"));

    memory.putObject(second, original, false);
    engine().resume(JOB).orElseThrow();
    assertEveryFilePublished(24);
  }

  @Test
  void aMissingChunkIsRefusedNamingIt() throws Exception {
    List<TaskManifest> tasks = tasks(3, 8);
    store.failFrom(RequestType.COMPLETE_UPLOAD, 1, ErrorKind.FATAL);
    assertThatThrownBy(() -> engine().commit(append(tasks))).hasMessageContaining("injected");
    store.heal();
    String last = storedManifest().chunks().get(2).key();
    memory.deleteObjects(List.of(last));

    assertThatThrownBy(() -> engine().resume(JOB))
        .isInstanceOf(FormatException.class)
        .hasMessageContaining(DEST.uriOf(last))
        .hasMessageContaining("is missing");
    var inspected = new JobInspector(memory, layout).inspect();
    assertThat(inspected.jobs())
        .singleElement()
        .satisfies(job -> assertThat(job.state()).isEqualTo(JobInspector.State.DAMAGED));
  }

  @Test
  void aKeyWrittenByTwoAttemptsInDifferentChunksIsRefusedBeforeTheCommitPoint() throws Exception {
    List<TaskManifest> tasks = new ArrayList<>(tasks(3, 8));
    String twice = tasks.get(0).uploads().get(0).key();
    tasks.add(PendingUploads.task(store, JOB, "attempt_7_0", List.of(twice)));

    assertThatThrownBy(() -> engine().commit(append(tasks)))
        .isInstanceOf(InvalidJobException.class)
        .hasMessageContaining(DEST.uriOf(twice))
        .hasMessageContaining("attempt_0_0")
        .hasMessageContaining("attempt_7_0");
    assertThat(memory.keys()).doesNotContain(layout.jobManifestKey(JOB));
    assertThat(outputKeys()).isEmpty();

    engine().abort(JOB, tasks, true);
    assertThat(chunkKeys()).isEmpty();
    assertThat(memory.openUploadIds()).isEmpty();
  }

  @Test
  void aSecondCommitOfAJobWhoseManifestLandedIsRefusedAndLeavesTheFirstRunsChunksIntact()
      throws Exception {
    List<TaskManifest> tasks = tasks(3, 8);
    store.failFrom(RequestType.COMPLETE_UPLOAD, 1, ErrorKind.FATAL);
    assertThatThrownBy(() -> engine().commit(append(tasks))).hasMessageContaining("injected");
    store.heal();
    List<String> firstRun = chunkKeys();

    assertThatThrownBy(() -> engine().commit(append(tasks)))
        .isInstanceOf(CommitConflictException.class);
    assertThat(chunkKeys()).containsAll(firstRun);
    firstRun.forEach(key -> assertThat(storedChunkNamed(key)).isTrue());

    engine().resume(JOB).orElseThrow();
    assertEveryFilePublished(24);
  }

  private boolean storedChunkNamed(String key) {
    try {
      return storedManifest().chunks().stream().anyMatch(c -> c.key().equals(key));
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void storedTaskManifestsAreReadAsTheCommitGoes() throws Exception {
    JobRecords records = new JobRecords(store, layout);
    List<String> keys = new ArrayList<>();
    for (TaskManifest task : tasks(12, 3)) {
      records.saveTaskManifest(task);
      keys.add(layout.taskManifestKey(JOB, task.taskAttemptId()));
    }
    var before = memory.counters().snapshot();
    CommitResult result =
        engine()
            .commit(
                new JobCommitRequest(
                    JOB, "test", ConflictMode.APPEND, List.of(), List.of(), null, keys));
    var sent = memory.counters().since(before);

    assertThat(result.files()).isEqualTo(36);
    // 12 task manifests, 4 chunks to complete and 4 more for _SUCCESS's names, and the _SUCCESS
    // it replaces
    assertThat(sent.get(RequestType.GET_OBJECT)).isEqualTo(21);
    assertEveryFilePublished(36);
  }

  @Test
  void aStoredTaskManifestOutsideTheJobIsRefused() throws Exception {
    JobCommitRequest request =
        new JobCommitRequest(
            JOB,
            "test",
            ConflictMode.APPEND,
            List.of(),
            List.of(),
            null,
            List.of(DEST.keyOf("elsewhere/attempt_0_0.json")));
    assertThatThrownBy(() -> engine().commit(request))
        .isInstanceOf(InvalidJobException.class)
        .hasMessageContaining("does not lie under the job's task manifests");
  }

  @Test
  void replaceWithChunksDeletesOldObjectsButNotTheKeysTheJobWrites() throws Exception {
    memory.putObject(DEST.keyOf("p=0/old"), new byte[] {1}, false);
    memory.putObject(DEST.keyOf("p=0/part-0-0"), new byte[] {2}, false);
    memory.putObject(DEST.keyOf("p=1/part-1-5"), new byte[] {3}, false);
    memory.putObject(DEST.keyOf("q=9/other"), new byte[] {4}, false);
    List<TaskManifest> tasks = tasks(4, 6);
    JobCommitRequest request =
        new JobCommitRequest(
            JOB,
            "test",
            ConflictMode.REPLACE,
            tasks,
            List.of(DEST.keyOf("p=0/"), DEST.keyOf("p=1/")));

    CommitResult result = engine().commit(request);

    assertThat(result.deleted()).isEqualTo(1);
    assertThat(memory.keys()).doesNotContain(DEST.keyOf("p=0/old"));
    assertThat(memory.keys()).contains(DEST.keyOf("q=9/other"));
    assertEveryFilePublished(24);
  }

  @Test
  void theManifestOfAChunkedJobRoundTripsThroughItsFormat() throws Exception {
    List<TaskManifest> tasks = tasks(3, 8);
    store.failFrom(RequestType.COMPLETE_UPLOAD, 1, ErrorKind.FATAL);
    assertThatThrownBy(() -> engine().commit(append(tasks))).hasMessageContaining("injected");
    byte[] stored = memory.content(layout.jobManifestKey(JOB));

    JobManifest manifest = ManifestFormats.jobManifestFromJson(stored, "m.json");
    assertThat(manifest.fileCount()).isEqualTo(24);
    assertThat(manifest.chunks()).extracting(c -> c.fileCount()).containsExactly(10, 10, 4);
    assertThat(ManifestFormats.toJson(manifest)).isEqualTo(stored);
    assertThat(new String(stored, StandardCharsets.UTF_8))
        .contains("\"version\" : " + ManifestFormats.CHUNKED_JOB_MANIFEST_VERSION);
    assertThat(manifest.uploads()).isEmpty();
  }
}
