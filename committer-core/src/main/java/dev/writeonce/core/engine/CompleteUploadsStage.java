package dev.writeonce.core.engine;

import dev.writeonce.core.model.JobManifest;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.store.ErrorKind;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.StoreException;
import dev.writeonce.core.store.StoreGateway;
import java.io.IOException;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Completes every upload of a committed job in parallel. It is idempotent: an upload the store no
 * longer knows is confirmed by HEAD (size, and ETag where the parts predict it) and counted as
 * already done, so a second run after a crash neither fails nor redoes anything.
 */
final class CompleteUploadsStage {

  /** Uploads completed now, and uploads found already completed. */
  record Outcome(int completed, int confirmed) {}

  private CompleteUploadsStage() {}

  static Outcome run(JobCommitContext context, StoreGateway store, JobManifest manifest)
      throws IOException {
    AtomicInteger completed = new AtomicInteger();
    AtomicInteger confirmed = new AtomicInteger();
    Tasks.runStoppingOnFailure(
        context,
        "completing uploads",
        manifest.uploads(),
        upload -> {
          try {
            store.completeUpload(upload);
            completed.incrementAndGet();
          } catch (StoreException e) {
            // Ceph RGW answers a second completion with a 500 that the SDK retries and reports
            // as transient; AWS and MinIO answer NoSuchUpload. Both may mean "already done".
            if (!e.is(ErrorKind.NO_SUCH_UPLOAD) && !e.is(ErrorKind.TRANSIENT)) {
              throw e;
            }
            confirmDone(store, manifest, upload, e);
            confirmed.incrementAndGet();
          }
        });
    return new Outcome(completed.get(), confirmed.get());
  }

  private static void confirmDone(
      StoreGateway store, JobManifest manifest, PendingUpload upload, StoreException failure)
      throws IOException {
    Optional<ObjectInfo> object = store.headObject(upload.key());
    Optional<String> expectedEtag = upload.expectedEtag();
    if (object.isPresent()
        && object.get().size() == upload.length()
        && (expectedEtag.isEmpty() || expectedEtag.get().equals(object.get().etag()))) {
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
        "upload "
            + upload.uploadId()
            + " of "
            + uri
            + " ("
            + upload.length()
            + " bytes"
            + expectedEtag.map(etag -> ", ETag " + etag).orElse("")
            + ") is no longer known to the store and "
            + found
            + " is there: it was aborted or expired before job "
            + manifest.jobId()
            + " finished",
        failure);
  }
}
