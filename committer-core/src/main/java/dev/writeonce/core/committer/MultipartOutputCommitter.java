package dev.writeonce.core.committer;

import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.engine.CommitResult;
import dev.writeonce.core.engine.JobCommitEngine;
import dev.writeonce.core.engine.JobInspector;
import dev.writeonce.core.engine.JobLayout;
import dev.writeonce.core.engine.JobRecords;
import dev.writeonce.core.model.CommitStatistics;
import dev.writeonce.core.model.ConflictMode;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.TaskIntent;
import dev.writeonce.core.model.TaskManifest;
import dev.writeonce.core.store.RequestType;
import dev.writeonce.core.store.S3StoreGateway;
import dev.writeonce.core.store.StoreGateway;
import dev.writeonce.core.store.check.StoreTrust;
import java.io.IOException;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.JobStatus;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What every committer of this library does the same way in Hadoop's committer protocol: a task
 * commit persists the attempt's pending uploads as one task manifest in the store; the job commit
 * reads them, keeps one attempt per task, applies the conflict mode and commits through the {@link
 * JobCommitEngine}. Subclasses decide only how task output becomes pending uploads.
 */
public abstract class MultipartOutputCommitter extends PathOutputCommitter {

  private static final Logger LOG = LoggerFactory.getLogger(MultipartOutputCommitter.class);

  /** Opens the gateway to the destination's bucket; tests give an in-memory store. */
  public interface StoreOpener {
    StoreGateway open(Path outputPath, Configuration conf) throws IOException;
  }

  /**
   * The id of one run of a job, set in the job's configuration by job setup: two jobs with the same
   * job id (two local runners, Spark jobs started in the same second) are told apart by it.
   */
  public static final String JOB_UUID = "writeonce.job.uuid";

  /**
   * Set beside {@value #JOB_UUID} when job setup made the run id up rather than being given one.
   */
  static final String JOB_UUID_MADE_AT_SETUP = "writeonce.job.uuid.made-at-setup";

  /**
   * The job id a task's records go under, where it differs from the Hadoop job id: Spark's commit
   * protocol keeps a write's records under Spark's write id.
   */
  public static final String RECORDS_JOB_ID = "writeonce.job.records-id";

  /** The write id Spark SQL sets for each write. */
  public static final String SPARK_WRITE_JOB_UUID = "spark.sql.sources.writeJobUUID";

  /** The default: the S3 client of the S3AFileSystem bound to the output path. */
  public static final StoreOpener S3A =
      (path, conf) -> S3StoreGateway.forFileSystem(path.getFileSystem(conf));

  private final String name;
  private final Path outputPath;
  private final Destination destination;
  private final CommitterConfig config;
  private final ConflictPolicy conflicts;
  private final Configuration conf;
  private final StoreOpener opener;
  private StoreGateway store;

  /** The run id this committer's setupJob gave the job, where the configuration lost it. */
  private String setupUuid;

  protected MultipartOutputCommitter(
      String name,
      Path outputPath,
      JobContext context,
      ConflictPolicy conflicts,
      StoreOpener opener)
      throws IOException {
    super(outputPath, context);
    this.name = name;
    this.outputPath = outputPath;
    this.conf = context.getConfiguration();
    try {
      this.destination = Destination.of(outputPath.toUri());
      this.config = CommitterConfig.from(conf);
    } catch (IllegalArgumentException e) {
      throw new IOException("committer " + name + " for " + outputPath + ": " + e.getMessage(), e);
    }
    this.conflicts = conflicts;
    this.opener = opener;
  }

  /** Turns an attempt's output into pending uploads; on failure, aborts what it started. */
  protected abstract List<PendingUpload> uploadTaskOutput(TaskAttemptContext context)
      throws IOException;

  /** Prepares an attempt's output location. */
  protected abstract void prepareTask(TaskAttemptContext context) throws IOException;

  /** Discards an attempt's output: aborts its uploads and frees local space. */
  protected abstract void discardTaskOutput(TaskAttemptContext context) throws IOException;

  /** Frees what an attempt holds once its manifest is persisted. */
  protected abstract void releaseTask(TaskAttemptContext context) throws IOException;

  /** Whether an attempt wrote anything worth a task commit. */
  protected abstract boolean hasTaskOutput(TaskAttemptContext context) throws IOException;

  @Override
  public Path getOutputPath() {
    return outputPath;
  }

  public String name() {
    return name;
  }

  protected CommitterConfig config() {
    return config;
  }

  protected Destination destination() {
    return destination;
  }

  /** The gateway to the destination's bucket, for callers that publish what the job wrote. */
  public StoreGateway storeGateway() throws IOException {
    return store();
  }

  protected synchronized StoreGateway store() throws IOException {
    if (store == null) {
      store = opener.open(outputPath, conf);
    }
    return store;
  }

  private JobCommits newJobCommits() throws IOException {
    return new JobCommits(name, destination, config, conflicts, store(), engine());
  }

  /** Gives the job up after a failed commit, never hiding the failure that caused it. */
  private void giveUp(String jobId, Optional<String> uuid) {
    try {
      jobAborts().giveUp(jobId, uuid);
    } catch (IOException | RuntimeException e) {
      LOG.warn("Job {}: its lease could not be given up: {}", jobId, e.getMessage());
    }
  }

  private JobAborts jobAborts() throws IOException {
    return new JobAborts(engine(), destination, config);
  }

  protected JobCommitEngine engine() throws IOException {
    return new JobCommitEngine(store(), config, destination);
  }

  protected static String jobId(JobContext context) {
    return context.getJobID().toString();
  }

  /**
   * The job id the job's records are kept under: the Hadoop job id, or the id an engine's protocol
   * gives in {@value #RECORDS_JOB_ID} (Spark: its write id).
   */
  protected static String recordsJobId(JobContext context) {
    Configuration conf = context.getConfiguration();
    String explicit = conf.getTrimmed(RECORDS_JOB_ID, "");
    if (!explicit.isEmpty()) {
      return explicit;
    }
    // Hadoop job ids are not unique (two local runners, Spark's second-and-stage ids): a run id
    // given before setup keys the run's records, so that two runs of one job id both commit.
    return givenRunUuid(conf).map(uuid -> jobId(context) + "-" + uuid).orElse(jobId(context));
  }

  /**
   * The run id the job was given before its setup: {@value #JOB_UUID} set by the user or engine,
   * else Spark's {@code spark.sql.sources.writeJobUUID}. One that job setup made up is known to the
   * driver only, not to tasks in other processes, so it names no records.
   */
  private static Optional<String> givenRunUuid(Configuration conf) {
    String uuid =
        conf.getBoolean(JOB_UUID_MADE_AT_SETUP, false) ? "" : conf.getTrimmed(JOB_UUID, "");
    if (uuid.isEmpty()) {
      uuid = conf.getTrimmed(SPARK_WRITE_JOB_UUID, "");
    }
    return uuid.isEmpty() ? Optional.empty() : Optional.of(uuid);
  }

  protected static String attemptId(TaskAttemptContext context) {
    return context.getTaskAttemptID().toString();
  }

  @Override
  public void setupJob(JobContext context) throws IOException {
    String jobId = recordsJobId(context);
    Optional<String> known = runUuid(context);
    String uuid = known.orElseGet(() -> UUID.randomUUID().toString());
    // Known before anything can fail: an abort after a failed setup must know whose records it
    // may touch. Tasks that share this configuration (local runners, Spark) learn it from it.
    context.getConfiguration().set(JOB_UUID, uuid);
    if (known.isEmpty()) {
      context.getConfiguration().setBoolean(JOB_UUID_MADE_AT_SETUP, true);
    }
    setupUuid = uuid;
    // Before the first record: a store that ignores a condition a guarantee rests on is refused.
    // An in-memory store that tests give honours every condition by construction.
    if (opener == S3A) {
      // The job's tasks, and any process that finishes the job, take the driver's verdict.
      StoreTrust.require(
          outputPath.getFileSystem(conf),
          destination.prefix(),
          conf,
          "job " + jobId + " on " + destination,
          context.getConfiguration());
    }
    UnfinishedJobs unfinished = new UnfinishedJobs(store(), destination, config);
    Optional<JobInspector.Report> report;
    try {
      report = unfinished.inspect();
      if (isRetriedDriver(context)) {
        new RestartedDriver(engine(), destination).settleEarlierAttempt(jobId, report);
      }
    } catch (dev.writeonce.core.errors.StoreException e) {
      if (!isRetriedDriver(context)) {
        throw e;
      }
      // The earlier attempt may have committed the job: a failure here says nothing either way.
      throw new dev.writeonce.core.errors.CommitStateUnknownException(
          "job "
              + jobId
              + ": this restarted application master could not read whether its earlier attempt"
              + " committed the job on "
              + destination
              + " ("
              + e.getMessage()
              + "); 'writeonce inspect "
              + destination
              + "' tells",
          e);
    }
    if (report.isPresent()) {
      unfinished.finishOrRefuse(jobId, report.get(), engine());
    }
    conflicts.checkAtSetup(store(), new JobLayout(destination), config.conflictMode());
    boolean fenced =
        report.isPresent()
            && report.get().jobs().stream()
                .anyMatch(
                    job -> job.jobId().equals(jobId) && job.state() == JobInspector.State.ABORTED);
    new JobIdentity(engine(), destination, config)
        .claim(jobId, uuid, isRetriedDriver(context), fenced);
    LOG.info(
        "Job {} (run {}): committer {} writes to {} in conflict mode {}",
        jobId,
        uuid,
        name,
        destination,
        config.conflictMode().id());
  }

  /**
   * The id of this run of the job, unique where the job id may not be: {@value #JOB_UUID} when set
   * (job setup sets it), else Spark's {@code spark.sql.sources.writeJobUUID}, else the one this
   * committer's job setup made. Empty in a task whose configuration never saw it (MapReduce on
   * YARN, whose job ids are unique anyway).
   */
  protected Optional<String> runUuid(JobContext context) {
    Configuration jobConf = context.getConfiguration();
    String uuid = jobConf.getTrimmed(JOB_UUID, "");
    if (uuid.isEmpty()) {
      uuid = jobConf.getTrimmed(SPARK_WRITE_JOB_UUID, "");
    }
    if (uuid.isEmpty() && setupUuid != null) {
      uuid = setupUuid;
    }
    return uuid.isEmpty() ? Optional.empty() : Optional.of(uuid);
  }

  /** A MapReduce application master after a restart sets the job up again under the same id. */
  private static boolean isRetriedDriver(JobContext context) {
    return context.getConfiguration().getInt("mapreduce.job.application.attempt.id", 0) > 0;
  }

  /**
   * Records the keys an attempt is about to create uploads for, before it creates any, so that
   * uploads of an attempt that dies while uploading can be found and aborted from the store alone.
   * One PUT per attempt.
   */
  protected void recordIntent(TaskAttemptContext context, List<String> keys) throws IOException {
    engine()
        .records()
        .saveTaskIntent(new TaskIntent(recordsJobId(context), attemptId(context), keys));
  }

  @Override
  public void setupTask(TaskAttemptContext context) throws IOException {
    prepareTask(context);
  }

  /**
   * An attempt with output commits it. So does every attempt of a task whose output a MapReduce job
   * publishes, even without output: its empty task manifest tells the job commit that the task is
   * complete, and {@link ExpectedTasks} refuses a commit that misses one.
   */
  @Override
  public boolean needsTaskCommit(TaskAttemptContext context) throws IOException {
    return hasTaskOutput(context)
        || ExpectedTasks.of(context.getConfiguration())
            .map(expected -> expected.isOutputTask(context.getTaskAttemptID()))
            .orElse(false);
  }

  /**
   * Turns an attempt's output into its task manifest: uploads (staging) or claims (magic) its
   * pending uploads. Nothing is persisted; {@link #commitTask} persists it for MapReduce, Spark
   * carries it to the driver in its task commit message.
   */
  public TaskManifest taskManifest(TaskAttemptContext context) throws IOException {
    Map<RequestType, Long> before = store().counters().snapshot();
    List<PendingUpload> uploads = uploadTaskOutput(context);
    Map<String, Long> statistics = new LinkedHashMap<>();
    statistics.put(CommitStatistics.FILES, (long) uploads.size());
    statistics.put(CommitStatistics.BYTES, uploads.stream().mapToLong(PendingUpload::length).sum());
    Map<RequestType, Long> requests = store().counters().since(before);
    // Uploads begun before task commit (the magic committer's, those begun on close) went through
    // other counters: each cost at least its create and its parts.
    requests.merge(RequestType.CREATE_UPLOAD, (long) uploads.size(), Math::max);
    requests.merge(
        RequestType.UPLOAD_PART,
        uploads.stream().mapToLong(u -> u.parts().size()).sum(),
        Math::max);
    requests.forEach((type, n) -> statistics.put(type.counterName(), n));
    return new TaskManifest(recordsJobId(context), attemptId(context), uploads, statistics);
  }

  /**
   * Commits an attempt whose manifest travels to the driver by other means (Spark's task commit
   * message): builds the manifest and frees what the attempt holds locally, persisting nothing.
   */
  public TaskManifest commitTaskToManifest(TaskAttemptContext context) throws IOException {
    TaskManifest manifest = taskManifest(context);
    releaseTask(context);
    return manifest;
  }

  /**
   * Persists the attempt's task manifest, then reads the job's record once to learn whether the job
   * can still take it. A job still running will: its commit reads task manifests only after it has
   * marked itself committing. A job that has ended (finished, aborted, or its records gone) never
   * will, so the attempt aborts its uploads and removes its manifest: nothing of it is left. A job
   * in the middle of its commit may or may not have taken it: the attempt fails and leaves its
   * manifest, whose uploads the job's cleanup aborts unless the job took them.
   */
  @Override
  public void commitTask(TaskAttemptContext context) throws IOException {
    TaskManifest manifest = taskManifest(context);
    JobRecords records = engine().records();
    try {
      records.saveTaskManifest(manifest);
    } catch (IOException e) {
      // The write may have landed although its answer was lost. Its uploads are aborted only
      // once the manifest is surely gone, or a job could take a manifest whose data is gone; if
      // it cannot be removed, the uploads stay for the job to take or its cleanup to abort.
      try {
        records.deleteTaskManifest(manifest);
        abortAll(manifest.uploads(), e);
      } catch (IOException removal) {
        e.addSuppressed(removal);
      }
      throw e;
    } finally {
      releaseTask(context);
    }
    new JobIdentity(engine(), destination, config)
        .confirmTaskCommit(manifest, runUuid(context), this::abortAll);
    LOG.info(
        "Task {} committed: {} files, {} bytes pending",
        attemptId(context),
        manifest.uploads().size(),
        manifest.totalBytes());
  }

  @Override
  public void abortTask(TaskAttemptContext context) throws IOException {
    discardTaskOutput(context);
  }

  /**
   * Commits the job from the task manifests its tasks persisted. Refused, with nothing changed,
   * when the job has already finished, was aborted, or belongs to another run with the same job id;
   * a job that passed its commit point in an earlier call is finished instead.
   */
  @Override
  public void commitJob(JobContext context) throws IOException {
    String jobId = recordsJobId(context);
    try {
      if (newJobCommits().fromStore(context, jobId, runUuid(context))) {
        cleanupJobLocally(context);
      }
    } catch (IOException | RuntimeException e) {
      giveUp(jobId, runUuid(context));
      throw e;
    }
  }

  /**
   * Commits a job from task manifests handed in, one per task, in the given conflict mode; the job
   * is aborted when they cannot form a valid commit. Refused, with nothing changed, when the job
   * has already finished, was aborted, or belongs to another run with the same job id.
   */
  public CommitResult commitJob(
      String jobId, List<TaskManifest> manifests, ConflictMode mode, List<String> replaced)
      throws IOException {
    try {
      return newJobCommits().fromManifests(jobId, ownUuid(), manifests, mode, replaced);
    } catch (IOException | RuntimeException e) {
      giveUp(jobId, ownUuid());
      throw e;
    }
  }

  /** The prefixes this committer's conflict policy replaces in the given mode. */
  public List<String> replacedPrefixes(ConflictMode mode, List<TaskManifest> manifests)
      throws IOException {
    return conflicts.replacedPrefixes(store(), new JobLayout(destination), mode, manifests);
  }

  @Override
  public void abortJob(JobContext context, JobStatus.State state) throws IOException {
    try {
      jobAborts().abort(recordsJobId(context), runUuid(context), List.of());
    } finally {
      cleanupJobLocally(context);
    }
  }

  /**
   * Aborts a job with the task manifests the caller knows besides those in the store; a job past
   * its commit point is finished instead, because its outcome is decided.
   */
  public void abortJob(String jobId, List<TaskManifest> known) throws IOException {
    jobAborts().abort(jobId, ownUuid(), known);
  }

  /**
   * The run id this committer knows: from its job setup, or from the configuration it was given.
   */
  private Optional<String> ownUuid() {
    if (setupUuid != null) {
      return Optional.of(setupUuid);
    }
    for (String key : List.of(JOB_UUID, SPARK_WRITE_JOB_UUID)) {
      String uuid = conf.getTrimmed(key, "");
      if (!uuid.isEmpty()) {
        return Optional.of(uuid);
      }
    }
    return Optional.empty();
  }

  /** Frees what the job holds on this machine once it has ended; nothing by default. */
  protected void cleanupJobLocally(JobContext context) throws IOException {}

  /** Aborts uploads, keeping the first failure's context. */
  protected void abortAll(Collection<PendingUpload> uploads, Exception cause) {
    for (PendingUpload upload : uploads) {
      try {
        store().abortUpload(upload.key(), upload.uploadId());
      } catch (IOException e) {
        cause.addSuppressed(e);
      }
    }
  }
}
