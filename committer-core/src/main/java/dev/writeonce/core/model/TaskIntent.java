package dev.writeonce.core.model;

import java.util.List;
import java.util.Objects;

/**
 * What a task attempt is about to upload, written before its first multipart upload is created. A
 * task that dies while uploading leaves uploads that no task manifest names; its intent lets the
 * job (or recovery) find them from the store alone, by listing the open uploads of each key, which
 * every store supports (MinIO lists uploads of an exact key only, never of a directory).
 *
 * @param jobId the job the attempt belongs to
 * @param taskAttemptId the attempt
 * @param keys the keys the attempt will create uploads for
 */
public record TaskIntent(String jobId, String taskAttemptId, List<String> keys) {

  public TaskIntent {
    PendingUpload.requireText(jobId, "jobId");
    PendingUpload.requireText(taskAttemptId, "taskAttemptId");
    keys = List.copyOf(Objects.requireNonNull(keys, "keys"));
  }
}
