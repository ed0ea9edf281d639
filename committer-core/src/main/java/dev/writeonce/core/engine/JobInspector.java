package dev.writeonce.core.engine;

import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.model.JobManifest;
import dev.writeonce.core.model.JobRecord;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.SuccessData;
import dev.writeonce.core.model.TaskManifest;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.StoreGateway;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Reads the state of every job of this library under a destination from its records alone: which
 * jobs are finished (their job record says so), which passed their commit point without finishing
 * (recovery rolls them forward), which were aborted, and which never reached their commit point
 * (running, or abandoned with their recorded uploads open). Sends one LIST for the records, one GET
 * per job record and job manifest key, one per task manifest of uncommitted jobs, one per task
 * intent of jobs that have ended or passed their commit point, and one GET of {@code _SUCCESS}.
 */
public final class JobInspector {

  /** Where a job stands. */
  public enum State {
    /** The job's record says it finished; only its records are left. */
    FINISHED,
    /** The job manifest exists but the job did not finish: recovery completes it. */
    COMMITTED_UNFINISHED,
    /** No job manifest: the job is running, or was abandoned with its uploads open. */
    UNCOMMITTED,
    /** An abort fenced the job's commit point; only its records are left. */
    ABORTED,
    /** A record of the job cannot be read; nothing is done to it. */
    DAMAGED
  }

  /**
   * One job found under the destination.
   *
   * @param jobId the job's id
   * @param state where it stands
   * @param files files in its manifest, or in its task manifests when uncommitted
   * @param bytes their bytes
   * @param uploads its recorded uploads (of task manifests when uncommitted)
   * @param lastModifiedMillis the newest of its records
   * @param problem why it is damaged, or null
   * @param record the job's record, or null when it has none
   * @param leaseRenewedMillis when its driver last wrote its record or renewed its lease, by the
   *     store's clock, or 0 when it has neither
   * @param leaseReleased whether its driver gave the job up (its commit or abort failed)
   */
  public record Job(
      String jobId,
      State state,
      int files,
      long bytes,
      List<PendingUpload> uploads,
      long lastModifiedMillis,
      String problem,
      JobRecord record,
      long leaseRenewedMillis,
      boolean leaseReleased) {

    /**
     * Whether a driver may still be working on the job: its record says it is set up or committing,
     * its driver has not given it up, and its lease was renewed less than the lease's length before
     * {@code nowMillis}. Recover and purge leave such a job alone.
     */
    public boolean isLive(long nowMillis) {
      return record != null
          && !leaseReleased
          && record.isInProgress()
          && state != State.FINISHED
          && state != State.ABORTED
          && leaseRenewedMillis + record.leaseMillis() > nowMillis;
    }

    /** When the lease lapses, or 0 for a job without a record. */
    public long leaseExpiresMillis() {
      return record == null ? 0 : leaseRenewedMillis + record.leaseMillis();
    }
  }

  /**
   * What a destination holds.
   *
   * @param jobs the jobs with records, by id
   * @param success the {@code _SUCCESS} there, if any
   * @param successProblem why {@code _SUCCESS} could not be read, or null
   */
  public record Report(List<Job> jobs, Optional<SuccessData> success, String successProblem) {

    /** Jobs in one state. */
    public List<Job> in(State state) {
      return jobs.stream().filter(job -> job.state() == state).toList();
    }
  }

  private final StoreGateway store;
  private final JobRecords records;
  private final JobLayout layout;

  public JobInspector(StoreGateway store, JobLayout layout) {
    this.store = store;
    this.layout = layout;
    this.records = new JobRecords(store, layout);
  }

  public Report inspect() throws StoreException {
    Map<String, Long> newest = new TreeMap<>();
    Map<String, Long> renewed = new TreeMap<>();
    java.util.Set<String> withLease = new java.util.HashSet<>();
    Map<String, List<String>> intents = new TreeMap<>();
    String jobsPrefix = layout.recordsPrefix() + "jobs/";
    for (ObjectInfo object : store.listObjects(jobsPrefix)) {
      String rest = object.key().substring(jobsPrefix.length());
      int slash = rest.indexOf('/');
      if (slash > 0) {
        String jobId = rest.substring(0, slash);
        newest.merge(jobId, object.lastModifiedMillis(), Math::max);
        String name = rest.substring(slash + 1);
        if (name.equals("job.json") || name.equals("lease.json")) {
          renewed.merge(jobId, object.lastModifiedMillis(), Math::max);
        }
        if (name.equals("lease.json")) {
          withLease.add(jobId);
        }
        if (name.startsWith("intents/")) {
          intents.computeIfAbsent(jobId, j -> new ArrayList<>()).add(object.key());
        }
      }
    }
    Optional<SuccessData> success = Optional.empty();
    String successProblem = null;
    try {
      success = records.loadSuccess();
    } catch (FormatException e) {
      successProblem = e.getMessage();
    }
    List<Job> jobs = new ArrayList<>();
    for (Map.Entry<String, Long> job : newest.entrySet()) {
      Job found =
          inspect(
              job.getKey(),
              job.getValue(),
              renewed.getOrDefault(job.getKey(), 0L),
              withLease.contains(job.getKey()));
      jobs.add(checkIntents(found, intents.getOrDefault(job.getKey(), List.of())));
    }
    return new Report(jobs, success, successProblem);
  }

  private Job inspect(String jobId, long modified, long renewed, boolean hasLease)
      throws StoreException {
    try {
      JobRecord record = records.loadJobRecord(jobId).orElse(null);
      boolean released = hasLease && records.isLeaseReleased(jobId);
      if (record != null && record.state() == JobRecord.State.FINISHED) {
        return new Job(
            jobId, State.FINISHED, 0, 0, List.of(), modified, null, record, renewed, released);
      }
      JobRecords.CommitPoint point = records.loadCommitPoint(jobId);
      if (point == JobRecords.CommitPoint.COMMITTED) {
        Optional<JobManifest> manifest = records.loadJobManifest(jobId);
        if (manifest.isPresent()) {
          JobManifest m = manifest.get();
          // An operator's view: a chunked manifest's uploads are all read into memory here.
          List<PendingUpload> all;
          try {
            all = m.isChunked() ? readAll(m) : m.uploads();
          } catch (FinishedMeanwhileException e) {
            return new Job(
                jobId, State.FINISHED, 0, 0, List.of(), modified, null, record, renewed, released);
          }
          return new Job(
              jobId,
              State.COMMITTED_UNFINISHED,
              all.size(),
              m.totalBytes(),
              all,
              modified,
              null,
              record,
              renewed,
              released);
        }
      }
      Map<String, PendingUpload> uploads = new LinkedHashMap<>();
      for (String key : records.taskManifestKeys(jobId)) {
        Optional<TaskManifest> task = records.loadTaskManifest(jobId, key);
        task.ifPresent(t -> t.uploads().forEach(u -> uploads.put(u.uploadId(), u)));
      }
      long bytes = uploads.values().stream().mapToLong(PendingUpload::length).sum();
      return new Job(
          jobId,
          point == JobRecords.CommitPoint.FENCED ? State.ABORTED : State.UNCOMMITTED,
          uploads.size(),
          bytes,
          List.copyOf(uploads.values()),
          modified,
          null,
          record,
          renewed,
          released);
    } catch (FormatException | IllegalArgumentException e) {
      return damaged(jobId, modified, e.getMessage(), renewed);
    }
  }

  /**
   * The intents of a job whose cleanup will scan them (it has ended, or passed its commit point)
   * are read and checked, one GET each: one that names keys outside the destination makes the job
   * damaged, so that recover and purge leave it, and the uploads it names, alone. A running job's
   * intents are checked by its own cleanup.
   */
  private Job checkIntents(Job job, List<String> intentKeys) throws StoreException {
    if (job.state() == State.DAMAGED || job.state() == State.UNCOMMITTED) {
      return job;
    }
    for (String key : intentKeys) {
      try {
        records.loadTaskIntent(job.jobId(), key);
      } catch (FormatException | IllegalArgumentException e) {
        return damaged(job.jobId(), job.lastModifiedMillis(), e.getMessage(), 0);
      }
    }
    return job;
  }

  private List<PendingUpload> readAll(JobManifest manifest)
      throws StoreException, FormatException, FinishedMeanwhileException {
    try {
      return ManifestUploads.all(records, manifest);
    } catch (StoreException | FormatException | FinishedMeanwhileException e) {
      throw e;
    } catch (java.io.IOException e) {
      throw new FormatException(
          records.uri(records.layout().jobManifestKey(manifest.jobId())), e.getMessage(), e);
    }
  }

  private static Job damaged(String jobId, long modified, String problem, long renewed) {
    return new Job(jobId, State.DAMAGED, 0, 0, List.of(), modified, problem, null, renewed, false);
  }
}
