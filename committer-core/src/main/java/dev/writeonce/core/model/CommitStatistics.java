package dev.writeonce.core.model;

/**
 * The names of the statistics a job commit writes into {@code _SUCCESS} (metrics and diagnostics),
 * in one place for the committers that write them and the tools that read them.
 */
public final class CommitStatistics {

  /** Files the job published. */
  public static final String FILES = "writeonce.files";

  /** Bytes of the files the job published. */
  public static final String BYTES = "writeonce.bytes";

  /** Uploads completed by this commit. */
  public static final String UPLOADS_COMPLETED = "writeonce.uploads.completed";

  /** Uploads an earlier run of the commit had completed, confirmed by HEAD. */
  public static final String UPLOADS_CONFIRMED = "writeonce.uploads.confirmed";

  /** Uploads lost before the commit, when an operator accepted the loss. */
  public static final String UPLOADS_LOST = "writeonce.uploads.lost";

  /** Objects an overwrite deleted. */
  public static final String REPLACED_DELETED = "writeonce.replaced.deleted";

  /** Diagnostic: the URIs of the files lost, space-separated. */
  public static final String LOST_FILES = "writeonce.lost";

  /** Diagnostic: the job's conflict mode. */
  public static final String CONFLICT_MODE = "writeonce.conflict-mode";

  /**
   * Diagnostic: the run id of the job's run, where the process that finished it knew it. The next
   * job's {@code _SUCCESS} carries it into its {@link #FINISHED_JOBS} entry of this job.
   */
  public static final String RUN_UUID = "writeonce.job.uuid";

  /**
   * Diagnostic: the jobs that finished on the destination before this one, newest first ({@link
   * SuccessData#finishedJobs}). A string, so that readers of Hadoop's SuccessData, which take
   * diagnostics as a map of strings, read it as any other: entries {@code JOB/RUN/MILLIS} separated
   * by single spaces, RUN empty where unknown.
   */
  public static final String FINISHED_JOBS = "writeonce.finished-jobs";

  /** Diagnostic: the job's destination. */
  public static final String DESTINATION = "writeonce.destination";

  /**
   * Requests by type: this prefix, then the type in lower case. What they cover is named by {@link
   * #REQUESTS_COUNTED}.
   */
  public static final String REQUESTS_PREFIX = "writeonce.requests.";

  /** Diagnostic: which requests {@link #REQUESTS_PREFIX} counts. */
  public static final String REQUESTS_COUNTED = "writeonce.requests-counted";

  /** The requests of a job commit that took its tasks' manifests. */
  public static final String REQUESTS_OF_THE_JOB =
      "the whole job: each committed task attempt's (its intent, and the create and parts of each"
          + " upload it handed over), and the driver's from job setup to _SUCCESS; not those of"
          + " attempts that failed or were aborted";

  /** The requests of a commit finished from a manifest (recovery, a later job's setup). */
  public static final String REQUESTS_OF_THIS_PROCESS =
      "only those of the process that finished the commit from its manifest";

  /** Milliseconds of a commit stage: this prefix, the stage, then {@link #STAGE_SUFFIX}. */
  public static final String STAGE_PREFIX = "writeonce.stage.";

  public static final String STAGE_SUFFIX = ".millis";

  private CommitStatistics() {}

  /** The metric holding a stage's milliseconds. */
  public static String stageMillis(String stage) {
    return STAGE_PREFIX + stage + STAGE_SUFFIX;
  }
}
