package dev.writeonce.core.model;

import java.util.Optional;

/**
 * The rename shim's note of a rename it could not predict, written before it completes the upload
 * under the predicted key: while the note exists, an object at that key may be this miss's data
 * under a wrong name, and whoever finds the note deletes it, if it still is that data.
 *
 * @param bucket the bucket of every key below
 * @param sourceKey the pending file that was renamed
 * @param predictedKey where the upload completes (the key fixed when the upload started)
 * @param targetKey where the rename puts the data
 * @param uploadId the store's id of the upload
 * @param length the size of the completed object
 * @param etag the ETag the completed object will have, when its parts allow predicting it
 * @param parts how many parts the upload has; 0 in notes written before the count was kept
 * @param createdAtMillis when the note was written
 */
public record ShimMiss(
    String bucket,
    String sourceKey,
    String predictedKey,
    String targetKey,
    String uploadId,
    long length,
    Optional<String> etag,
    int parts,
    long createdAtMillis) {

  public ShimMiss {
    PendingUpload.requireText(bucket, "bucket");
    PendingUpload.requireText(sourceKey, "sourceKey");
    PendingUpload.requireText(predictedKey, "predictedKey");
    PendingUpload.requireText(targetKey, "targetKey");
    PendingUpload.requireText(uploadId, "uploadId");
    if (length < 0) {
      throw new IllegalArgumentException("miss of " + sourceKey + " has negative length");
    }
    if (predictedKey.equals(targetKey)) {
      throw new IllegalArgumentException(
          "miss of " + sourceKey + " names " + targetKey + " as both predicted and target key");
    }
    etag = etag == null ? Optional.empty() : etag;
    if (parts < 0) {
      throw new IllegalArgumentException("miss of " + sourceKey + " has a negative part count");
    }
  }

  /** The note of a miss about to complete this upload and copy it to the target key. */
  public static ShimMiss of(
      PendingUpload upload, String sourceKey, String targetKey, long createdAtMillis) {
    return new ShimMiss(
        upload.bucket(),
        sourceKey,
        upload.key(),
        targetKey,
        upload.uploadId(),
        upload.length(),
        upload.expectedEtag(),
        upload.parts().size(),
        createdAtMillis);
  }
}
