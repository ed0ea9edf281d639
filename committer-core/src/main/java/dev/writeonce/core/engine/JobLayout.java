package dev.writeonce.core.engine;

import dev.writeonce.core.model.Destination;
import java.util.regex.Pattern;

/**
 * Where a job keeps its records under its destination. Names start with '_' so that Spark, Hive and
 * MapReduce input formats skip them when they read the table.
 *
 * <pre>
 * dest/_writeonce/jobs/JOB/job.json             the job record: identity and state, removed last
 * dest/_writeonce/jobs/JOB/lease.json           renewed by the driver while a long job runs
 * dest/_writeonce/jobs/JOB/intents/ATTEMPT.json the keys an attempt uploads, written before it does
 * dest/_writeonce/jobs/JOB/tasks/ATTEMPT.json   one task manifest per committed task attempt
 * dest/_writeonce/jobs/JOB/manifest.json        the job manifest (the commit point), or the
 *                                               abort fence that forbids it
 * dest/_writeonce/jobs/JOB/chunks/RUN-N.json    for a large job, the parts of its manifest,
 *                                               written before it by one commit run
 * dest/_writeonce/fail-mode.claim              held by the one job committing in conflict mode fail
 * dest/_SUCCESS                                 written once the job is finished; it names the job
 *                                               and the last jobs that finished before it
 * </pre>
 *
 * <p>A finished job leaves nothing under {@code _writeonce/}: its records go once it is finished,
 * and the destination holds its output and {@code _SUCCESS}, as after Hadoop's committers. What a
 * restarted driver must know of a finished job once its records are gone, that it finished, is in
 * {@code _SUCCESS}. An aborted job's fence, and the intents of attempts that may still be
 * uploading, stay for the fence retention. Earlier versions left {@code
 * _writeonce/finished/JOB.json} for each finished job; {@code writeonce purge} removes those.
 */
public final class JobLayout {

  /** The folder of this library's records under a destination. */
  public static final String RECORDS_DIR = "_writeonce/";

  public static final String SUCCESS_MARKER = "_SUCCESS";

  private static final Pattern SAFE_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,199}");

  private final Destination destination;

  public JobLayout(Destination destination) {
    this.destination = destination;
  }

  public Destination destination() {
    return destination;
  }

  /** The prefix holding every job's records. */
  public String recordsPrefix() {
    return destination.prefix() + RECORDS_DIR;
  }

  /** The prefix holding one job's records. */
  public String jobPrefix(String jobId) {
    return recordsPrefix() + "jobs/" + checkName("job id", jobId) + "/";
  }

  public String jobManifestKey(String jobId) {
    return jobPrefix(jobId) + "manifest.json";
  }

  /** The job record: the job's identity and state. */
  public String jobRecordKey(String jobId) {
    return jobPrefix(jobId) + "job.json";
  }

  /** The lease the driver renews while its job runs longer than a quarter of the lease. */
  public String leaseKey(String jobId) {
    return jobPrefix(jobId) + "lease.json";
  }

  public String intentPrefix(String jobId) {
    return jobPrefix(jobId) + "intents/";
  }

  public String intentKey(String jobId, String taskAttemptId) {
    return intentPrefix(jobId) + checkName("task attempt id", taskAttemptId) + ".json";
  }

  public String taskManifestPrefix(String jobId) {
    return jobPrefix(jobId) + "tasks/";
  }

  public String taskManifestKey(String jobId, String taskAttemptId) {
    return taskManifestPrefix(jobId) + checkName("task attempt id", taskAttemptId) + ".json";
  }

  public String manifestChunkPrefix(String jobId) {
    return jobPrefix(jobId) + "chunks/";
  }

  /**
   * The key of a chunk of the job manifest. Each commit run names its chunks with its own token, so
   * a run never overwrites a chunk that the manifest of an earlier run (whose write may have landed
   * unseen) names.
   */
  public String manifestChunkKey(String jobId, String runToken, int index) {
    return manifestChunkPrefix(jobId)
        + checkName("commit run token", runToken)
        + String.format(java.util.Locale.ROOT, "-%06d.json", index);
  }

  /** The task attempt of a task manifest's key under the given task manifest prefix. */
  public static String attemptOfTaskManifest(String tasksPrefix, String key) {
    String name = key.substring(tasksPrefix.length());
    return name.endsWith(".json") ? name.substring(0, name.length() - ".json".length()) : name;
  }

  /** The claim of the job committing in conflict mode fail, while it commits. */
  public String failModeClaimKey() {
    return recordsPrefix() + "fail-mode.claim";
  }

  public String successKey() {
    return destination.prefix() + SUCCESS_MARKER;
  }

  /** True for keys of this library's records, which are never job output. */
  public boolean isRecord(String key) {
    return key.startsWith(recordsPrefix());
  }

  /** Ids become key segments, so they are restricted to characters safe in every store. */
  static String checkName(String what, String value) {
    if (value == null || !SAFE_NAME.matcher(value).matches()) {
      throw new IllegalArgumentException(
          what
              + " '"
              + value
              + "' is not usable in an object key: use 1 to 200 letters, digits, '_', '.' or '-',"
              + " starting with a letter or digit");
    }
    return value;
  }
}
