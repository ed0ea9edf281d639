package dev.writeonce.core.committer;

import dev.writeonce.core.engine.JobCommitEngine;
import dev.writeonce.core.engine.JobInspector;
import dev.writeonce.core.errors.CommitConflictException;
import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.errors.JobAlreadyFinishedException;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.model.JobRecord;
import dev.writeonce.core.model.SuccessData;
import java.io.IOException;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a restarted MapReduce application master settles first, before anything else of its job
 * setup can refuse it: whether its dead earlier attempt already decided the job. One that passed
 * the commit point is finished, and the restart refused as already finished; one that was
 * committing is fenced, so that a manifest write still on the wire can never land.
 */
final class RestartedDriver {

  private static final Logger LOG = LoggerFactory.getLogger(RestartedDriver.class);

  private final JobCommitEngine engine;
  private final Destination destination;

  RestartedDriver(JobCommitEngine engine, Destination destination) {
    this.engine = engine;
    this.destination = destination;
  }

  /**
   * A restarted application master whose earlier attempt passed the commit point and died before
   * its records were gone: the job's outcome is decided, so it is finished from its manifest (or
   * its records removed), and the restart is refused as a job already finished, never run again,
   * which would publish its output twice.
   */
  void settleEarlierAttempt(String jobId, Optional<JobInspector.Report> report) throws IOException {
    boolean committed =
        report.isPresent()
            && report.get().jobs().stream()
                .anyMatch(
                    job ->
                        job.jobId().equals(jobId)
                            && (job.state() == JobInspector.State.COMMITTED_UNFINISHED
                                || job.state() == JobInspector.State.FINISHED));
    // Its records may be gone already (it finished, or another job or recover did): _SUCCESS
    // tells, one GET where no job left records, by naming the job or, once a later job finished,
    // among the jobs before that one.
    Optional<SuccessData> success;
    try {
      success = report.isPresent() ? report.get().success() : engine.records().loadSuccess();
    } catch (FormatException e) {
      success = Optional.empty();
    }
    boolean recorded =
        report.isPresent()
            && report.get().jobs().stream()
                .anyMatch(job -> job.jobId().equals(jobId) && job.record() != null);
    committed |= success.isPresent() && saysFinished(success.get(), jobId, recorded);
    if (!committed && report.isPresent()) {
      fenceEarlierAttemptThatWasCommitting(jobId, report.get());
    }
    if (!committed) {
      return;
    }
    LOG.warn(
        "Job {}: an earlier attempt of this application master committed the job and died before"
            + " its end: finishing it now",
        jobId);
    engine.resume(jobId);
    throw finishedByEarlierAttempt(jobId);
  }

  /**
   * Whether a {@code _SUCCESS} says the job finished: it names the job as its own, or, while no
   * record of the job id stands, among the jobs that finished before its own. While a record of the
   * id stands, that record decides instead: the entry in the history is then an earlier run's of
   * the same job id, and this run's earlier attempt may have been committing, to be fenced. The one
   * rule for a restarted driver's setup and for a commit that finds no record of its job.
   */
  static boolean saysFinished(SuccessData success, String jobId, boolean recordStands) {
    return success.jobId().equals(jobId) || !recordStands && success.finishedEarlier(jobId);
  }

  /**
   * An earlier attempt that was committing may have a write of its manifest in flight. Before
   * anything else can refuse this restart (and report the job failed), its abort fence is raised
   * and kept: then its manifest either landed already (the job is finished instead) or never will.
   */
  private void fenceEarlierAttemptThatWasCommitting(String jobId, JobInspector.Report report)
      throws IOException {
    boolean wasCommitting =
        report.jobs().stream()
            .anyMatch(
                job ->
                    job.jobId().equals(jobId)
                        && job.state() == JobInspector.State.UNCOMMITTED
                        && job.record() != null
                        && job.record().state() == JobRecord.State.COMMITTING);
    if (wasCommitting) {
      fenceCommittingAttempt(jobId);
    }
  }

  /**
   * Aborts an earlier attempt that was committing and keeps its fence, so that its manifest write,
   * if still on the wire, never lands; then refuses the restart. Where the manifest landed first,
   * the job is committed: it is finished instead, and the restart refused as already finished. The
   * one way both job setup's first check and a later claim of the job id handle such an attempt.
   */
  void fenceCommittingAttempt(String jobId) throws IOException {
    LOG.warn(
        "Job {}: the earlier attempt of this restarted driver was committing: its uploads are"
            + " aborted and its abort fence kept, since a write of its manifest may still land",
        jobId);
    try {
      engine.abort(jobId, List.of(), false);
    } catch (CommitConflictException committedMeanwhile) {
      engine.resume(jobId); // its manifest landed first: the job is committed
      throw finishedByEarlierAttempt(jobId);
    }
    throw new CommitConflictException(
        "job id "
            + jobId
            + " on "
            + destination
            + " was committing in an earlier attempt of this application master, whose manifest"
            + " write may still land; that attempt is aborted, its abort fence kept, and the job id"
            + " cannot be used again. Run the job again under a new job id");
  }

  private JobAlreadyFinishedException finishedByEarlierAttempt(String jobId) {
    return new JobAlreadyFinishedException(
        "job "
            + jobId
            + " was committed on "
            + destination
            + " by an earlier attempt of this application master, and is now finished: its"
            + " output is published. The restarted attempt runs nothing again");
  }
}
