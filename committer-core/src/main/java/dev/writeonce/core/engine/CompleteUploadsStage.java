package dev.writeonce.core.engine;

import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.errors.UploadLostException;
import dev.writeonce.core.model.JobManifest;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.StoreGateway;
import dev.writeonce.core.upload.UploadCompletion;
import dev.writeonce.core.work.Tasks;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Completes every upload of a committed job in parallel. It is idempotent: an upload the store no
 * longer knows is confirmed by HEAD ({@link #isCompletedObject}) and counted as already done, so a
 * second run after a crash neither fails nor redoes anything. An upload that is gone with no object
 * to show for it (aborted by someone else, or expired) does not stop the others: every other upload
 * is still completed, and the lost ones are reported together.
 */
final class CompleteUploadsStage {

  /**
   * Uploads completed now, uploads found already completed, uploads lost, and the task attempts
   * whose uploads the manifest lists (gathered on the way, so that no chunk is read twice).
   */
  record Completed(
      int completed, int confirmed, List<UploadLostException> lost, Set<String> attempts) {}

  private CompleteUploadsStage() {}

  /** Completes the manifest's uploads, a chunk at a time for a chunked manifest. */
  static Completed run(
      JobCommitContext context, StoreGateway store, JobRecords records, JobManifest manifest)
      throws IOException {
    AtomicInteger completed = new AtomicInteger();
    AtomicInteger confirmed = new AtomicInteger();
    List<UploadLostException> lost = Collections.synchronizedList(new ArrayList<>());
    Set<String> attempts = new HashSet<>();
    ManifestUploads.forEachBatch(
        records,
        manifest,
        batch -> {
          batch.forEach(upload -> attempts.add(upload.taskAttempt()));
          Tasks.runStoppingOnFailure(
              context,
              "completing uploads",
              batch,
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
        });
    List<UploadLostException> sorted = new ArrayList<>(lost);
    sorted.sort((a, b) -> a.getMessage().compareTo(b.getMessage()));
    return new Completed(
        completed.get(), confirmed.get(), List.copyOf(sorted), Set.copyOf(attempts));
  }

  /** Completes an upload: true when completed now, false when confirmed completed before. */
  private static boolean completeOrConfirm(
      StoreGateway store, JobManifest manifest, PendingUpload upload) throws IOException {
    return UploadCompletion.completeOrConfirm(
            store, upload, (failure, found) -> lost(manifest, upload, failure, found))
        == UploadCompletion.Result.COMPLETED;
  }

  private static UploadLostException lost(
      JobManifest manifest,
      PendingUpload upload,
      StoreException failure,
      Optional<ObjectInfo> object) {
    String uri = manifest.destination().uriOf(upload.key());
    String found =
        object
            .map(o -> "an object of " + o.size() + " bytes with ETag " + o.etag())
            .orElse("no object");
    return new UploadLostException(
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
