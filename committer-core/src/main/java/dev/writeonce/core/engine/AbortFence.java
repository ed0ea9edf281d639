package dev.writeonce.core.engine;

import dev.writeonce.core.errors.CommitConflictException;
import dev.writeonce.core.errors.CommitStateUnknownException;
import dev.writeonce.core.errors.ErrorKind;
import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.json.JobRecordFormat;
import dev.writeonce.core.store.StoreGateway;
import java.io.IOException;

/**
 * Makes an abort safe against a commit whose outcome is unknown. Before any upload is aborted, an
 * abort fence is created with {@code If-None-Match: *} at the key of the job manifest. Exactly one
 * of the two conditional writes wins: if the fence does, no manifest can land after it and the job
 * may be undone; if the manifest did, the job is committed and the abort is refused.
 */
final class AbortFence {

  private AbortFence() {}

  /**
   * Raises the fence.
   *
   * @return true when this call created it; false when it stood already (an earlier abort) or
   *     conditional writes are off
   */
  static boolean raise(
      StoreGateway store, JobLayout layout, JobRecords records, String jobId, boolean conditional)
      throws IOException {
    String key = layout.jobManifestKey(jobId);
    String uri = layout.destination().uriOf(key);
    if (!conditional) {
      // Without conditional writes there is no fence: the best is to look.
      if (store.headObject(key).isPresent()
          && records.loadCommitPoint(jobId) == JobRecords.CommitPoint.COMMITTED) {
        throw committed(jobId, uri);
      }
      return false;
    }
    try {
      store.putObject(key, JobRecordFormat.abortToJson(jobId, System.currentTimeMillis()), true);
      return true;
    } catch (StoreException e) {
      if (!e.is(ErrorKind.PRECONDITION_FAILED) && !e.is(ErrorKind.TRANSIENT)) {
        throw e;
      }
      JobRecords.CommitPoint found;
      try {
        found = records.loadCommitPoint(jobId);
      } catch (StoreException readFailure) {
        e.addSuppressed(readFailure);
        throw unknown(jobId, uri, e);
      }
      switch (found) {
        case COMMITTED -> throw committed(jobId, uri);
        case FENCED -> {
          // An earlier abort fenced the job, or ours landed although its answer was lost: not
          // knowing which, it is treated as another's and never released.
          return false;
        }
        case NONE -> throw unknown(jobId, uri, e);
      }
      throw new IllegalStateException("unreachable");
    }
  }

  private static CommitConflictException committed(String jobId, String uri) {
    return new CommitConflictException(
        "job "
            + jobId
            + " passed its commit point ("
            + uri
            + " exists): it cannot be aborted any more, only finished by recovery");
  }

  private static IOException unknown(String jobId, String uri, StoreException cause) {
    return new CommitStateUnknownException(
        "job "
            + jobId
            + " cannot be aborted yet: the abort fence at "
            + uri
            + " could not be written, so a commit in flight could still land. Nothing was"
            + " aborted; run 'writeonce recover' on the destination once the store answers again",
        cause);
  }
}
