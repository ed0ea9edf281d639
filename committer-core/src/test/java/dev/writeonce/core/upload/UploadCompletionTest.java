package dev.writeonce.core.upload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.store.ErrorKind;
import dev.writeonce.core.store.RequestType;
import dev.writeonce.core.testing.FaultInjectingStore;
import dev.writeonce.core.testing.InMemoryStore;
import dev.writeonce.core.testing.PendingUploads;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The one complete-or-confirm rule that the job commit and the rename shim share. */
class UploadCompletionTest {

  private static final byte[] DATA = "a file\n".getBytes(StandardCharsets.UTF_8);

  private final InMemoryStore memory = new InMemoryStore("bucket");
  private final FaultInjectingStore store = new FaultInjectingStore(memory);

  private static IOException lost(StoreException failure, java.util.Optional<?> found) {
    return new IOException("lost: " + found.map(any -> "something else").orElse("nothing"));
  }

  @Test
  void aCompletionWhoseAnswerWasLostIsConfirmedByHead() throws Exception {
    PendingUpload upload = PendingUploads.upload(store, "t/part-0", DATA, "attempt_0");
    store.loseAnswerOf(RequestType.COMPLETE_UPLOAD, 1, ErrorKind.TRANSIENT);

    assertThat(UploadCompletion.completeOrConfirm(store, upload, UploadCompletionTest::lost))
        .isEqualTo(UploadCompletion.Outcome.CONFIRMED);
    assertThat(memory.content("t/part-0")).isEqualTo(DATA);
  }

  @Test
  void aRepeatedCompletionIsConfirmedAndATransientFailureThatCompletedNothingIsThrown()
      throws Exception {
    PendingUpload done = PendingUploads.upload(store, "t/part-0", DATA, "attempt_0");
    assertThat(UploadCompletion.completeOrConfirm(store, done, UploadCompletionTest::lost))
        .isEqualTo(UploadCompletion.Outcome.COMPLETED);
    assertThat(UploadCompletion.completeOrConfirm(store, done, UploadCompletionTest::lost))
        .isEqualTo(UploadCompletion.Outcome.CONFIRMED);

    PendingUpload pending = PendingUploads.upload(store, "t/part-1", DATA, "attempt_0");
    store.failOnce(
        RequestType.COMPLETE_UPLOAD,
        store.calls(RequestType.COMPLETE_UPLOAD) + 1,
        ErrorKind.TRANSIENT);
    assertThatThrownBy(
            () -> UploadCompletion.completeOrConfirm(store, pending, UploadCompletionTest::lost))
        .isInstanceOf(StoreException.class)
        .matches(e -> ((StoreException) e).is(ErrorKind.TRANSIENT));
    assertThat(memory.content("t/part-1")).isNull();
  }

  @Test
  void anUploadGoneWithAnotherObjectAtItsKeyIsReportedLost() throws Exception {
    PendingUpload upload = PendingUploads.upload(store, "t/part-0", DATA, "attempt_0");
    memory.abortUpload(upload.key(), upload.uploadId());
    memory.putObject("t/part-0", "another writer's".getBytes(StandardCharsets.UTF_8), false);

    assertThatThrownBy(
            () -> UploadCompletion.completeOrConfirm(store, upload, UploadCompletionTest::lost))
        .hasMessage("lost: something else");
  }
}
