package dev.writeonce.core.engine;

import dev.writeonce.core.model.ConflictMode;
import dev.writeonce.core.model.JobRecord;
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
 * @param record the job's record as its driver wrote it at setup, or null for a job set up without
 *     one; the engine marks it finished
 * @param storedTaskManifests keys of further task manifests, one per committed task, that the
 *     engine reads from the store as it goes rather than holding them all: the way to commit more
 *     uploads than the driver's memory holds
 * @param recordEtag the ETag of the record as the driver last wrote it, or null: the engine marks
 *     the job finished only over that object ({@code If-Match}), else it reads the record first
 */
public record JobCommitRequest(
    String jobId,
    String committer,
    ConflictMode conflictMode,
    List<TaskManifest> taskManifests,
    List<String> replacePrefixes,
    JobRecord record,
    List<String> storedTaskManifests,
    String recordEtag) {

  /** A request with stored task manifests, without the record's ETag. */
  public JobCommitRequest(
      String jobId,
      String committer,
      ConflictMode conflictMode,
      List<TaskManifest> taskManifests,
      List<String> replacePrefixes,
      JobRecord record,
      List<String> storedTaskManifests) {
    this(
        jobId,
        committer,
        conflictMode,
        taskManifests,
        replacePrefixes,
        record,
        storedTaskManifests,
        null);
  }

  /** A request whose task manifests are all in memory. */
  public JobCommitRequest(
      String jobId,
      String committer,
      ConflictMode conflictMode,
      List<TaskManifest> taskManifests,
      List<String> replacePrefixes,
      JobRecord record) {
    this(jobId, committer, conflictMode, taskManifests, replacePrefixes, record, List.of());
  }

  /** A request for a job without a job record. */
  public JobCommitRequest(
      String jobId,
      String committer,
      ConflictMode conflictMode,
      List<TaskManifest> taskManifests,
      List<String> replacePrefixes) {
    this(jobId, committer, conflictMode, taskManifests, replacePrefixes, null);
  }

  public JobCommitRequest {
    JobLayout.checkName("job id", jobId);
    Objects.requireNonNull(committer, "committer");
    Objects.requireNonNull(conflictMode, "conflictMode");
    taskManifests = List.copyOf(taskManifests);
    replacePrefixes = List.copyOf(replacePrefixes);
    storedTaskManifests = List.copyOf(storedTaskManifests);
    if (record != null && !record.jobId().equals(jobId)) {
      throw new IllegalArgumentException(
          "job " + jobId + " is committed with the record of job " + record.jobId());
    }
    if (!replacePrefixes.isEmpty() && conflictMode != ConflictMode.REPLACE) {
      throw new IllegalArgumentException(
          "job "
              + jobId
              + " names prefixes to replace but runs in conflict mode "
              + conflictMode.id());
    }
  }
}
