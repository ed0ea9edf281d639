package dev.writeonce.core.model;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The pending uploads of one committed task attempt, and its statistics.
 *
 * @param jobId the job the attempt belongs to
 * @param taskAttemptId the attempt that committed
 * @param uploads the uploads it leaves for the job commit
 * @param statistics counters of the task (files, bytes, requests by type)
 */
public record TaskManifest(
    String jobId, String taskAttemptId, List<PendingUpload> uploads, Map<String, Long> statistics) {

  public TaskManifest {
    PendingUpload.requireText(jobId, "jobId");
    PendingUpload.requireText(taskAttemptId, "taskAttemptId");
    uploads = List.copyOf(Objects.requireNonNull(uploads, "uploads"));
    statistics = Map.copyOf(Objects.requireNonNull(statistics, "statistics"));
  }

  /** The bytes of all uploads of the attempt. */
  public long totalBytes() {
    return uploads.stream().mapToLong(PendingUpload::length).sum();
  }
}
