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
    Map<String, Long> counters) {

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
  }
}
