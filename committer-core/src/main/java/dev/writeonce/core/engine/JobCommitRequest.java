package dev.writeonce.core.engine;

import dev.writeonce.core.model.ConflictMode;
import dev.writeonce.core.model.TaskManifest;
import java.util.List;
import java.util.Objects;

/**
 * What a driver hands the engine to commit a job.
 *
 * @param jobId the job
 * @param committer the committer's name, recorded in the manifest and {@code _SUCCESS}
 * @param conflictMode the job's conflict mode
 * @param taskManifests one manifest per committed task: exactly one attempt per task
 * @param replacePrefixes in replace mode, the key prefixes whose existing objects the job replaces
 *     (the whole destination, or the partitions it wrote); empty otherwise
 */
public record JobCommitRequest(
    String jobId,
    String committer,
    ConflictMode conflictMode,
    List<TaskManifest> taskManifests,
    List<String> replacePrefixes) {

  public JobCommitRequest {
    JobLayout.checkName("job id", jobId);
    Objects.requireNonNull(committer, "committer");
    Objects.requireNonNull(conflictMode, "conflictMode");
    taskManifests = List.copyOf(taskManifests);
    replacePrefixes = List.copyOf(replacePrefixes);
    if (!replacePrefixes.isEmpty() && conflictMode != ConflictMode.REPLACE) {
      throw new IllegalArgumentException(
          "job "
              + jobId
              + " names prefixes to replace but runs in conflict mode "
              + conflictMode.id());
    }
  }
}
