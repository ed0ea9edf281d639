package dev.writeonce.core.model;

import java.util.List;
import java.util.Objects;

/**
 * What the rename shim keeps at a temporary path in place of a file's data: the multipart upload
 * that holds the data under its predicted final key. A record is written when the writer closes,
 * and for files of more than one part also when the upload starts (without parts), so that the
 * upload of an interrupted writer can still be found and aborted.
 *
 * @param bucket the bucket of the upload
 * @param key the key the upload will create: the file's predicted final key
 * @param uploadId the store's id of the upload
 * @param parts the uploaded parts, numbered 1..n; empty while the writer is open
 * @param taskAttempt the task attempt that wrote the file, or "unknown"
 * @param closed whether the writer closed, so that the parts are the whole file
 * @param createdAtMillis when the record was written
 */
public record PendingFile(
    String bucket,
    String key,
    String uploadId,
    List<UploadPart> parts,
    String taskAttempt,
    boolean closed,
    long createdAtMillis) {

  public PendingFile {
    PendingUpload.requireText(bucket, "bucket");
    PendingUpload.requireText(key, "key");
    PendingUpload.requireText(uploadId, "uploadId");
    PendingUpload.requireText(taskAttempt, "taskAttempt");
    parts = List.copyOf(Objects.requireNonNull(parts, "parts"));
    if (closed) {
      // Validates numbering and non-emptiness.
      new PendingUpload(bucket, key, uploadId, parts, taskAttempt);
    } else if (!parts.isEmpty()) {
      throw new IllegalArgumentException(
          "pending file " + key + " is still being written but lists parts");
    }
  }

  /** The record of a closed writer. */
  public static PendingFile closed(PendingUpload upload, long createdAtMillis) {
    return new PendingFile(
        upload.bucket(),
        upload.key(),
        upload.uploadId(),
        upload.parts(),
        upload.taskAttempt(),
        true,
        createdAtMillis);
  }

  /** The record of a writer whose upload has started and which has not closed yet. */
  public static PendingFile writing(
      String bucket, String key, String uploadId, String taskAttempt, long createdAtMillis) {
    return new PendingFile(bucket, key, uploadId, List.of(), taskAttempt, false, createdAtMillis);
  }

  /** The upload to complete; only for a closed writer. */
  public PendingUpload upload() {
    if (!closed) {
      throw new IllegalStateException(
          "the writer of s3a://" + bucket + "/" + key + " never closed: its upload is incomplete");
    }
    return new PendingUpload(bucket, key, uploadId, parts, taskAttempt);
  }

  /** The file's length: the sum of its parts, 0 while it is being written. */
  public long length() {
    long total = 0;
    for (UploadPart part : parts) {
      total += part.size();
    }
    return total;
  }
}
