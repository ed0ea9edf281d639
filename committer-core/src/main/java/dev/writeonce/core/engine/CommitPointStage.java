package dev.writeonce.core.engine;

import dev.writeonce.core.errors.CommitConflictException;
import dev.writeonce.core.errors.CommitStateUnknownException;
import dev.writeonce.core.errors.ErrorKind;
import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.json.ManifestFormats;
import dev.writeonce.core.model.JobManifest;
import dev.writeonce.core.store.StoreGateway;
import java.io.IOException;
import java.util.Arrays;
import java.util.Optional;

/**
 * Writes the job manifest: the commit point. Before it returns, abort may still undo the job; after
 * it returns, the job is committed. A failure that leaves the outcome open is reported as {@link
 * CommitStateUnknownException}, and then nothing may be cleaned up.
 */
final class CommitPointStage {

  private CommitPointStage() {}

  static void write(StoreGateway store, JobLayout layout, JobManifest manifest, boolean conditional)
      throws IOException {
    String key = layout.jobManifestKey(manifest.jobId());
    String uri = layout.destination().uriOf(key);
    byte[] json = ManifestFormats.toJson(manifest);
    try {
      store.putObject(key, json, conditional);
    } catch (StoreException e) {
      if (e.is(ErrorKind.PRECONDITION_FAILED)) {
        // An earlier attempt of this very write may have landed before its response was lost.
        if (isOurs(store, key, json)) {
          return;
        }
        if (JobRecords.CommitPoint.FENCED
            == new JobRecords(store, layout).loadCommitPoint(manifest.jobId())) {
          throw new CommitConflictException(
              "job "
                  + manifest.jobId()
                  + " was aborted ("
                  + uri
                  + " holds its abort fence): it can no longer be committed. Nothing was"
                  + " completed");
        }
        throw new CommitConflictException(
            "job "
                + manifest.jobId()
                + " was already committed by another driver: "
                + uri
                + " exists with other content. Job ids must be unique per destination.");
      }
      if (e.is(ErrorKind.TRANSIENT)) {
        boolean landed;
        try {
          landed = isOurs(store, key, json);
        } catch (StoreException headFailure) {
          e.addSuppressed(headFailure);
          throw unknown(manifest, uri, e);
        }
        if (landed) {
          return;
        }
        throw unknown(manifest, uri, e);
      }
      throw e;
    }
  }

  /**
   * Whether the manifest key holds exactly these bytes. Compared byte for byte (the manifest is
   * small), never by ETag: under SSE-KMS or SSE-C an ETag is not the MD5 of the content.
   */
  private static boolean isOurs(StoreGateway store, String key, byte[] json) throws StoreException {
    Optional<byte[]> existing = store.getObject(key);
    return existing.isPresent() && Arrays.equals(existing.get(), json);
  }

  private static CommitStateUnknownException unknown(
      JobManifest manifest, String uri, StoreException cause) {
    return new CommitStateUnknownException(
        "could not tell whether job "
            + manifest.jobId()
            + " reached its commit point: the write of "
            + uri
            + " failed and the object is not visible. Nothing was completed or cleaned up; run"
            + " recovery on the destination once the store answers again, which finishes the job"
            + " if the manifest landed and aborts it otherwise.",
        cause);
  }
}
