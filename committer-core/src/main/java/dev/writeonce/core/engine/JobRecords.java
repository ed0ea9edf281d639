package dev.writeonce.core.engine;

import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.json.JobRecordFormat;
import dev.writeonce.core.json.ManifestFormats;
import dev.writeonce.core.json.SuccessDataFormat;
import dev.writeonce.core.model.DestinationClaim;
import dev.writeonce.core.model.JobManifest;
import dev.writeonce.core.model.JobRecord;
import dev.writeonce.core.model.ManifestChunk;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.SuccessData;
import dev.writeonce.core.model.TaskIntent;
import dev.writeonce.core.model.TaskManifest;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.PeekedObject;
import dev.writeonce.core.store.StoreGateway;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** Reads and writes a job's records in the store, at the keys {@link JobLayout} gives. */
public final class JobRecords {

  private final StoreGateway store;
  private final JobLayout layout;

  public JobRecords(StoreGateway store, JobLayout layout) {
    this.store = store;
    this.layout = layout;
  }

  public JobLayout layout() {
    return layout;
  }

  /** Persists a committed task attempt's manifest: one PUT. */
  public void saveTaskManifest(TaskManifest manifest) throws StoreException {
    store.putObject(
        layout.taskManifestKey(manifest.jobId(), manifest.taskAttemptId()),
        ManifestFormats.toJson(manifest),
        false);
  }

  /** Persists what a task attempt is about to upload, before it creates any upload: one PUT. */
  public void saveTaskIntent(TaskIntent intent) throws StoreException {
    store.putObject(
        layout.intentKey(intent.jobId(), intent.taskAttemptId()),
        ManifestFormats.toJson(intent),
        false);
  }

  /** One task intent, checked to belong to the job; empty if it vanished. */
  public Optional<TaskIntent> loadTaskIntent(String jobId, String key)
      throws StoreException, FormatException {
    Optional<byte[]> bytes = store.getObject(key);
    if (bytes.isEmpty()) {
      return Optional.empty();
    }
    TaskIntent intent = ManifestFormats.taskIntentFromJson(bytes.get(), uri(key));
    if (!intent.jobId().equals(jobId)) {
      throw new FormatException(uri(key), "belongs to job " + intent.jobId() + ", not " + jobId);
    }
    // Cleanup aborts uploads of the keys an intent names: one naming a key outside the table it
    // lies in (planted, or written by a bug) must never make it touch another table's uploads.
    for (String named : intent.keys()) {
      if (!layout.destination().contains(named) || layout.isRecord(named)) {
        throw new FormatException(
            uri(key),
            "names key "
                + named
                + ", which is not output of the destination "
                + layout.destination()
                + " it lies under: refusing to touch its uploads");
      }
    }
    return Optional.of(intent);
  }

  /** Removes a task attempt's manifest. */
  public void deleteTaskManifest(TaskManifest manifest) throws StoreException {
    store.deleteObjects(
        List.of(layout.taskManifestKey(manifest.jobId(), manifest.taskAttemptId())));
  }

  /** Removes a task attempt's manifest and intent, in one request. */
  public void deleteTaskRecords(TaskManifest manifest) throws StoreException {
    store.deleteObjects(
        List.of(
            layout.taskManifestKey(manifest.jobId(), manifest.taskAttemptId()),
            layout.intentKey(manifest.jobId(), manifest.taskAttemptId())));
  }

  /** Every task manifest persisted for a job: one LIST page per 1,000 and one GET each. */
  public List<TaskManifest> loadTaskManifests(String jobId) throws StoreException, FormatException {
    List<TaskManifest> manifests = new ArrayList<>();
    for (String key : taskManifestKeys(jobId)) {
      loadTaskManifest(jobId, key).ifPresent(manifests::add);
    }
    return manifests;
  }

  /** The keys of the task manifests persisted for a job. */
  public List<String> taskManifestKeys(String jobId) throws StoreException {
    List<String> keys = new ArrayList<>();
    for (ObjectInfo object : store.listObjects(layout.taskManifestPrefix(jobId))) {
      keys.add(object.key());
    }
    return keys;
  }

  /** One persisted task manifest, checked to belong to the job; empty if it vanished. */
  public Optional<TaskManifest> loadTaskManifest(String jobId, String key)
      throws StoreException, FormatException {
    Optional<byte[]> bytes = store.getObject(key);
    if (bytes.isEmpty()) {
      return Optional.empty();
    }
    TaskManifest manifest = ManifestFormats.taskManifestFromJson(bytes.get(), uri(key));
    if (!manifest.jobId().equals(jobId)) {
      throw new FormatException(uri(key), "belongs to job " + manifest.jobId() + ", not " + jobId);
    }
    return Optional.of(manifest);
  }

  /**
   * Writes the job record. A record of an ended job first releases the lease this process holds on
   * it, so that no renewal follows the job's end.
   *
   * @param create write only if no record exists ({@code If-None-Match: *})
   * @return the ETag of the record written
   */
  public String saveJobRecord(JobRecord record, boolean create) throws StoreException {
    if (!record.isInProgress()) {
      JobLease.release(store, layout, record.jobId());
    }
    return store.putObject(
        layout.jobRecordKey(record.jobId()), JobRecordFormat.toJson(record), create);
  }

  /**
   * The ETag of the job record while it is still the given run's (same run id), read in one GET;
   * empty when the record is gone, unreadable or another run's.
   */
  public Optional<String> etagOfRunsRecord(JobRecord run) throws StoreException {
    String key = layout.jobRecordKey(run.jobId());
    Optional<PeekedObject> current = store.peekObject(key, 1 << 16, head -> true);
    if (current.isEmpty() || current.get().body() == null) {
      return Optional.empty();
    }
    try {
      JobRecord found = JobRecordFormat.fromJson(current.get().body(), key);
      return found.uuid().equals(run.uuid())
          ? Optional.of(current.get().info().etag())
          : Optional.empty();
    } catch (FormatException e) {
      return Optional.empty();
    }
  }

  /** Replaces the job record only while it is the object with the given ETag ({@code If-Match}). */
  public String replaceJobRecord(JobRecord record, String etag) throws StoreException {
    if (!record.isInProgress()) {
      JobLease.release(store, layout, record.jobId());
    }
    return store.replaceObject(
        layout.jobRecordKey(record.jobId()), JobRecordFormat.toJson(record), etag);
  }

  /**
   * Renews the job's lease from this process until the job ends or its records are removed: the
   * driver calls it once its record is created. See {@link JobLease}.
   */
  public void holdLease(JobRecord record) {
    JobLease.hold(store, layout, record);
  }

  /**
   * Stops every lease renewal of this process, as if each job it set up had been abandoned, and
   * returns how many there were. For a process that runs jobs one after another and leaves some
   * unended on purpose, such as a test suite: a later job's request counts then see no renewal.
   */
  public static int releaseEveryLeaseOfThisProcess() {
    return JobLease.releaseAll();
  }

  /**
   * This run's driver gives the job up after its commit or abort failed: its lease is marked
   * released, so that recover need not wait for it to lapse. See {@link JobLease#giveUp}.
   */
  public void giveUpLease(String jobId, String uuid) {
    JobLease.giveUp(store, layout, jobId, uuid);
  }

  /** Whether the job's lease says its driver gave the job up; false when it has no lease. */
  public boolean isLeaseReleased(String jobId) throws StoreException, FormatException {
    String key = layout.leaseKey(jobId);
    Optional<byte[]> bytes = store.getObject(key);
    return bytes.isPresent() && JobRecordFormat.isLeaseReleased(bytes.get(), uri(key));
  }

  /** Stops renewing the job's lease from this process, waiting for a renewal in flight. */
  public void releaseLease(String jobId) {
    JobLease.release(store, layout, jobId);
  }

  /** The fail-mode claim on the destination, or empty when no job holds it. */
  public Optional<DestinationClaim> loadFailModeClaim() throws StoreException, FormatException {
    String key = layout.failModeClaimKey();
    Optional<byte[]> bytes = store.getObject(key);
    if (bytes.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(JobRecordFormat.claimFromJson(bytes.get(), uri(key)));
  }

  /** The job record, or empty when the job has none (never set up, or its records are removed). */
  public Optional<JobRecord> loadJobRecord(String jobId) throws StoreException, FormatException {
    String key = layout.jobRecordKey(jobId);
    Optional<byte[]> bytes = store.getObject(key);
    if (bytes.isEmpty()) {
      return Optional.empty();
    }
    JobRecord record = JobRecordFormat.fromJson(bytes.get(), uri(key));
    if (!record.jobId().equals(jobId)) {
      throw new FormatException(uri(key), "names job " + record.jobId() + ", not " + jobId);
    }
    return Optional.of(record);
  }

  /** What the key of the job manifest holds. */
  public enum CommitPoint {
    /** Nothing: the job has not passed its commit point, and may still. */
    NONE,
    /** The job manifest: the job is committed. */
    COMMITTED,
    /** The abort fence: the job was aborted and can never be committed. */
    FENCED
  }

  /** Reads the key of the job manifest: committed, fenced by an abort, or neither. */
  public CommitPoint loadCommitPoint(String jobId) throws StoreException, FormatException {
    String key = layout.jobManifestKey(jobId);
    Optional<byte[]> bytes = store.getObject(key);
    if (bytes.isEmpty()) {
      return CommitPoint.NONE;
    }
    return JobRecordFormat.isAbortFence(bytes.get(), uri(key))
        ? CommitPoint.FENCED
        : CommitPoint.COMMITTED;
  }

  /**
   * Writes a chunk of the job manifest, before the commit point: one PUT.
   *
   * @return the chunk as the job manifest names it
   */
  public ManifestChunk saveManifestChunk(
      String jobId, String runToken, int index, List<PendingUpload> uploads) throws StoreException {
    String key = layout.manifestChunkKey(jobId, runToken, index);
    byte[] json = ManifestFormats.chunkToJson(jobId, index, uploads);
    store.putObject(key, json, false);
    long bytes = 0;
    for (PendingUpload upload : uploads) {
      bytes += upload.length();
    }
    return new ManifestChunk(key, uploads.size(), bytes, sha256(json));
  }

  /**
   * The uploads a chunk of a committed job's manifest lists. Refused unless the chunk's bytes are
   * those the manifest names: a chunk that is missing or was changed cannot finish the job.
   */
  public List<PendingUpload> loadManifestChunk(JobManifest manifest, ManifestChunk chunk)
      throws IOException {
    String where = uri(chunk.key());
    if (!chunk.key().startsWith(layout.manifestChunkPrefix(manifest.jobId()))) {
      throw new FormatException(
          uri(layout.jobManifestKey(manifest.jobId())),
          "names chunk " + where + ", which lies outside the job's records");
    }
    Optional<byte[]> bytes = store.getObject(chunk.key());
    if (bytes.isEmpty()) {
      if (finishedMeanwhile(manifest.jobId())) {
        throw new FinishedMeanwhileException(manifest.jobId(), where);
      }
      throw new FormatException(
          where,
          "is missing, but the manifest of job "
              + manifest.jobId()
              + " names it: the job cannot be finished from its records");
    }
    String digest = sha256(bytes.get());
    if (!digest.equals(chunk.sha256())) {
      throw new FormatException(
          where,
          "has SHA-256 "
              + digest
              + " but the manifest of job "
              + manifest.jobId()
              + " names "
              + chunk.sha256()
              + ": it was changed after the commit point");
    }
    List<PendingUpload> uploads =
        ManifestFormats.chunkFromJson(bytes.get(), manifest.jobId(), where);
    long total = 0;
    for (PendingUpload upload : uploads) {
      try {
        JobManifest.requireInside(manifest.destination(), upload);
      } catch (IllegalArgumentException e) {
        throw new FormatException(where, e.getMessage(), e);
      }
      total += upload.length();
    }
    if (uploads.size() != chunk.fileCount() || total != chunk.totalBytes()) {
      throw new FormatException(
          where,
          "lists "
              + uploads.size()
              + " files and "
              + total
              + " bytes, the manifest names "
              + chunk.fileCount()
              + " and "
              + chunk.totalBytes());
    }
    return uploads;
  }

  /**
   * Whether the job has ended since its manifest was read: its record says finished, or its
   * manifest is no longer at its key (only the cleanup of a finished job removes it; an abort fence
   * found there now was raised after that removal, by a recovery that found the job's records half
   * gone).
   */
  private boolean finishedMeanwhile(String jobId) throws StoreException, FormatException {
    Optional<JobRecord> record = loadJobRecord(jobId);
    return record.isPresent() && record.get().state() == JobRecord.State.FINISHED
        || loadCommitPoint(jobId) != CommitPoint.COMMITTED;
  }

  static String sha256(byte[] bytes) {
    try {
      return java.util.HexFormat.of()
          .formatHex(java.security.MessageDigest.getInstance("SHA-256").digest(bytes));
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }

  /**
   * The job's manifest, or empty when the job never reached its commit point (or an abort fenced
   * it).
   */
  public Optional<JobManifest> loadJobManifest(String jobId)
      throws StoreException, FormatException {
    String key = layout.jobManifestKey(jobId);
    Optional<byte[]> bytes = store.getObject(key);
    if (bytes.isEmpty() || JobRecordFormat.isAbortFence(bytes.get(), uri(key))) {
      return Optional.empty();
    }
    JobManifest manifest = ManifestFormats.jobManifestFromJson(bytes.get(), uri(key));
    if (!manifest.jobId().equals(jobId)) {
      throw new FormatException(uri(key), "names job " + manifest.jobId() + ", not " + jobId);
    }
    if (!manifest.destination().equals(layout.destination())) {
      throw new FormatException(
          uri(key),
          "names destination "
              + manifest.destination()
              + " but lies under "
              + layout.destination()
              + ": refusing to touch keys outside the destination it was found in");
    }
    return Optional.of(manifest);
  }

  /**
   * The destination's {@code _SUCCESS} if this library wrote it; empty when there is none or when
   * another writer's is there: FileOutputCommitter, Spark's default protocol and the rename shim
   * write an empty one. A JSON {@code _SUCCESS} that names this library but cannot be read fails.
   */
  public Optional<SuccessData> loadSuccess() throws StoreException, FormatException {
    String key = layout.successKey();
    Optional<byte[]> bytes = store.getObject(key);
    if (bytes.isEmpty() || !SuccessDataFormat.mayBeOurs(bytes.get())) {
      return Optional.empty();
    }
    return Optional.of(SuccessDataFormat.fromJson(bytes.get(), uri(key)));
  }

  String uri(String key) {
    return layout.destination().uriOf(key);
  }
}
