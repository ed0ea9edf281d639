package dev.writeonce.core.model;

import java.util.Objects;

/**
 * A job's own durable state under its destination, written by the driver at job setup and rewritten
 * at each change of state. It makes a job's identity and its end explicit, where they would
 * otherwise be guessed from other objects: a job id reused by another job is refused at setup, a
 * repeated job commit is refused, and a finished job whose other records were left behind is never
 * taken for an unfinished one.
 *
 * <p>Whether a job passed its commit point is not stated here: the job manifest's existence is the
 * one and only commit point.
 *
 * @param jobId the job id its records are kept under
 * @param uuid the id of this run of the job: unique, where the job id may not be
 * @param destination the job's destination
 * @param state where the job stands
 * @param host the host of the driver that wrote the record
 * @param createdAtMillis when the job was set up, in epoch millis
 * @param updatedAtMillis when the state was last written, in epoch millis
 * @param leaseMillis how long the job counts as live after its driver last wrote this record or
 *     renewed its lease: recover and purge leave a live job alone
 */
public record JobRecord(
    String jobId,
    String uuid,
    Destination destination,
    State state,
    String host,
    long createdAtMillis,
    long updatedAtMillis,
    long leaseMillis) {

  /** The states a job's record passes through. */
  public enum State {
    /** Set up; tasks may commit. */
    RUNNING,
    /** The driver is committing: task commits from now on are in doubt and left to the driver. */
    COMMITTING,
    /** Every file is published and {@code _SUCCESS} written; only cleanup may remain. */
    FINISHED,
    /** Aborted before its commit point; nothing of it was published. */
    ABORTED;

    public String id() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }

    public static State parse(String id) {
      for (State state : values()) {
        if (state.id().equals(id)) {
          return state;
        }
      }
      throw new IllegalArgumentException("unknown job state '" + id + "'");
    }
  }

  public JobRecord {
    PendingUpload.requireText(jobId, "jobId");
    PendingUpload.requireText(uuid, "uuid");
    Objects.requireNonNull(destination, "destination");
    Objects.requireNonNull(state, "state");
    PendingUpload.requireText(host, "host");
    if (leaseMillis < 0) {
      throw new IllegalArgumentException("leaseMillis is negative: " + leaseMillis);
    }
  }

  /** The same job in another state, written at the given time. */
  public JobRecord withState(State newState, long nowMillis) {
    return new JobRecord(
        jobId, uuid, destination, newState, host, createdAtMillis, nowMillis, leaseMillis);
  }

  /** Whether the job may still have a driver working on it: set up or committing. */
  public boolean isInProgress() {
    return state == State.RUNNING || state == State.COMMITTING;
  }

  /** The name of the host this process runs on, as records and {@code _SUCCESS} give it. */
  public static String thisHost() {
    try {
      return java.net.InetAddress.getLocalHost().getHostName();
    } catch (java.net.UnknownHostException e) {
      return "unknown";
    }
  }

  /**
   * True when a caller that knows the given run id (or none: a task whose configuration never
   * carried it) may act as this record's run.
   */
  public boolean isRun(java.util.Optional<String> runUuid) {
    return runUuid.isEmpty() || runUuid.get().equals(uuid);
  }
}
