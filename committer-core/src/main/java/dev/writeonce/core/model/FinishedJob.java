package dev.writeonce.core.model;

import java.util.Objects;

/**
 * A job that finished on a destination before the one its {@code _SUCCESS} names: one entry of the
 * history that {@code _SUCCESS} carries, so that a restarted driver of that job learns it finished
 * once its records are gone and a later job's {@code _SUCCESS} names the later job.
 *
 * @param jobId the id its records went under (with the run id where one was given before setup)
 * @param runUuid the run id of the finished run, or empty where the process that finished it did
 *     not know it
 * @param finishedAtMillis when its {@code _SUCCESS} was written, epoch millis by the store's clock
 */
public record FinishedJob(String jobId, String runUuid, long finishedAtMillis) {

  public FinishedJob {
    Objects.requireNonNull(jobId, "jobId");
    runUuid = Objects.requireNonNullElse(runUuid, "");
    if (jobId.isEmpty() || !isPlain(jobId)) {
      throw new IllegalArgumentException(
          "job id '" + jobId + "' of a finished job: expected a name without spaces or '/'");
    }
    if (!isPlain(runUuid)) {
      throw new IllegalArgumentException(
          "run id '" + runUuid + "' of finished job " + jobId + ": expected no spaces or '/'");
    }
  }

  /**
   * The entry of a finished run whose run id may be one that no entry can hold (with a space or a
   * '/'; the run ids this library makes or accepts never have them): then the run counts as
   * unknown.
   */
  public static FinishedJob of(String jobId, String runUuid, long finishedAtMillis) {
    String run = runUuid == null || !isPlain(runUuid) ? "" : runUuid;
    return new FinishedJob(jobId, run, finishedAtMillis);
  }

  private static boolean isPlain(String text) {
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c == '/' || Character.isWhitespace(c) || Character.isISOControl(c)) {
        return false;
      }
    }
    return true;
  }
}
