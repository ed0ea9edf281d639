package dev.writeonce.core.committer;

import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.engine.CommitResult;
import dev.writeonce.core.engine.JobCommitEngine;
import dev.writeonce.core.errors.CommitConflictException;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.model.TaskManifest;
import java.io.IOException;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a committer ends a job that does not commit: abort it within the scope its identity allows,
 * finish it instead when it is already past its commit point, and give it up (its lease released)
 * when even that fails, so that recover need not wait for the lease to lapse.
 */
final class JobAborts {

  private static final Logger LOG = LoggerFactory.getLogger(JobAborts.class);

  private final JobCommitEngine engine;
  private final Destination destination;
  private final CommitterConfig config;

  JobAborts(JobCommitEngine engine, Destination destination, CommitterConfig config) {
    this.engine = engine;
    this.destination = destination;
    this.config = config;
  }

  /**
   * Aborts a job, or finishes it when it turns out to be past its commit point; gives the job up
   * when that fails.
   */
  void abort(String jobId, Optional<String> uuid, List<TaskManifest> known) throws IOException {
    try {
      abortOrFinish(jobId, uuid, known);
    } catch (IOException | RuntimeException e) {
      giveUp(jobId, uuid);
      throw e;
    }
  }

  /**
   * A driver whose commit or abort of its job failed gives the job up: its lease is marked
   * released, so that {@code writeonce recover} may finish or abort the job at once instead of
   * waiting for the lease to lapse while this process lives on. Only this run's lease is touched.
   */
  void giveUp(String jobId, Optional<String> uuid) {
    if (uuid.isEmpty()) {
      return;
    }
    engine.records().giveUpLease(jobId, uuid.get());
  }

  private void abortOrFinish(String jobId, Optional<String> uuid, List<TaskManifest> known)
      throws IOException {
    JobIdentity.AbortScope scope =
        new JobIdentity(engine, destination, config).abortScope(jobId, uuid);
    if (scope == JobIdentity.AbortScope.NONE) {
      return;
    }
    try {
      engine.abort(jobId, known, scope == JobIdentity.AbortScope.RELEASE_FENCE);
    } catch (CommitConflictException committed) {
      // The engine refuses to abort past the commit point: the job is decided, so finish it.
      LOG.error(
          "Job {} is aborted after its commit point: finishing it instead. Its output IS"
              + " published in full; do not run the job again",
          jobId);
      Optional<CommitResult> finished = engine.resume(jobId);
      LOG.info(
          "Job {} finished during abort: {} files",
          jobId,
          finished.map(CommitResult::files).orElse(0));
    }
  }

  /**
   * Aborts a job whose commit was refused before its manifest was written: no write of it can be in
   * flight, so the abort's own fence goes too.
   */
  static void afterRefusal(
      JobCommitEngine engine, String jobId, List<TaskManifest> known, IOException refusal) {
    try {
      engine.abort(jobId, known, true);
    } catch (IOException e) {
      refusal.addSuppressed(e);
    }
  }
}
