package dev.writeonce.core.engine;

import dev.writeonce.core.model.JobManifest;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.store.ErrorKind;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.StoreException;
import dev.writeonce.core.store.StoreGateway;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Completes every upload of a committed job in parallel. It is idempotent: an upload the store no
 * longer knows is confirmed by HEAD ({@link #isCompletedObject}) and counted as already done, so a
 * second run after a crash neither fails nor redoes anything. An upload that is gone with no object
 * to show for it (aborted by someone else, or expired) does not stop the others: every other upload
 * is still completed, and the lost ones are reported together.
 */
final class CompleteUploadsStage {

  /** Uploads completed now, uploads found already completed, and uploads lost. */
  record Outcome(int completed, int confirmed, List<UploadLostException> lost) {}

  private CompleteUploadsStage() {}

  static Outcome run(JobCommitContext context, StoreGateway store, JobManifest manifest)
      throws IOException {
    AtomicInteger completed = new AtomicInteger();
    AtomicInteger confirmed = new AtomicInteger();
    List<UploadLostException> lost = Collections.synchronizedList(new ArrayList<>());
    Tasks.runStoppingOnFailure(
        context,
        "completing uploads",
        manifest.uploads(),
        upload -> {
          try {
            if (completeOrConfirm(store, manifest, upload)) {
              completed.incrementAndGet();
            } else {
              confirmed.incrementAndGet();
            }
          } catch (UploadLostException gone) {
            lost.add(gone);
          }
        });
    List<UploadLostException> sorted = new ArrayList<>(lost);
    sorted.sort((a, b) -> a.getMessage().compareTo(b.getMessage()));
    return new Outcome(completed.get(), confirmed.get(), List.copyOf(sorted));
  }

  /** Completes an upload: true when completed now, false when confirmed completed before. */
  private static boolean completeOrConfirm(
      StoreGateway store, JobManifest manifest, PendingUpload upload) throws IOException {
    try {
      store.completeUpload(upload);
      return true;
    } catch (StoreException e) {
      // Ceph RGW answers a second completion with a 500 that the SDK retries and reports as
      // transient; AWS and MinIO answer NoSuchUpload. Both may mean "already done".
      if (!e.is(ErrorKind.NO_SUCH_UPLOAD) && !e.is(ErrorKind.TRANSIENT)) {
        throw e;
      }
      confirmDone(store, manifest, upload, e);
      return false;
    }
  }

  /**
   * Whether an object is what completing the upload made. The size must match. Where the part ETags
   * allow predicting the object's ETag (each a 32-digit hex ETag, as S3, MinIO and Ceph RGW give
   * when the parts are not encrypted with SSE-C), the object's ETag must be that prediction. Where
   * they do not, the rule never assumes an ETag is an MD5: the object's ETag must be a multipart
   * ETag of as many parts ({@code ...-N}), which no single PUT and no copy by another writer
   * produces.
   */
  static boolean isCompletedObject(PendingUpload upload, ObjectInfo object) {
    if (object.size() != upload.length()) {
      return false;
    }
    Optional<String> predicted = upload.expectedEtag();
    if (predicted.isPresent()) {
      return predicted.get().equals(object.etag());
    }
    return object.etag().endsWith("-" + upload.parts().size());
  }

  private static void confirmDone(
      StoreGateway store, JobManifest manifest, PendingUpload upload, StoreException failure)
      throws IOException {
    Optional<ObjectInfo> object = store.headObject(upload.key());
    if (object.isPresent() && isCompletedObject(upload, object.get())) {
      return;
    }
    if (failure.is(ErrorKind.TRANSIENT)) {
      throw failure;
    }
    String uri = manifest.destination().uriOf(upload.key());
    String found =
        object
            .map(o -> "an object of " + o.size() + " bytes with ETag " + o.etag())
            .orElse("no object");
    throw new UploadLostException(
        upload.key(),
        "upload "
            + upload.uploadId()
            + " of "
            + uri
            + " ("
            + upload.length()
            + " bytes"
            + upload.expectedEtag().map(etag -> ", ETag " + etag).orElse("")
            + ") is no longer known to the store and "
            + found
            + " is there: it was aborted or expired before job "
            + manifest.jobId()
            + " finished",
        failure);
  }
}
