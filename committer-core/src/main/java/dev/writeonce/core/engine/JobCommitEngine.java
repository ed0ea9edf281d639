package dev.writeonce.core.engine;

import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.errors.ErrorKind;
import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.errors.JobCommittedException;
import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.errors.UploadLostException;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.model.JobManifest;
import dev.writeonce.core.model.JobRecord;
import dev.writeonce.core.model.JobRecord.State;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.SuccessData;
import dev.writeonce.core.model.TaskManifest;
import dev.writeonce.core.store.RequestType;
import dev.writeonce.core.store.StoreGateway;
import dev.writeonce.core.work.Tasks;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Commits jobs to one destination through one store gateway.
 *
 * <p>{@link #commit} validates the task manifests, writes the job manifest (the commit point),
 * completes every upload in parallel, deletes what replace mode replaces, writes {@code _SUCCESS}
 * and removes the job's records. {@link #resume} finishes a committed job from its manifest alone,
 * after a crash at any point. {@link #abort} undoes a job that has not reached its commit point.
 */
public final class JobCommitEngine {

  private static final Logger LOG = LoggerFactory.getLogger(JobCommitEngine.class);

  private final StoreGateway store;
  private final CommitterConfig config;
  private final JobLayout layout;
  private final JobRecords records;
  private final JobCleanup cleanup;
  private final LongSupplier clock;

  public JobCommitEngine(StoreGateway store, CommitterConfig config, Destination destination) {
    // Retention decisions compare the store's timestamps with the store's own clock.
    this(store, config, destination, store.storeClock());
  }

  JobCommitEngine(
      StoreGateway store, CommitterConfig config, Destination destination, LongSupplier clock) {
    if (!store.bucket().equals(destination.bucket())) {
      throw new IllegalArgumentException(
          "the store gateway serves bucket " + store.bucket() + ", not " + destination);
    }
    this.store = store;
    this.config = config;
    this.layout = new JobLayout(destination);
    this.records = new JobRecords(store, layout);
    this.cleanup = new JobCleanup(store, layout, records, clock, config.fenceRetentionMillis());
    this.clock = clock;
  }

  public JobRecords records() {
    return records;
  }

  /** The gateway this engine sends every request through. */
  public StoreGateway store() {
    return store;
  }

  public JobLayout layout() {
    return layout;
  }

  /**
   * Commits a job: after this returns, its output is visible and {@code _SUCCESS} written. A
   * failure before the commit point leaves the job uncommitted (abort undoes it). A failure after
   * it is retried once; if finishing still fails, {@link JobCommittedException} says that the job
   * is committed and is finished by recovery, never by running it again.
   */
  public CommitResult commit(JobCommitRequest request) throws IOException {
    Map<RequestType, Long> before = store.counters().snapshot();
    Map<String, Long> stageMillis = new LinkedHashMap<>();
    long start = System.nanoTime();
    ManifestStage.Built built =
        ManifestStage.build(
            store,
            layout,
            records,
            request,
            clock.getAsLong(),
            this::resume,
            config.manifestChunkUploads(),
            Math.min(config.commitThreads(), 16));
    JobManifest manifest = built.manifest();
    stageMillis.put("validate", elapsedMillis(start));

    start = System.nanoTime();
    CommitPointStage.write(store, layout, manifest, config.conditionalManifestWrite());
    stageMillis.put("commit-point", elapsedMillis(start));
    LOG.info(
        "Job {} committed at {}: completing {} uploads ({} bytes{}) to {}",
        manifest.jobId(),
        layout.destination().uriOf(layout.jobManifestKey(manifest.jobId())),
        manifest.fileCount(),
        manifest.totalBytes(),
        manifest.isChunked() ? ", in " + manifest.chunks().size() + " chunks" : "",
        layout.destination());
    try {
      return finishCommitted(request, built, before, stageMillis);
    } catch (IOException first) {
      LOG.warn(
          "Job {} is committed but finishing it failed ({}); trying once more",
          manifest.jobId(),
          first.getMessage());
      try {
        return finishCommitted(request, built, before, stageMillis);
      } catch (IOException second) {
        second.addSuppressed(first);
        throw committedButUnfinished(manifest, second);
      }
    }
  }

  private JobCommittedException committedButUnfinished(JobManifest manifest, IOException cause) {
    boolean lost = cause instanceof UploadLostException;
    return new JobCommittedException(
        manifest.jobId(),
        "job "
            + manifest.jobId()
            + " is COMMITTED to "
            + layout.destination()
            + " but could not be finished: "
            + cause.getMessage()
            + ". Its output is decided: do NOT run the job again, which would write it twice."
            + " Finish it with 'writeonce recover "
            + layout.destination()
            + "'"
            + (lost
                ? " --accept-lost (some uploads are gone; the other files are published and"
                    + " _SUCCESS will list the lost ones)"
                : "")
            + ", or let the next job's setup do so ("
            + dev.writeonce.core.config.CommitterConfig.RECOVERY_ON_SETUP
            + "=recover).",
        cause);
  }

  /**
   * Finishes a committed job from its manifest alone: completes what remains, confirms what an
   * earlier run completed, and writes {@code _SUCCESS}. Safe to run any number of times. A job
   * whose record says it finished only has its leftover records removed.
   *
   * @return empty when the job never reached its commit point: there is nothing to finish
   */
  public Optional<CommitResult> resume(String jobId) throws IOException {
    return resume(jobId, false);
  }

  /**
   * As {@link #resume(String)}; with {@code acceptLost}, uploads that are gone (aborted or expired)
   * no longer stop the job from finishing: every other file is published, and {@code _SUCCESS}
   * lists the lost ones under {@value SuccessMarkerStage#LOST} and in its diagnostics.
   */
  public Optional<CommitResult> resume(String jobId, boolean acceptLost) throws IOException {
    Map<RequestType, Long> before = store.counters().snapshot();
    Optional<JobRecord> record = records.loadJobRecord(jobId);
    if (record.isPresent() && record.get().state() == JobRecord.State.FINISHED) {
      LOG.info("Job {} already finished; removing its records", jobId);
      // Every upload the job took is completed, so aborting those of leftover task manifests
      // only ends uploads of attempts the job did not take.
      cleanup.deleteRecordsQuietly(
          jobId, Set.of(), layout.jobRecordKey(jobId), null, record.get().uuid());
      return Optional.of(
          new CommitResult(jobId, 0, 0, 0, 0, 0, store.counters().since(before), Map.of(), null));
    }
    Optional<JobManifest> manifest = records.loadJobManifest(jobId);
    if (manifest.isEmpty()) {
      return Optional.empty();
    }
    LOG.info("Resuming committed job {} from its manifest", jobId);
    // The attempts the job took are those its manifest's uploads name, gathered as they complete.
    return Optional.of(
        finish(
            manifest.get(),
            record.orElse(null),
            null,
            Set.of(),
            acceptLost,
            before,
            new LinkedHashMap<>(),
            Map.of()));
  }

  /**
   * Aborts a job before its commit point: fences the commit point, aborts every upload of the given
   * task manifests and of those persisted in the store, then removes the job's records. Refused
   * once the job manifest exists, because then the job is committed and can only be finished.
   *
   * <p>The fence is an object created with {@code If-None-Match: *} at the job manifest's key. Once
   * it exists, a manifest write still in flight (one whose answer was lost, so its driver could not
   * tell whether it landed) can no longer land; if the manifest landed first, the fence is refused
   * and the job is reported committed. Either way the outcome is known before any upload is
   * aborted.
   */
  public void abort(String jobId, Collection<TaskManifest> knownManifests) throws IOException {
    abort(jobId, knownManifests, false);
  }

  /**
   * As {@link #abort(String, Collection)}. The fence is kept unless {@code releaseFence}: only the
   * job's own driver may release it, and only when it never began to commit, because then no write
   * of the job manifest can be in flight and no other process ever writes one. An abort by another
   * process keeps it for {@link CommitterConfig#FENCE_RETENTION}, so that a driver still alive can
   * never commit what was aborted.
   */
  public void abort(String jobId, Collection<TaskManifest> knownManifests, boolean releaseFence)
      throws IOException {
    boolean ownFence =
        AbortFence.raise(store, layout, records, jobId, config.conditionalManifestWrite());
    // Only a fence this abort created may be released: another's protects another abort.
    releaseFence &= ownFence;
    Map<String, PendingUpload> uploads = new LinkedHashMap<>();
    knownManifests.forEach(m -> m.uploads().forEach(u -> uploads.put(u.uploadId(), u)));
    List<IOException> unreadable = new ArrayList<>();
    Set<String> attempts = new HashSet<>();
    knownManifests.forEach(m -> attempts.add(m.taskAttemptId()));
    for (String key : records.taskManifestKeys(jobId)) {
      String attempt = JobLayout.attemptOfTaskManifest(layout.taskManifestPrefix(jobId), key);
      try {
        Optional<TaskManifest> manifest = records.loadTaskManifest(jobId, key);
        // A manifest listed but gone when read was removed by its attempt, which then aborts its
        // uploads itself, unless it dies first: the attempt is not counted as handled, so that its
        // intent is scanned and kept like that of any attempt without a manifest.
        if (manifest.isPresent()) {
          attempts.add(attempt);
          manifest.get().uploads().forEach(u -> uploads.put(u.uploadId(), u));
        }
      } catch (FormatException e) {
        attempts.add(attempt);
        unreadable.add(e);
      }
    }
    try (JobCommitContext context = new JobCommitContext(jobId, config.commitThreads())) {
      Tasks.runAll(
          context,
          "aborting uploads",
          new ArrayList<>(uploads.values()),
          upload -> store.abortUpload(upload.key(), upload.uploadId()));
    }
    if (!unreadable.isEmpty()) {
      IOException failure =
          new IOException(
              "job "
                  + jobId
                  + ": aborted "
                  + uploads.size()
                  + " uploads, but "
                  + unreadable.size()
                  + " task manifests could not be read and were kept for inspection; first: "
                  + unreadable.get(0).getMessage());
      unreadable.forEach(failure::addSuppressed);
      throw failure;
    }
    // Every upload of every task manifest read is aborted: they need no second look.
    cleanup.deleteRecords(jobId, attempts, layout.jobManifestKey(jobId), releaseFence, null, null);
    LOG.info(
        "Job {} aborted: {} uploads aborted, records removed{}",
        jobId,
        uploads.size(),
        releaseFence
            ? ""
            : "; its abort fence stands for " + config.fenceRetentionMillis() + " ms");
  }

  /**
   * Ends what an aborted job left: aborts whatever its leftover records name and removes them, and
   * removes its abort fence once the fence is older than the retention.
   *
   * @return true when nothing of the job is left
   */
  public boolean cleanAborted(String jobId) throws IOException {
    abort(jobId, List.of(), false);
    return store.listObjects(layout.jobPrefix(jobId)).isEmpty();
  }

  /** Finishes the job this commit just committed, with what the commit knows of it. */
  private CommitResult finishCommitted(
      JobCommitRequest request,
      ManifestStage.Built built,
      Map<RequestType, Long> before,
      Map<String, Long> stageMillis)
      throws IOException {
    return finish(
        built.manifest(),
        request.record(),
        request.recordEtag(),
        built.takenAttempts(),
        false,
        before,
        stageMillis,
        built.taskRequests());
  }

  private CommitResult finish(
      JobManifest manifest,
      JobRecord record,
      String recordEtag,
      Set<String> takenAttempts,
      boolean acceptLost,
      Map<RequestType, Long> before,
      Map<String, Long> stageMillis,
      Map<String, Long> taskRequests)
      throws IOException {
    try {
      return completeAndEnd(
          manifest,
          record,
          recordEtag,
          takenAttempts,
          acceptLost,
          before,
          stageMillis,
          taskRequests);
    } catch (FinishedMeanwhileException e) {
      // Only a chunked manifest's chunks can vanish under a reader: the job's own end removed them.
      LOG.info("{}; nothing is left to do", e.getMessage());
      return result(
          manifest,
          new CompleteUploadsStage.Completed(0, 0, List.of(), Set.of()),
          before,
          stageMillis,
          null);
    }
  }

  private CommitResult completeAndEnd(
      JobManifest manifest,
      JobRecord record,
      String recordEtag,
      Set<String> takenAttempts,
      boolean acceptLost,
      Map<RequestType, Long> before,
      Map<String, Long> stageMillis,
      Map<String, Long> taskRequests)
      throws IOException {
    String jobId = manifest.jobId();
    CompleteUploadsStage.Completed outcome;
    try (JobCommitContext context = new JobCommitContext(jobId, config.commitThreads())) {
      long start = System.nanoTime();
      outcome = CompleteUploadsStage.run(context, store, records, manifest);
      stageMillis.put("complete", elapsedMillis(start));
    }
    if (!outcome.lost().isEmpty() && !acceptLost) {
      // Another process (recovery, a replace job that had to finish this one first) may have
      // finished the job, and a later job replaced its files since: then nothing is lost.
      Optional<JobRecord> now = records.loadJobRecord(jobId);
      if (now.isPresent() && now.get().state() == State.FINISHED) {
        LOG.info("Job {} was finished by another process meanwhile", jobId);
        return result(manifest, outcome, before, stageMillis, null);
      }
      throw lost(manifest, outcome);
    }
    long start = System.nanoTime();
    store.deleteObjects(manifest.deletes());
    stageMillis.put("replace", elapsedMillis(start));

    start = System.nanoTime();
    SuccessData success =
        SuccessMarkerStage.write(
            store,
            records,
            layout,
            manifest,
            record == null ? null : record.uuid(),
            config.successFileLimit(),
            config.conditionalManifestWrite(),
            outcome,
            taskRequests,
            stageMillis,
            clock.getAsLong());
    stageMillis.put("success", elapsedMillis(start));

    String finished = markFinished(jobId, record, recordEtag);
    start = System.nanoTime();
    Set<String> taken = new HashSet<>(takenAttempts);
    taken.addAll(outcome.attempts());
    if (finished != null) {
      cleanup.deleteRecordsQuietly(
          jobId,
          taken,
          layout.jobRecordKey(jobId),
          finished,
          record == null ? null : record.uuid());
    }
    stageMillis.put("cleanup", elapsedMillis(start));
    LOG.info(
        "Job {} finished: {} files, {} bytes ({} completed, {} already completed, {} lost), {}"
            + " replaced objects deleted",
        jobId,
        manifest.fileCount(),
        manifest.totalBytes(),
        outcome.completed(),
        outcome.confirmed(),
        outcome.lost().size(),
        manifest.deletes().size());
    return result(manifest, outcome, before, stageMillis, success);
  }

  /**
   * The job's own, durable end: leftovers of a finished job are never finished again. Written only
   * over this run's own record: another process may have finished the job meanwhile and removed its
   * records, and a new run of the job id may have its record at the key by now. Returns the ETag
   * written, or null when the record is no longer this run's; the records are then left to whoever
   * owns them.
   */
  private String markFinished(String jobId, JobRecord record, String recordEtag)
      throws IOException {
    long now = clock.getAsLong();
    if (record == null) {
      JobRecord unrecorded =
          new JobRecord(
              jobId,
              "unrecorded",
              layout.destination(),
              State.RUNNING,
              JobRecord.thisHost(),
              now,
              now,
              config.leaseMillis());
      return records.saveJobRecord(unrecorded.withState(State.FINISHED, now), false);
    }
    // The ETag the driver got when it marked the job committing needs no read; without it (a
    // resume by another process), one GET tells whether the record is still this run's.
    Optional<String> ownEtag =
        recordEtag != null ? Optional.of(recordEtag) : records.etagOfRunsRecord(record);
    for (int attempt = 0; attempt < 2 && ownEtag.isPresent(); attempt++) {
      try {
        return records.replaceJobRecord(record.withState(State.FINISHED, now), ownEtag.get());
      } catch (StoreException e) {
        if (!e.is(ErrorKind.PRECONDITION_FAILED)) {
          throw e;
        }
        // Changed since: by this run itself (a write whose answer was lost, a retried finish),
        // or by another process. Read once to tell.
        ownEtag = attempt == 0 ? records.etagOfRunsRecord(record) : Optional.empty();
      }
    }
    LOG.info(
        "Job {}: its record is no longer this run's (another process finished the job, and a new"
            + " run of the job id may have begun): not marking it finished",
        jobId);
    return null;
  }

  private CommitResult result(
      JobManifest manifest,
      CompleteUploadsStage.Completed outcome,
      Map<RequestType, Long> before,
      Map<String, Long> stageMillis,
      SuccessData success) {
    return new CommitResult(
        manifest.jobId(),
        (int) manifest.fileCount(),
        manifest.totalBytes(),
        outcome.completed(),
        outcome.confirmed(),
        manifest.deletes().size(),
        store.counters().since(before),
        stageMillis,
        success);
  }

  private UploadLostException lost(JobManifest manifest, CompleteUploadsStage.Completed outcome) {
    List<String> keys = new ArrayList<>();
    outcome.lost().forEach(e -> keys.addAll(e.lostKeys()));
    UploadLostException failure =
        new UploadLostException(
            keys,
            "job "
                + manifest.jobId()
                + ": "
                + keys.size()
                + " of "
                + manifest.fileCount()
                + " uploads are lost (aborted or expired before the job finished); the other "
                + (outcome.completed() + outcome.confirmed())
                + " are completed. First: "
                + outcome.lost().get(0).getMessage()
                + ". 'writeonce recover --accept-lost "
                + layout.destination()
                + "' ends the job with a _SUCCESS that lists the lost files",
            outcome.lost().get(0));
    outcome.lost().stream().skip(1).limit(10).forEach(failure::addSuppressed);
    return failure;
  }

  private static long elapsedMillis(long startNanos) {
    return (System.nanoTime() - startNanos) / 1_000_000;
  }
}
