package dev.writeonce.shim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.errors.ErrorKind;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.store.RequestType;
import dev.writeonce.core.testing.FaultInjectingStore;
import dev.writeonce.core.testing.InMemoryStore;
import dev.writeonce.core.testing.PendingUploads;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;

/**
 * Misses against an in-memory store, with faults the real stores cannot be made to show: a copy
 * that fails after the completion, a delete that fails after that, a process that dies.
 */
class ShimMissesTest {

  private static final String SOURCE = "out/_temporary/0/task_202611220000_0001_m_000000/part-0";
  private static final String PREDICTED = "out/part-0";
  private static final String TARGET = "out/renamed-0";
  private static final byte[] DATA = "the miss's data\n".getBytes(StandardCharsets.UTF_8);

  private final InMemoryStore memory = new InMemoryStore("bucket");
  private final FaultInjectingStore store = new FaultInjectingStore(memory);
  private final ShimMisses misses =
      new ShimMisses(
          store, ShimConfig.from(new Configuration(false), "bucket").rules(), () -> 1_000L);

  private final ShimMisses.Completer completion = upload -> store.completeUpload(upload);

  /** S3A's rename of a file, in memory: the object at the new key, the old one deleted. */
  private final ShimMisses.Copy copy =
      (from, to) -> {
        store.putObject(to, memory.content(from), false);
        store.deleteObjects(List.of(from));
        return true;
      };

  private static final ShimMisses.Copy FAILING_COPY =
      (from, to) -> {
        throw new IOException("injected: the COPY failed");
      };

  private PendingUpload pending() throws IOException {
    return PendingUploads.upload(store, PREDICTED, DATA, "attempt_1");
  }

  private List<String> recordKeys() {
    return memory.keys().stream().filter(ShimMisses::isRecord).toList();
  }

  @Test
  void aMissLeavesTheDataAtTheTargetOnlyWithARecordWrittenAndDeleted() throws IOException {
    misses.completeAndCopy(SOURCE, pending(), TARGET, completion, copy);

    assertThat(memory.keys()).containsExactly(TARGET);
    assertThat(memory.content(TARGET)).isEqualTo(DATA);
    assertThat(memory.openUploadIds()).isEmpty();
    assertThat(store.calls(RequestType.PUT_OBJECT)).as("the record, then the copy").isEqualTo(2);
  }

  @Test
  void theRecordLiesInAHiddenDirectoryUnderTheOutermostTemporaryRoot() {
    assertThat(misses.recordKey(SOURCE, "upload-1"))
        .startsWith("out/_temporary/" + ShimMisses.DIRECTORY + "/")
        .endsWith(".json")
        .isEqualTo(misses.recordKey(SOURCE, "upload-1"));
    assertThat(ShimMisses.isRecord(misses.recordKey(SOURCE, "upload-1"))).isTrue();
  }

  @Test
  void aFailedCopyDeletesThePredictedKeyAndFailsNamingSourceTargetAndPrediction()
      throws IOException {
    PendingUpload upload = pending();

    assertThatThrownBy(
            () -> misses.completeAndCopy(SOURCE, upload, TARGET, completion, FAILING_COPY))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("s3a://bucket/" + SOURCE)
        .hasMessageContaining("s3a://bucket/" + TARGET)
        .hasMessageContaining("s3a://bucket/" + PREDICTED)
        .hasMessageContaining("visible under neither name")
        .hasRootCauseMessage("injected: the COPY failed");

    assertThat(memory.keys()).as("nothing at the predicted key, the target, or a record").isEmpty();
    assertThat(memory.openUploadIds()).isEmpty();
  }

  @Test
  void whenEvenTheDeleteFailsTheRecordStaysAndTheCleanupRemovesThePredictedKey()
      throws IOException {
    PendingUpload upload = pending();
    store.failFrom(RequestType.DELETE_OBJECTS, 1, ErrorKind.TRANSIENT);

    assertThatThrownBy(
            () -> misses.completeAndCopy(SOURCE, upload, TARGET, completion, FAILING_COPY))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("deleting it failed too")
        .hasMessageContaining("Delete it, or delete s3a://bucket/out/_temporary through the rename")
        .hasMessageContaining("s3a://bucket/" + PREDICTED);
    assertThat(memory.keys()).contains(PREDICTED).hasSize(2);
    assertThat(recordKeys()).hasSize(1);

    store.heal();
    misses.cleanUp(memory.listObjects("out/_temporary/"));

    assertThat(memory.keys())
        .as("the record is left to the delete of its tree")
        .isEqualTo(recordKeys());
    assertThat(memory.openUploadIds()).isEmpty();
  }

  @Test
  void aProcessThatDiedBeforeTheCompletionLeavesARecordWhoseCleanupAbortsTheUpload()
      throws IOException {
    PendingUpload upload = pending();
    store.failFrom(RequestType.DELETE_OBJECTS, 1, ErrorKind.TRANSIENT);
    ShimMisses.Completer dies =
        pendingUpload -> {
          throw new IllegalStateException("injected: the process stops here");
        };

    assertThatThrownBy(() -> misses.completeAndCopy(SOURCE, upload, TARGET, dies, copy))
        .hasMessageContaining("deleting it failed too");
    assertThat(memory.openUploadIds()).hasSize(1);

    store.heal();
    misses.cleanUp(memory.listObjects("out/_temporary/"));

    assertThat(memory.openUploadIds()).isEmpty();
    assertThat(memory.keys()).isEqualTo(recordKeys());
  }

  @Test
  void theCleanupLeavesAnotherWritersObjectAtThePredictedKey() throws IOException {
    PendingUpload upload = pending();
    store.failFrom(RequestType.DELETE_OBJECTS, 1, ErrorKind.TRANSIENT);
    assertThatThrownBy(
            () -> misses.completeAndCopy(SOURCE, upload, TARGET, completion, FAILING_COPY))
        .isInstanceOf(IOException.class);
    store.heal();
    byte[] theirs = "another writer's object, written later\n".getBytes(StandardCharsets.UTF_8);
    store.putObject(PREDICTED, theirs, false);

    misses.cleanUp(memory.listObjects("out/_temporary/"));

    assertThat(memory.content(PREDICTED)).isEqualTo(theirs);
  }

  @Test
  void theCleanupLeavesTheSameBytesWrittenAtThePredictedKeyByALaterJob() throws IOException {
    PendingUpload upload = pending();
    store.failFrom(RequestType.DELETE_OBJECTS, 1, ErrorKind.TRANSIENT);
    assertThatThrownBy(
            () -> misses.completeAndCopy(SOURCE, upload, TARGET, completion, FAILING_COPY))
        .isInstanceOf(IOException.class);
    store.heal();
    // A retried job, minutes later, writes the same bytes there through a hit: same ETag.
    memory.advanceClock(5 * 60_000);
    store.deleteObjects(List.of(PREDICTED));
    store.completeUpload(pending());
    assertThat(memory.content(PREDICTED)).isEqualTo(DATA);

    misses.cleanUp(memory.listObjects("out/_temporary/"));

    assertThat(memory.content(PREDICTED)).as("the later job's output").isEqualTo(DATA);
  }

  @Test
  void objectsThatAreNotMissRecordsAreLeftAlone() throws IOException {
    store.putObject(
        "out/_temporary/0/task_1/data.json", "{}".getBytes(StandardCharsets.UTF_8), false);

    misses.cleanUp(memory.listObjects("out/_temporary/"));

    assertThat(store.calls(RequestType.GET_OBJECT)).isZero();
  }
}
