package dev.writeonce.core.engine;

import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.json.FormatException;
import dev.writeonce.core.model.ConflictMode;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.model.JobManifest;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.SuccessData;
import dev.writeonce.core.model.TaskManifest;
import dev.writeonce.core.store.RequestType;
import dev.writeonce.core.store.StoreException;
import dev.writeonce.core.store.StoreGateway;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
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
  private final LongSupplier clock;

  public JobCommitEngine(StoreGateway store, CommitterConfig config, Destination destination) {
    this(store, config, destination, System::currentTimeMillis);
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
    this.clock = clock;
  }

  public JobRecords records() {
    return records;
  }

  public JobLayout layout() {
    return layout;
  }

  /** Commits a job: after this returns, its output is visible and {@code _SUCCESS} written. */
  public CommitResult commit(JobCommitRequest request) throws IOException {
    Map<RequestType, Long> before = store.counters().snapshot();
    Map<String, Long> stageMillis = new LinkedHashMap<>();
    long start = System.nanoTime();
    JobManifest manifest = buildManifest(request);
    stageMillis.put("validate", elapsedMillis(start));

    start = System.nanoTime();
    CommitPointStage.write(store, layout, manifest, config.conditionalManifestWrite());
    stageMillis.put("commit-point", elapsedMillis(start));
    LOG.info(
        "Job {} committed at {}: completing {} uploads ({} bytes) to {}",
        manifest.jobId(),
        layout.destination().uriOf(layout.jobManifestKey(manifest.jobId())),
        manifest.uploads().size(),
        manifest.totalBytes(),
        layout.destination());
    return finish(manifest, before, stageMillis);
  }

  /**
   * Finishes a committed job from its manifest alone: completes what remains, confirms what an
   * earlier run completed, and writes {@code _SUCCESS}. Safe to run any number of times.
   *
   * @return empty when the job never reached its commit point: there is nothing to finish
   */
  public Optional<CommitResult> resume(String jobId) throws IOException {
    Map<RequestType, Long> before = store.counters().snapshot();
    Optional<JobManifest> manifest = records.loadJobManifest(jobId);
    if (manifest.isEmpty()) {
      return Optional.empty();
    }
    Optional<SuccessData> success = records.loadSuccess();
    if (success.isPresent() && success.get().jobId().equals(jobId)) {
      LOG.info("Job {} already finished; removing its records", jobId);
      cleanup(jobId);
      JobManifest done = manifest.get();
      return Optional.of(
          new CommitResult(
              jobId,
              done.uploads().size(),
              done.totalBytes(),
              0,
              0,
              0,
              store.counters().since(before),
              Map.of(),
              success.get()));
    }
    LOG.info("Resuming committed job {} from its manifest", jobId);
    return Optional.of(finish(manifest.get(), before, new LinkedHashMap<>()));
  }

  /**
   * Aborts a job before its commit point: aborts every upload of the given task manifests and of
   * those persisted in the store, then removes the job's records. Refused once the job manifest
   * exists, because then the job is committed and can only be finished.
   */
  public void abort(String jobId, Collection<TaskManifest> knownManifests) throws IOException {
    String manifestKey = layout.jobManifestKey(jobId);
    if (store.headObject(manifestKey).isPresent()) {
      throw new CommitConflictException(
          "job "
              + jobId
              + " passed its commit point ("
              + layout.destination().uriOf(manifestKey)
              + " exists): it cannot be aborted any more, only finished by recovery");
    }
    Map<String, PendingUpload> uploads = new LinkedHashMap<>();
    knownManifests.forEach(m -> m.uploads().forEach(u -> uploads.put(u.uploadId(), u)));
    List<IOException> unreadable = new ArrayList<>();
    for (String key : records.taskManifestKeys(jobId)) {
      try {
        records
            .loadTaskManifest(jobId, key)
            .ifPresent(m -> m.uploads().forEach(u -> uploads.put(u.uploadId(), u)));
      } catch (FormatException e) {
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
    deleteRecords(jobId);
    LOG.info("Job {} aborted: {} uploads aborted, records removed", jobId, uploads.size());
  }

  private JobManifest buildManifest(JobCommitRequest request) throws IOException {
    List<PendingUpload> uploads = new ArrayList<>();
    Map<String, String> writerOfKey = new HashMap<>();
    for (TaskManifest task : request.taskManifests()) {
      if (!task.jobId().equals(request.jobId())) {
        throw invalid(
            request, "task attempt " + task.taskAttemptId() + " belongs to job " + task.jobId());
      }
      for (PendingUpload upload : task.uploads()) {
        String other = writerOfKey.putIfAbsent(upload.key(), task.taskAttemptId());
        if (other != null) {
          throw invalid(
              request,
              "key "
                  + layout.destination().uriOf(upload.key())
                  + " is written by both task attempt "
                  + other
                  + " and "
                  + task.taskAttemptId());
        }
        uploads.add(upload);
      }
    }
    long now = clock.getAsLong();
    JobManifest manifest;
    try {
      manifest =
          new JobManifest(
              request.jobId(),
              layout.destination(),
              request.conflictMode(),
              request.committer(),
              now,
              uploads,
              List.of());
      if (request.conflictMode() == ConflictMode.REPLACE) {
        List<String> deletes =
            ReplaceStage.resolve(store, layout, request.replacePrefixes(), writerOfKey.keySet());
        manifest =
            new JobManifest(
                request.jobId(),
                layout.destination(),
                request.conflictMode(),
                request.committer(),
                now,
                uploads,
                deletes);
      }
    } catch (IllegalArgumentException e) {
      throw invalid(request, e.getMessage());
    }
    return manifest;
  }

  private InvalidJobException invalid(JobCommitRequest request, String problem) {
    return new InvalidJobException(
        "job "
            + request.jobId()
            + " cannot be committed to "
            + layout.destination()
            + ": "
            + problem
            + ". Nothing was completed or deleted.",
        null);
  }

  private CommitResult finish(
      JobManifest manifest, Map<RequestType, Long> before, Map<String, Long> stageMillis)
      throws IOException {
    String jobId = manifest.jobId();
    CompleteUploadsStage.Outcome outcome;
    try (JobCommitContext context = new JobCommitContext(jobId, config.commitThreads())) {
      long start = System.nanoTime();
      outcome = CompleteUploadsStage.run(context, store, manifest);
      stageMillis.put("complete", elapsedMillis(start));
    }
    long start = System.nanoTime();
    store.deleteObjects(manifest.deletes());
    stageMillis.put("replace", elapsedMillis(start));

    start = System.nanoTime();
    SuccessData success =
        SuccessMarkerStage.write(
            store,
            layout,
            manifest,
            config.successFileLimit(),
            outcome,
            store.counters().since(before),
            stageMillis,
            clock.getAsLong());
    stageMillis.put("success", elapsedMillis(start));

    start = System.nanoTime();
    cleanup(jobId);
    stageMillis.put("cleanup", elapsedMillis(start));
    LOG.info(
        "Job {} finished: {} files, {} bytes ({} completed, {} already completed), {} replaced"
            + " objects deleted",
        jobId,
        manifest.uploads().size(),
        manifest.totalBytes(),
        outcome.completed(),
        outcome.confirmed(),
        manifest.deletes().size());
    return new CommitResult(
        jobId,
        manifest.uploads().size(),
        manifest.totalBytes(),
        outcome.completed(),
        outcome.confirmed(),
        manifest.deletes().size(),
        store.counters().since(before),
        stageMillis,
        success);
  }

  /** Removes a finished job's records; a failure only leaves them for recovery to remove. */
  private void cleanup(String jobId) {
    try {
      deleteRecords(jobId);
    } catch (StoreException e) {
      LOG.warn(
          "Job {} is finished, but its records under {} could not be removed ({}); recovery"
              + " removes them later",
          jobId,
          layout.destination().uriOf(layout.jobPrefix(jobId)),
          e.getMessage());
    }
  }

  /** Deletes a job's records, the job manifest last, so a crash in between loses no decision. */
  private void deleteRecords(String jobId) throws StoreException {
    String manifestKey = layout.jobManifestKey(jobId);
    List<String> others = new ArrayList<>();
    boolean hasManifest = false;
    for (var object : store.listObjects(layout.jobPrefix(jobId))) {
      if (object.key().equals(manifestKey)) {
        hasManifest = true;
      } else {
        others.add(object.key());
      }
    }
    store.deleteObjects(others);
    if (hasManifest) {
      store.deleteObjects(List.of(manifestKey));
    }
  }

  private static long elapsedMillis(long startNanos) {
    return (System.nanoTime() - startNanos) / 1_000_000;
  }
}
