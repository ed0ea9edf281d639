package dev.writeonce.core.engine;

import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.json.JobRecordFormat;
import dev.writeonce.core.model.JobRecord;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.TaskIntent;
import dev.writeonce.core.model.TaskManifest;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.OwnedObjects;
import dev.writeonce.core.store.StoreGateway;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Removes a job's records once the job is finished or aborted. The record that states the outcome
 * goes last (the job record of a finished job, the abort fence of an aborted one), so that whatever
 * a crash leaves behind still says how the job ended and is never taken for a job to finish or to
 * run again.
 *
 * <p>Task intents of attempts that left no task manifest (they died while uploading) are read and
 * the open uploads of their keys aborted where no other run may own them ({@link StrayUploads}): an
 * upload is never left that no record names, and never aborted for a run it does not belong to.
 *
 * <p>Task manifests that the job's commit did not take (an attempt that committed while the job was
 * already committing, a superseded attempt) are read and their uploads aborted before they are
 * deleted: every upload the job's records name is completed or aborted when they go. An upload that
 * was completed is unaffected by the abort.
 */
final class JobCleanup {

  private static final Logger LOG = LoggerFactory.getLogger(JobCleanup.class);

  private final StoreGateway store;
  private final JobLayout layout;
  private final JobRecords records;
  private final LongSupplier clock;
  private final long retentionMillis;

  JobCleanup(
      StoreGateway store,
      JobLayout layout,
      JobRecords records,
      LongSupplier clock,
      long retentionMillis) {
    this.store = store;
    this.layout = layout;
    this.records = records;
    this.clock = clock;
    this.retentionMillis = retentionMillis;
  }

  /**
   * Deletes every record of the job: first task manifests, intents and the others, then {@code
   * lastKey} in a request of its own. {@code lastKey} is deleted only when {@code releaseLast} and
   * no intent of an attempt that may still be uploading is kept, or once it is older than the
   * retention.
   *
   * <p>An intent of an attempt that left no task manifest is scanned (its keys' open uploads are
   * aborted) and then kept, with {@code lastKey}, for the retention: that attempt may still be
   * alive and create an upload after the scan, which the next recovery's scan then finds. Once
   * {@code lastKey} is older than the retention, everything goes.
   *
   * @param takenAttempts task attempts whose uploads the job completed; the uploads of any other
   *     task manifest found are aborted first
   * @param finishedRun for the cleanup of a finished run by a process that did not just write its
   *     FINISHED record (lastEtagWritten null): that run's id. The records are removed only while
   *     the job record is still that run's; null for no such check
   */
  void deleteRecords(
      String jobId,
      Set<String> takenAttempts,
      String lastKey,
      boolean releaseLast,
      String lastEtagWritten,
      String finishedRun)
      throws IOException {
    // A renewal after this listing would bring back a record of a removed job.
    JobLease.release(store, layout, jobId);
    List<ObjectInfo> objects = store.listObjects(layout.jobPrefix(jobId));
    String tasks = layout.taskManifestPrefix(jobId);
    String intents = layout.intentPrefix(jobId);
    Set<String> withManifest = new HashSet<>();
    ObjectInfo last = null;
    for (ObjectInfo object : objects) {
      if (object.key().startsWith(tasks)) {
        withManifest.add(JobLayout.attemptOfTaskManifest(tasks, object.key()));
      }
      if (object.key().equals(lastKey)) {
        last = object;
      }
    }
    if (lastKey.equals(layout.jobManifestKey(jobId)) && last == null) {
      // An abort raises its fence before it cleans up and removes it last: with no fence, that
      // cleanup has ended, and what the listing found belongs to a new run of the job id.
      LOG.info(
          "Job {}: its abort fence is gone (its cleanup ended): the records under {} belong to a"
              + " new run of the job id and are left to it",
          jobId,
          layout.destination().uriOf(layout.jobPrefix(jobId)));
      return;
    }
    if (lastKey.equals(layout.jobRecordKey(jobId))
        && (lastEtagWritten != null || finishedRun != null)
        && !stillTheFinishedRun(jobId, last, lastEtagWritten, finishedRun)) {
      LOG.info(
          "Job {}: its record is no longer that of the finished run being cleaned (its cleanup"
              + " ended, or a new run of the job id began): the records under {} are left to"
              + " their owner",
          jobId,
          layout.destination().uriOf(layout.jobPrefix(jobId)));
      return;
    }
    boolean expired =
        last != null && last.lastModifiedMillis() <= clock.getAsLong() - retentionMillis;
    List<String> first = new ArrayList<>();
    List<String> strays = new ArrayList<>();
    List<TaskIntent> strayIntents = new ArrayList<>();
    for (ObjectInfo object : objects) {
      String key = object.key();
      if (key.equals(lastKey)) {
        continue;
      }
      if (key.startsWith(tasks)
          && !takenAttempts.contains(JobLayout.attemptOfTaskManifest(tasks, key))) {
        abortUploadsOf(jobId, key);
      }
      if (key.startsWith(intents)) {
        String attempt = JobLayout.attemptOfTaskManifest(intents, key);
        if (!takenAttempts.contains(attempt) && !withManifest.contains(attempt)) {
          loadStrayIntent(jobId, key).ifPresent(strayIntents::add);
          strays.add(key);
          if (!expired) {
            continue;
          }
        }
      }
      first.add(key);
    }
    StrayUploads.Sweep scan = new StrayUploads(store, layout, records).abort(jobId, strayIntents);
    if (expired && !scan.deferred().isEmpty()) {
      LOG.warn(
          "Job {}: its records are past the retention of {} ms and go, but {} open uploads of the"
              + " keys its dead attempts named could not be attributed to it while another run"
              + " may own them, so they are left (the store's lifecycle rule for incomplete"
              + " uploads reaps them), first: {} upload {}",
          jobId,
          retentionMillis,
          scan.deferred().size(),
          layout.destination().uriOf(scan.deferred().get(0).key()),
          scan.deferred().get(0).uploadId());
    }
    // The manifest of a finished job (or the job record of an aborted one) goes before lastKey.
    first.sort((a, b) -> Boolean.compare(isOutcome(jobId, a), isOutcome(jobId, b)));
    store.deleteObjects(first);
    boolean keepStrays = !strays.isEmpty() && !expired;
    if (keepStrays) {
      LOG.info(
          "Job {}: keeping the intents of {} task attempts that may still be uploading, and {},"
              + " until {} ms after it was written; a later recovery aborts what they add",
          jobId,
          strays.size(),
          layout.destination().uriOf(lastKey),
          retentionMillis);
    }
    if (last != null && (expired || releaseLast && !keepStrays)) {
      // With a finished job's record gone, _SUCCESS is what tells a restarted driver of the job
      // that it finished: it names the job, or a later job's names it among the earlier ones.
      deleteOutcome(jobId, lastKey, lastEtagWritten);
    }
  }

  /**
   * Whether the listed job record is still the FINISHED record of the run being cleaned. Once it is
   * gone, that run's cleanup has ended (the record goes last), and what the listing found belongs
   * to a new run of the job id; while it stands, no new run can begin (a finished record refuses
   * the job id), so nothing listed is a new run's.
   */
  private boolean stillTheFinishedRun(
      String jobId, ObjectInfo listed, String etagWritten, String finishedRun) throws IOException {
    if (listed == null) {
      return false;
    }
    if (etagWritten != null && etagWritten.equals(listed.etag())) {
      return true;
    }
    if (finishedRun == null) {
      return false;
    }
    Optional<JobRecord> record;
    try {
      record = records.loadJobRecord(jobId);
    } catch (FormatException e) {
      return false;
    }
    return record.isPresent()
        && record.get().state() == JobRecord.State.FINISHED
        && record.get().uuid().equals(finishedRun);
  }

  /**
   * Deletes the record that states the job's outcome, only while it is still that record: once it
   * is gone, a new run of the same job id may create its own at the same key, and a second cleaner
   * that listed the old one earlier (a recovery, another job's setup) must not delete the new one.
   * The process that just wrote it deletes it with {@code If-Match} on the ETag it wrote (no other
   * run can replace it while it exists: records are created with {@code If-None-Match: *}); any
   * other reads it back first ({@link OwnedObjects}).
   */
  private void deleteOutcome(String jobId, String lastKey, String etagWritten) throws IOException {
    boolean deleted =
        etagWritten != null
            ? store.deleteObjectIfMatch(lastKey, etagWritten)
            : OwnedObjects.deleteIfOwned(
                    store, lastKey, body -> isOutcome(jobId, lastKey, body), (info, now) -> true)
                != OwnedObjects.ReadBack.NOT_OURS;
    if (!deleted) {
      LOG.info(
          "Job {}: {} changed since it was read (a new run of the job id?): left in place",
          jobId,
          layout.destination().uriOf(lastKey));
    }
  }

  private boolean isOutcome(String jobId, String key, byte[] body) {
    try {
      if (key.equals(layout.jobRecordKey(jobId))) {
        return JobRecordFormat.fromJson(body, key).state() == JobRecord.State.FINISHED;
      }
      return key.equals(layout.jobManifestKey(jobId)) && JobRecordFormat.isAbortFence(body, key);
    } catch (FormatException e) {
      return false;
    }
  }

  /** A stray intent, read and checked; a damaged one stops the cleanup and is kept. */
  private Optional<TaskIntent> loadStrayIntent(String jobId, String key) throws IOException {
    try {
      return records.loadTaskIntent(jobId, key);
    } catch (FormatException e) {
      throw new IOException(
          "job "
              + jobId
              + ": task intent "
              + layout.destination().uriOf(key)
              + " cannot be read; it is kept for inspection: "
              + e.getMessage(),
          e);
    }
  }

  private boolean isOutcome(String jobId, String key) {
    return key.equals(layout.jobManifestKey(jobId)) || key.equals(layout.jobRecordKey(jobId));
  }

  private void abortUploadsOf(String jobId, String key) throws IOException {
    Optional<TaskManifest> manifest;
    try {
      manifest = records.loadTaskManifest(jobId, key);
    } catch (FormatException e) {
      throw new IOException(
          "job "
              + jobId
              + ": task manifest "
              + layout.destination().uriOf(key)
              + " cannot be read, so its uploads cannot be aborted; it is kept for inspection: "
              + e.getMessage(),
          e);
    }
    if (manifest.isEmpty()) {
      return;
    }
    LOG.info(
        "Job {}: aborting the {} uploads of task attempt {}, which the job commit did not take",
        jobId,
        manifest.get().uploads().size(),
        manifest.get().taskAttemptId());
    for (PendingUpload upload : manifest.get().uploads()) {
      store.abortUpload(upload.key(), upload.uploadId());
    }
  }

  /** Like {@link #deleteRecords}, but a failure only leaves the records for recovery. */
  void deleteRecordsQuietly(
      String jobId,
      Set<String> takenAttempts,
      String lastKey,
      String lastEtagWritten,
      String finishedRun) {
    try {
      deleteRecords(jobId, takenAttempts, lastKey, true, lastEtagWritten, finishedRun);
    } catch (IOException e) {
      LOG.warn(
          "Job {} has ended, but its records under {} could not all be removed ({}); recovery"
              + " removes them later",
          jobId,
          layout.destination().uriOf(layout.jobPrefix(jobId)),
          e.getMessage());
    }
  }
}
