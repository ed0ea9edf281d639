package dev.writeonce.core.committer;

import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.engine.JobCommitEngine;
import dev.writeonce.core.engine.JobRecords;
import dev.writeonce.core.errors.CommitConflictException;
import dev.writeonce.core.errors.ErrorKind;
import dev.writeonce.core.errors.JobAlreadyFinishedException;
import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.model.JobRecord;
import dev.writeonce.core.model.JobRecord.State;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.SuccessData;
import dev.writeonce.core.model.TaskManifest;
import java.io.IOException;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The rules of Hadoop's committer contract that hang on a job's identity and state, kept in the
 * job's record: one run per job id and destination at a time, no commit of a job that ended, no
 * task commit into a job that can no longer take it, no abort of another run's job.
 */
final class JobIdentity {

  private static final Logger LOG = LoggerFactory.getLogger(JobIdentity.class);

  /** How a task commit that turned out to be refused gives back its uploads. */
  interface UploadAborter {
    void abortAll(Collection<PendingUpload> uploads, Exception cause);
  }

  private final JobCommitEngine engine;
  private final JobRecords records;
  private final Destination destination;
  private final CommitterConfig config;

  JobIdentity(JobCommitEngine engine, Destination destination, CommitterConfig config) {
    this.engine = engine;
    this.records = engine.records();
    this.destination = destination;
    this.config = config;
  }

  /**
   * Creates the job's record for this run, with {@code If-None-Match: *}. A new run never deletes
   * or takes over another run's records: two new runs doing so at once could each delete the
   * other's. Records of an earlier run of the same job id refuse this run, whatever their state,
   * unless this is a restarted MapReduce application master, whose earlier attempt is dead.
   */
  void claim(String jobId, String uuid, boolean retriedDriver, boolean fenced) throws IOException {
    if (fenced) {
      // Not even for a restarted driver: nothing tells whether the attempt the fence stopped was
      // committing, so a write of its manifest may still be in flight.
      throw earlierRun(jobId, "was aborted; its abort fence stands", null);
    }
    if (retriedDriver && finishedEarlier(jobId, Optional.empty())) {
      // The earlier attempt finished the job and died after: running its tasks again would
      // publish the output twice.
      throw alreadyFinished(jobId);
    }
    long now = System.currentTimeMillis();
    JobRecord mine =
        new JobRecord(
            jobId,
            uuid,
            destination,
            State.RUNNING,
            JobRecord.thisHost(),
            now,
            now,
            config.leaseMillis());
    for (int tries = 0; ; tries++) {
      try {
        records.saveJobRecord(mine, true);
        try {
          requireUnusedCommitPoint(jobId);
        } catch (CommitConflictException refused) {
          withdraw(mine, refused);
          throw refused;
        }
        records.holdLease(mine);
        return;
      } catch (StoreException e) {
        if (!e.is(ErrorKind.PRECONDITION_FAILED) && !e.is(ErrorKind.TRANSIENT) || tries > 2) {
          throw e;
        }
        Optional<JobRecord> existing = records.loadJobRecord(jobId);
        if (existing.isEmpty()) {
          if (e.is(ErrorKind.TRANSIENT)) {
            throw e;
          }
          continue; // removed in between: try again
        }
        if (existing.get().uuid().equals(uuid) && !retriedDriver) {
          records.holdLease(existing.get());
          return; // ours: this setup ran before, or its answer was lost
        }
        // A restarted driver given the same run id as its earlier attempt takes over from it too.
        takeOverFromDeadAttempt(existing.get(), retriedDriver);
      }
    }
  }

  /**
   * After the record is created: an earlier run's abort fence (or manifest) at the commit point
   * makes the job id unusable. An abort raises its fence before it removes the job record, so a
   * record created after that removal always finds the fence here.
   */
  private void requireUnusedCommitPoint(String jobId) throws IOException {
    JobRecords.CommitPoint point = records.loadCommitPoint(jobId);
    if (point != JobRecords.CommitPoint.NONE) {
      throw earlierRun(
          jobId,
          point == JobRecords.CommitPoint.FENCED
              ? "was aborted by another process; its abort fence stands"
              : "holds the manifest of an earlier run",
          null);
    }
  }

  /**
   * Removes the record this run just created when the job id turned out to be unusable, so that no
   * RUNNING record stands beside another run's fence or manifest; only while it is this run's.
   */
  private void withdraw(JobRecord mine, CommitConflictException refused) {
    try {
      dev.writeonce.core.store.OwnedObjects.deleteIfOwned(
          engine.store(),
          engine.layout().jobRecordKey(mine.jobId()),
          body -> isRecordOf(body, mine),
          (info, storeNow) -> true);
    } catch (IOException e) {
      refused.addSuppressed(e);
    }
  }

  private boolean isRecordOf(byte[] body, JobRecord mine) {
    try {
      return dev.writeonce.core.json.JobRecordFormat.fromJson(body, "job record")
          .uuid()
          .equals(mine.uuid());
    } catch (dev.writeonce.core.errors.FormatException e) {
      return false;
    }
  }

  /**
   * A restarted MapReduce application master takes the job over from its dead earlier attempt only
   * when that attempt never began to commit (its record says RUNNING and nothing stands at the
   * commit point): then no write of its manifest can be in flight, and its uploads are aborted and
   * its fence released. An attempt that was committing may have a manifest write in flight: its
   * uploads are aborted and its fence kept, and the restart is refused, as MapReduce's own commit
   * markers refuse it.
   */
  private void takeOverFromDeadAttempt(JobRecord other, boolean retriedDriver) throws IOException {
    String jobId = other.jobId();
    JobRecords.CommitPoint point = records.loadCommitPoint(jobId);
    if (retriedDriver && other.state() == State.RUNNING && point == JobRecords.CommitPoint.NONE) {
      LOG.warn(
          "Job {}: this restarted driver takes the job over from its earlier attempt {}, which"
              + " never began to commit: aborting what that attempt uploaded",
          jobId,
          other.uuid());
      engine.abort(jobId, List.of(), true);
      return;
    }
    if (retriedDriver
        && other.state() == State.COMMITTING
        && point == JobRecords.CommitPoint.NONE) {
      new RestartedDriver(engine, destination).fenceCommittingAttempt(jobId);
    }
    String state =
        other.state() == State.FINISHED
            ? "finished, its records not yet removed"
            : point == JobRecords.CommitPoint.COMMITTED
                ? "committed but unfinished"
                : point == JobRecords.CommitPoint.FENCED ? "aborted" : "running";
    throw earlierRun(jobId, "is in use by another run of a job (" + state + ")", other);
  }

  private CommitConflictException earlierRun(String jobId, String what, JobRecord other) {
    return new CommitConflictException(
        "job id "
            + jobId
            + " on "
            + destination
            + " "
            + what
            + (other == null
                ? ""
                : " (run "
                    + other.uuid()
                    + ", set up "
                    + Instant.ofEpochMilli(other.createdAtMillis())
                    + " on "
                    + other.host()
                    + ")")
            + ". Two runs with one job id would mix their output, so this one is refused before"
            + " writing anything. Give each job its own id ("
            + MultipartOutputCommitter.JOB_UUID
            + " tells runs of one job id apart), or run 'writeonce recover "
            + destination
            + "' to finish or remove what an earlier run left");
  }

  /**
   * The record of a job that may be committed now. Refused, with nothing changed, when the job has
   * none (never set up, or finished and cleaned up), has finished, or belongs to another run.
   */
  JobRecord requireCommittable(String jobId, Optional<String> uuid) throws IOException {
    Optional<JobRecord> record = records.loadJobRecord(jobId);
    if (record.isEmpty() && finishedEarlier(jobId, Optional.of(false))) {
      throw alreadyFinished(jobId);
    }
    if (record.isEmpty()) {
      throw new CommitConflictException(
          "job "
              + jobId
              + " cannot be committed to "
              + destination
              + ": it has no job record there. Either its setupJob never ran, or the job has"
              + " already finished and its records are removed: a repeated commitJob is refused"
              + " and changes nothing");
    }
    if (record.get().state() == State.FINISHED && record.get().isRun(uuid)) {
      throw alreadyFinished(jobId);
    }
    if (!record.get().isRun(uuid)) {
      throw new CommitConflictException(
          "job "
              + jobId
              + " on "
              + destination
              + " belongs to another run ("
              + record.get().uuid()
              + ", this is "
              + uuid.get()
              + "): refused, nothing changed");
    }
    return record.get();
  }

  /**
   * Whether the destination's {@code _SUCCESS} says the job finished and its records are gone: it
   * names the job as its own, or among the jobs that finished before its own while no record of the
   * job id stands ({@link RestartedDriver#saysFinished}). One GET, and one more of the job record
   * only when the history names the job and {@code recordStands} is not known.
   */
  private boolean finishedEarlier(String jobId, Optional<Boolean> recordStands) throws IOException {
    Optional<SuccessData> success;
    try {
      success = records.loadSuccess();
    } catch (dev.writeonce.core.errors.FormatException e) {
      return false;
    }
    if (success.isEmpty() || !success.get().namesFinished(jobId)) {
      return false;
    }
    boolean stands;
    if (recordStands.isPresent()) {
      stands = recordStands.get();
    } else {
      try {
        stands = records.loadJobRecord(jobId).isPresent();
      } catch (dev.writeonce.core.errors.FormatException e) {
        stands = true; // a record stands, if one that cannot be read
      }
    }
    return RestartedDriver.saysFinished(success.get(), jobId, stands);
  }

  private JobAlreadyFinishedException alreadyFinished(String jobId) {
    return new JobAlreadyFinishedException(
        "job "
            + jobId
            + " has already finished on "
            + destination
            + ": its output is published. A repeated commitJob is refused and changes nothing; do"
            + " not run the job again");
  }

  /** When an earlier commitJob of this run passed the commit point, finishes the job: true. */
  boolean finishIfCommitted(String jobId) throws IOException {
    switch (records.loadCommitPoint(jobId)) {
      case COMMITTED -> {
        LOG.warn("Job {}: commitJob again after the commit point: finishing the job", jobId);
        engine.resume(jobId);
        return true;
      }
      case FENCED ->
          throw new CommitConflictException(
              "job " + jobId + " on " + destination + " was aborted: it cannot be committed");
      default -> {
        return false;
      }
    }
  }

  /** A job record as this process wrote it, with the ETag the store gave it. */
  record Written(JobRecord record, String etag) {}

  Written markCommitting(JobRecord record) throws StoreException {
    JobRecord committing = record.withState(State.COMMITTING, System.currentTimeMillis());
    return new Written(committing, records.saveJobRecord(committing, false));
  }

  /**
   * After a task manifest is persisted: keeps it if the job is still running, takes it back if the
   * job has ended, and fails the attempt without taking anything back if the job is committing.
   */
  void confirmTaskCommit(TaskManifest manifest, Optional<String> uuid, UploadAborter aborter)
      throws IOException {
    String jobId = manifest.jobId();
    Optional<JobRecord> record = records.loadJobRecord(jobId);
    boolean sameRun = record.isPresent() && record.get().isRun(uuid);
    if (sameRun && record.get().state() == State.RUNNING) {
      return;
    }
    if (sameRun && record.get().state() == State.COMMITTING) {
      throw new IOException(
          "task attempt "
              + manifest.taskAttemptId()
              + " committed while job "
              + jobId
              + " was already committing on "
              + destination
              + ": the job may or may not take it. If it does not, the job's cleanup aborts its"
              + " uploads");
    }
    // The job has ended (or another run owns the id): it will never take this attempt, and
    // every upload it did take is already completed, so taking ours back loses nothing.
    CommitConflictException refused =
        new CommitConflictException(
            "task attempt "
                + manifest.taskAttemptId()
                + " cannot commit: job "
                + jobId
                + " on "
                + destination
                + (record.isEmpty()
                    ? " has ended and its records are removed"
                    : sameRun
                        ? " has " + record.get().state().id()
                        : " now belongs to another run (" + record.get().uuid() + ")")
                + ". Its uploads are aborted and its task manifest removed: nothing of it is"
                + " left");
    aborter.abortAll(manifest.uploads(), refused);
    if (refused.getSuppressed().length > 0) {
      // An upload could not be aborted: its records stay, so that recovery finds it.
      throw refused;
    }
    try {
      records.deleteTaskRecords(manifest);
    } catch (StoreException e) {
      refused.addSuppressed(e);
    }
    throw refused;
  }

  /** What an abort by a job's driver may do. */
  enum AbortScope {
    /** The records belong to another run: leave them alone. */
    NONE,
    /** Abort, and remove the fence: this run never began to commit. */
    RELEASE_FENCE,
    /** Abort, and keep the fence: a write of the job manifest may be in flight. */
    KEEP_FENCE
  }

  AbortScope abortScope(String jobId, Optional<String> uuid) throws IOException {
    Optional<JobRecord> record;
    try {
      record = records.loadJobRecord(jobId);
    } catch (dev.writeonce.core.errors.FormatException e) {
      return AbortScope.KEEP_FENCE; // the engine's abort reports unreadable records itself
    }
    if (record.isEmpty()) {
      // A run that knows its id and finds no record never claimed the job id (its setup failed
      // first), or its records are gone already: nothing in the store is its to abort.
      return uuid.isPresent() ? AbortScope.NONE : AbortScope.KEEP_FENCE;
    }
    boolean otherRun = !record.get().isRun(uuid);
    if (otherRun && record.get().state() != State.FINISHED) {
      LOG.warn(
          "Job {}: abort leaves the job's records on {} alone: they belong to another run ({},"
              + " this is {})",
          jobId,
          destination,
          record.get().uuid(),
          uuid.get());
      return AbortScope.NONE;
    }
    return record.get().state() == State.RUNNING && !otherRun
        ? AbortScope.RELEASE_FENCE
        : AbortScope.KEEP_FENCE;
  }
}
