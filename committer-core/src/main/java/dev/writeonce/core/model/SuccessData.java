package dev.writeonce.core.model;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The {@code _SUCCESS} marker of a committed job, in the shape of Hadoop's S3A {@code SuccessData}
 * so that tools which read that file read this one.
 *
 * @param timestamp when the job finished, epoch millis
 * @param date the same time, human-readable
 * @param hostname the host that finished the job
 * @param committer the committer's name
 * @param description a line about the job
 * @param jobId the job id
 * @param jobIdSource where the job id came from
 * @param metrics job metrics: files, bytes, stage durations
 * @param diagnostics settings and facts useful when reading the job back
 * @param filenames the first files of the job, as many as the configured limit
 * @param counters requests by type and other counts, written as iostatistics counters
 * @param finishedJobs the jobs that finished on the destination before this one, newest first, none
 *     of them this job: what a restarted driver reads, once its job's records are gone and a later
 *     job's {@code _SUCCESS} names the later job, to learn that its job finished
 */
public record SuccessData(
    long timestamp,
    String date,
    String hostname,
    String committer,
    String description,
    String jobId,
    String jobIdSource,
    Map<String, Long> metrics,
    Map<String, String> diagnostics,
    List<String> filenames,
    Map<String, Long> counters,
    List<FinishedJob> finishedJobs) {

  public SuccessData {
    Objects.requireNonNull(committer, "committer");
    Objects.requireNonNull(jobId, "jobId");
    date = Objects.requireNonNullElse(date, "");
    hostname = Objects.requireNonNullElse(hostname, "");
    description = Objects.requireNonNullElse(description, "");
    jobIdSource = Objects.requireNonNullElse(jobIdSource, "");
    metrics = Map.copyOf(metrics);
    diagnostics = Map.copyOf(diagnostics);
    filenames = List.copyOf(filenames);
    counters = Map.copyOf(counters);
    finishedJobs = List.copyOf(finishedJobs);
    if (diagnostics.containsKey(CommitStatistics.FINISHED_JOBS)) {
      throw new IllegalArgumentException(
          CommitStatistics.FINISHED_JOBS
              + " is written from finishedJobs, not given as a diagnostic");
    }
    for (FinishedJob earlier : finishedJobs) {
      if (earlier.jobId().equals(jobId)) {
        throw new IllegalArgumentException(
            "job " + jobId + " is named by its own _SUCCESS and cannot be in its history too");
      }
    }
  }

  /** A marker without a history: the first on its destination, or another writer's. */
  public SuccessData(
      long timestamp,
      String date,
      String hostname,
      String committer,
      String description,
      String jobId,
      String jobIdSource,
      Map<String, Long> metrics,
      Map<String, String> diagnostics,
      List<String> filenames,
      Map<String, Long> counters) {
    this(
        timestamp,
        date,
        hostname,
        committer,
        description,
        jobId,
        jobIdSource,
        metrics,
        diagnostics,
        filenames,
        counters,
        List.of());
  }

  /** Whether this marker names the job, as its own or among the jobs that finished before it. */
  public boolean namesFinished(String job) {
    return jobId.equals(job) || finishedEarlier(job);
  }

  /** Whether the job is among those that finished before this marker's own. */
  public boolean finishedEarlier(String job) {
    for (FinishedJob earlier : finishedJobs) {
      if (earlier.jobId().equals(job)) {
        return true;
      }
    }
    return false;
  }
}
