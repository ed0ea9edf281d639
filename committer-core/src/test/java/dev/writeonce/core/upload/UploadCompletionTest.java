package dev.writeonce.core.upload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.errors.ErrorKind;
import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.model.PendingUpload;
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
        .isEqualTo(UploadCompletion.Result.CONFIRMED);
    assertThat(memory.content("t/part-0")).isEqualTo(DATA);
  }

  @Test
  void aRepeatedCompletionIsConfirmedAndATransientFailureThatCompletedNothingIsThrown()
      throws Exception {
    PendingUpload done = PendingUploads.upload(store, "t/part-0", DATA, "attempt_0");
    assertThat(UploadCompletion.completeOrConfirm(store, done, UploadCompletionTest::lost))
        .isEqualTo(UploadCompletion.Result.COMPLETED);
    assertThat(UploadCompletion.completeOrConfirm(store, done, UploadCompletionTest::lost))
        .isEqualTo(UploadCompletion.Result.CONFIRMED);

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

  private static final String KEY = "t/part-r-00000";

  /** A pending upload of one part with the given part ETag. */
  private static PendingUpload onePart(String partEtag) {
    return new PendingUpload(
        "bucket",
        KEY,
        "upload-1",
        java.util.List.of(new dev.writeonce.core.model.UploadPart(1, partEtag, DATA.length)),
        "attempt_0");
  }

  /** Whether an object of the upload's size with this ETag is taken for its completion. */
  private static boolean takenFor(PendingUpload upload, String objectEtag) {
    return UploadCompletion.isCompletedObject(
        upload, new dev.writeonce.core.store.ObjectInfo(KEY, DATA.length, objectEtag, 0));
  }

  /**
   * Where the part ETags are 32 hex digits (S3, MinIO and RGW; on AWS also with SSE-KMS, whose part
   * ETags are not MD5s of the data but keep that form), only the object the parts make is taken for
   * the completion: an older object of the same size and part count is not.
   */
  @Test
  void withPredictableEtagsAnOlderObjectOfTheSameSizeAndPartCountIsNotTakenForTheCompletion() {
    PendingUpload upload = onePart("0123456789abcdef0123456789abcdef");

    assertThat(takenFor(upload, upload.expectedEtag().orElseThrow())).isTrue();
    assertThat(takenFor(upload, "fedcba9876543210fedcba9876543210-1"))
        .as("a previous run's file of the same size")
        .isFalse();
  }

  /**
   * The window that remains, pinned: where part ETags are not 32 hex digits (SSE-C on some stores),
   * the completion cannot be predicted, and an older multipart object of the same size and the same
   * number of parts at the key is taken for it (docs/architecture.md, Guarantees).
   */
  @Test
  void withUnpredictableEtagsAnOlderMultipartObjectOfTheSameSizeAndPartCountIsTakenForIt() {
    PendingUpload upload = onePart("sse-c-part-etag");
    assertThat(upload.expectedEtag()).isEmpty();

    assertThat(takenFor(upload, "an-older-runs-etag-1")).isTrue();
    assertThat(takenFor(upload, "0123456789abcdef0123456789abcdef"))
        .as("a single PUT or a copy never passes")
        .isFalse();
  }
}
