package dev.writeonce.core.model;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A multipart upload whose parts are in the store but which is not completed: the object does not
 * exist until the job commit completes it.
 *
 * @param bucket the bucket of the upload
 * @param key the object key the upload will create
 * @param uploadId the store's id of the upload
 * @param parts the uploaded parts, numbered 1..n without gaps
 * @param taskAttempt the task attempt that wrote the data
 */
public record PendingUpload(
    String bucket, String key, String uploadId, List<UploadPart> parts, String taskAttempt) {

  public PendingUpload {
    requireText(bucket, "bucket");
    requireText(key, "key");
    requireText(uploadId, "uploadId");
    requireText(taskAttempt, "taskAttempt");
    Objects.requireNonNull(parts, "parts");
    if (parts.isEmpty()) {
      throw new IllegalArgumentException("upload of " + key + " has no parts");
    }
    parts = List.copyOf(parts);
    for (int i = 0; i < parts.size(); i++) {
      if (parts.get(i).number() != i + 1) {
        throw new IllegalArgumentException(
            "upload of "
                + key
                + " has part "
                + parts.get(i).number()
                + " at position "
                + (i + 1)
                + ": parts must be numbered 1.."
                + parts.size()
                + " without gaps");
      }
    }
  }

  /** The object's length once completed: the sum of its parts. */
  public long length() {
    long total = 0;
    for (UploadPart part : parts) {
      total += part.size();
    }
    return total;
  }

  /** The ETag the completed object will have, where the part ETags allow predicting it. */
  public Optional<String> expectedEtag() {
    return Etags.multipartEtag(parts);
  }

  static void requireText(String value, String name) {
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException(name + " is missing");
    }
  }
}
