package dev.writeonce.core.upload;

import dev.writeonce.core.errors.ErrorKind;
import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.StoreGateway;
import java.io.IOException;
import java.util.Optional;

/**
 * The one rule for completing a pending upload, used by the job commit and the rename shim alike:
 * complete it, and when the store answers that it no longer knows the upload (AWS and MinIO:
 * NoSuchUpload) or fails in a way that may hide a completion that went through (Ceph RGW answers a
 * second completion with a 500 that the SDK retries and reports as transient), confirm by HEAD that
 * the object is the one the upload makes.
 */
public final class UploadCompletion {

  /** What a completion did. */
  public enum Result {
    /** Completed by this call. */
    COMPLETED,
    /** Completed before (a repeated or resumed commit, or an answer that was lost). */
    CONFIRMED
  }

  /** The failure to report for an upload that is gone without having made its object. */
  @FunctionalInterface
  public interface Lost {
    /**
     * @param failure the store's answer to the completion
     * @param found what is at the upload's key instead, if anything
     */
    IOException describe(StoreException failure, Optional<ObjectInfo> found);
  }

  private UploadCompletion() {}

  /**
   * Completes the upload, or confirms it completed before.
   *
   * @throws IOException the store's failure, or {@code lost}'s when the upload is gone and its key
   *     holds something else
   */
  public static Result completeOrConfirm(StoreGateway store, PendingUpload upload, Lost lost)
      throws IOException {
    try {
      store.completeUpload(upload);
      return Result.COMPLETED;
    } catch (StoreException e) {
      if (!e.is(ErrorKind.NO_SUCH_UPLOAD) && !e.is(ErrorKind.TRANSIENT)) {
        throw e;
      }
      Optional<ObjectInfo> object = store.headObject(upload.key());
      if (object.isPresent() && isCompletedObject(upload, object.get())) {
        return Result.CONFIRMED;
      }
      if (e.is(ErrorKind.TRANSIENT)) {
        throw e;
      }
      throw lost.describe(e, object);
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
  public static boolean isCompletedObject(PendingUpload upload, ObjectInfo object) {
    return isCompletedObject(upload.length(), upload.expectedEtag(), upload.parts().size(), object);
  }

  /**
   * {@link #isCompletedObject(PendingUpload, ObjectInfo)} for an upload known by its length, the
   * ETag its parts predict (if they do) and its number of parts, as a record of it may keep them. A
   * part count of 0 (unknown) with no predicted ETag proves nothing: the answer is then false.
   */
  public static boolean isCompletedObject(
      long length, Optional<String> predictedEtag, int parts, ObjectInfo object) {
    if (object.size() != length) {
      return false;
    }
    if (predictedEtag.isPresent()) {
      return predictedEtag.get().equals(object.etag());
    }
    return parts > 0 && object.etag().endsWith("-" + parts);
  }
}
