package dev.writeonce.core.committer;

import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.engine.CommitResult;
import dev.writeonce.core.engine.JobCommitEngine;
import dev.writeonce.core.engine.JobCommitRequest;
import dev.writeonce.core.errors.CleanableFailure;
import dev.writeonce.core.errors.CommitConflictException;
import dev.writeonce.core.model.ConflictMode;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.model.JobRecord;
import dev.writeonce.core.model.TaskManifest;
import dev.writeonce.core.store.StoreGateway;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.hadoop.mapreduce.JobContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A committer's job commit: check the job may commit (its run, its tasks, its destination), mark it
 * committing, take the fail-mode claim where the mode asks, and commit through the engine. A job
 * refused before its commit point ({@link CleanableFailure}) is aborted.
 */
final class JobCommits {

  private static final Logger LOG = LoggerFactory.getLogger(JobCommits.class);

  private final String name;
  private final Destination destination;
  private final CommitterConfig config;
  private final ConflictPolicy conflicts;
  private final StoreGateway store;
  private final JobCommitEngine engine;

  JobCommits(
      String name,
      Destination destination,
      CommitterConfig config,
      ConflictPolicy conflicts,
      StoreGateway store,
      JobCommitEngine engine) {
    this.name = name;
    this.destination = destination;
    this.config = config;
    this.conflicts = conflicts;
    this.store = store;
    this.engine = engine;
  }

  /**
   * Commits a job from the task manifests its tasks saved in the store (MapReduce); false when an
   * earlier commit had passed the commit point and this one only finished it.
   */
  boolean fromStore(JobContext context, String jobId, Optional<String> runUuid) throws IOException {
    JobIdentity identity = new JobIdentity(engine, destination, config);
    JobRecord record = identity.requireCommittable(jobId, runUuid);
    if (record.state() == JobRecord.State.COMMITTING && identity.finishIfCommitted(jobId)) {
      return false;
    }
    // From here on, a task commit can no longer be sure to be taken: see commitTask.
    JobIdentity.Written committing = identity.markCommitting(record);
    record = committing.record();
    List<TaskManifest> selected = new ArrayList<>();
    List<String> stored;
    List<String> replaced;
    try {
      stored = TaskAttempts.onePerTaskStored(store, engine.records(), jobId);
      Optional<ExpectedTasks> expected = ExpectedTasks.of(context.getConfiguration());
      if (expected.isPresent()) {
        expected
            .get()
            .requireAllAttempts(
                context.getJobID(),
                TaskAttempts.attemptsOf(engine.records(), jobId, stored),
                destination.toString());
      }
      if (conflicts.needsUploads(config.conflictMode())) {
        // The partitions to check or replace are known only from every upload's key.
        for (String key : stored) {
          engine.records().loadTaskManifest(jobId, key).ifPresent(selected::add);
        }
        stored = List.of();
      }
      // Fail mode is checked once, under the destination claim taken by the commit below.
      replaced =
          config.conflictMode() == ConflictMode.FAIL
              ? List.of()
              : conflicts.replacedPrefixes(store, engine.layout(), config.conflictMode(), selected);
    } catch (IOException e) {
      if (e instanceof CleanableFailure) {
        JobAborts.afterRefusal(engine, jobId, List.of(), e);
      }
      throw e;
    }
    // Otherwise the engine reads the task manifests as it commits, holding a few at a time.
    commit(committing, selected, stored, config.conflictMode(), replaced);
    return true;
  }

  /** Commits a job from task manifests handed in (Spark's commit messages). */
  CommitResult fromManifests(
      String jobId,
      Optional<String> ownUuid,
      List<TaskManifest> manifests,
      ConflictMode mode,
      List<String> replaced)
      throws IOException {
    JobIdentity identity = new JobIdentity(engine, destination, config);
    JobRecord record = identity.requireCommittable(jobId, ownUuid);
    if (record.state() == JobRecord.State.COMMITTING && identity.finishIfCommitted(jobId)) {
      throw new CommitConflictException(
          "job "
              + jobId
              + " on "
              + destination
              + " had passed its commit point in an earlier commitJob: it is now finished");
    }
    // Marks that a write of the job manifest may be in flight: an abort then keeps its fence.
    JobIdentity.Written committing = identity.markCommitting(record);
    return commit(committing, manifests, List.of(), mode, replaced);
  }

  private CommitResult commit(
      JobIdentity.Written written,
      List<TaskManifest> manifests,
      List<String> storedManifests,
      ConflictMode mode,
      List<String> replaced)
      throws IOException {
    JobRecord record = written.record();
    String jobId = record.jobId();
    String claim = null;
    try {
      if (mode == ConflictMode.FAIL) {
        claim = FailModeClaim.take(store, destination, record);
        conflicts.replacedPrefixes(store, engine.layout(), mode, manifests);
      }
      CommitResult result =
          engine.commit(
              new JobCommitRequest(
                  jobId, name, mode, manifests, replaced, record, storedManifests, written.etag()));
      LOG.info("Job {}: {} files committed by {}", jobId, result.files(), name);
      return result;
    } catch (IOException e) {
      if (e instanceof CleanableFailure) {
        JobAborts.afterRefusal(engine, jobId, manifests, e);
      }
      throw e;
    } finally {
      if (claim != null) {
        FailModeClaim.release(store, destination, record, claim);
      }
    }
  }
}
