package dev.writeonce.core.engine;

import dev.writeonce.core.errors.ErrorKind;
import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.json.SuccessDataFormat;
import dev.writeonce.core.model.CommitStatistics;
import dev.writeonce.core.model.FinishedJob;
import dev.writeonce.core.model.JobManifest;
import dev.writeonce.core.model.JobRecord;
import dev.writeonce.core.model.ManifestChunk;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.SuccessData;
import dev.writeonce.core.store.PeekedObject;
import dev.writeonce.core.store.RequestType;
import dev.writeonce.core.store.StoreGateway;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes {@code _SUCCESS} with the job's statistics, the last visible step of a commit, and with
 * the history of the jobs that finished on the destination before it.
 *
 * <p>The history is what tells a restarted driver that its job finished once the job's records are
 * gone and a later job's {@code _SUCCESS} names the later job: a job counts as finished while a
 * {@code _SUCCESS} names it as its own or among the last {@value #FINISHED_JOBS_KEPT} jobs before
 * it. It lives in {@code _SUCCESS}, read with the one GET a restart makes anyway, so that after a
 * successful job the destination holds the output and {@code _SUCCESS}, nothing else.
 *
 * <p>The stage reads the marker it replaces (one GET), carries that marker's job and history into
 * the new one, and writes it only while the marker is still the one it read: {@code If-Match} on
 * the ETag it read, or {@code If-None-Match: *} where there was none. Two jobs that finish on one
 * destination at once (append mode) thus never drop each other's entry: the one whose condition
 * fails reads again and writes again, at most {@value #WRITE_ATTEMPTS} times in all. A marker that
 * is empty or another writer's (FileOutputCommitter, Spark's default protocol, the rename shim,
 * Hadoop's S3A committers) or that cannot be read starts an empty history, never a failure. A
 * repeated write for the same job (a roll-forward) never names the job twice.
 */
final class SuccessMarkerStage {

  private static final Logger LOG = LoggerFactory.getLogger(SuccessMarkerStage.class);

  /**
   * How many earlier jobs a {@code _SUCCESS} names: the last 100 jobs on the destination. A
   * restarted application master, which YARN starts within moments of its earlier attempt's end,
   * looks for its job among them.
   */
  static final int FINISHED_JOBS_KEPT = 100;

  /**
   * How many times the stage reads and writes {@code _SUCCESS} while other jobs keep replacing it
   * between its read and its write; each round, one of the writers succeeds.
   */
  static final int WRITE_ATTEMPTS = 10;

  /** The head of a marker read to tell whether it may be this library's JSON. */
  private static final int HEAD_BYTES = 64;

  private SuccessMarkerStage() {}

  /**
   * @param runUuid the run id of the job's run, or null where this process does not know it (a job
   *     committed without a record)
   * @param conditional write with {@code If-Match} or {@code If-None-Match: *}; off only for a
   *     store that rejects those headers, where two jobs finishing at once may drop an entry
   */
  static SuccessData write(
      StoreGateway store,
      JobRecords records,
      JobLayout layout,
      JobManifest manifest,
      String runUuid,
      int fileLimit,
      boolean conditional,
      CompleteUploadsStage.Completed outcome,
      Map<String, Long> taskRequests,
      Map<String, Long> stageMillis,
      long nowMillis)
      throws IOException {
    Map<String, Long> metrics = new LinkedHashMap<>();
    metrics.put(CommitStatistics.FILES, manifest.fileCount());
    metrics.put(CommitStatistics.BYTES, manifest.totalBytes());
    metrics.put(CommitStatistics.UPLOADS_COMPLETED, (long) outcome.completed());
    metrics.put(CommitStatistics.UPLOADS_CONFIRMED, (long) outcome.confirmed());
    metrics.put(CommitStatistics.REPLACED_DELETED, (long) manifest.deletes().size());
    List<String> lost = new ArrayList<>();
    outcome
        .lost()
        .forEach(e -> e.lostKeys().forEach(k -> lost.add(manifest.destination().uriOf(k))));
    if (!lost.isEmpty()) {
      metrics.put(CommitStatistics.UPLOADS_LOST, (long) lost.size());
    }
    stageMillis.forEach(
        (stage, millis) -> metrics.put(CommitStatistics.stageMillis(stage), millis));

    Map<String, String> diagnostics = new LinkedHashMap<>();
    diagnostics.put(CommitStatistics.CONFLICT_MODE, manifest.conflictMode().id());
    diagnostics.put(CommitStatistics.DESTINATION, manifest.destination().toString());
    diagnostics.put(
        CommitStatistics.REQUESTS_COUNTED,
        taskRequests.isEmpty()
            ? CommitStatistics.REQUESTS_OF_THIS_PROCESS
            : CommitStatistics.REQUESTS_OF_THE_JOB);
    if (runUuid != null && !runUuid.isEmpty()) {
      diagnostics.put(CommitStatistics.RUN_UUID, runUuid);
    }
    if (!lost.isEmpty()) {
      // Accepted by an operator: these files of the job were never published.
      diagnostics.put(CommitStatistics.LOST_FILES, String.join(" ", lost));
    }
    List<String> names = publishedNames(records, manifest, outcome, fileLimit);
    String key = layout.successKey();
    for (int attempt = 1; ; attempt++) {
      Previous previous = readPrevious(store, layout);
      SuccessData success =
          new SuccessData(
              nowMillis,
              Instant.ofEpochMilli(nowMillis).toString(),
              JobRecord.thisHost(),
              manifest.committer(),
              "job " + manifest.jobId() + " committed to " + manifest.destination(),
              manifest.jobId(),
              "writeonce",
              metrics,
              diagnostics,
              names,
              counters(store, taskRequests),
              history(previous.marker(), manifest.jobId()));
      byte[] json = SuccessDataFormat.toJson(success);
      try {
        if (!conditional) {
          store.putObject(key, json, false);
        } else if (previous.etag() == null) {
          store.putObject(key, json, true);
        } else {
          store.replaceObject(key, json, previous.etag());
        }
        return success;
      } catch (StoreException e) {
        if (!e.is(ErrorKind.PRECONDITION_FAILED)) {
          throw e;
        }
        if (attempt >= WRITE_ATTEMPTS) {
          throw new IOException(
              "job "
                  + manifest.jobId()
                  + ": "
                  + layout.destination().uriOf(key)
                  + " was replaced by other jobs between each of "
                  + WRITE_ATTEMPTS
                  + " reads and writes of it; it is not written",
              e);
        }
        LOG.info(
            "Job {}: {} changed since it was read (another job finished meanwhile): reading it"
                + " again",
            manifest.jobId(),
            layout.destination().uriOf(key));
      }
    }
  }

  /**
   * The marker being replaced: its ETag (null when there is none), and its content when it is one
   * this library wrote and can read.
   */
  private record Previous(String etag, SuccessData marker) {}

  /** One GET: the ETag of what stands at {@code _SUCCESS}, and its content if it is ours. */
  private static Previous readPrevious(StoreGateway store, JobLayout layout) throws StoreException {
    String key = layout.successKey();
    Optional<PeekedObject> read = store.peekObject(key, HEAD_BYTES, SuccessDataFormat::mayBeOurs);
    if (read.isEmpty()) {
      return new Previous(null, null);
    }
    String etag = read.get().info().etag();
    if (read.get().body() == null) {
      return new Previous(etag, null); // empty, or another writer's
    }
    try {
      SuccessData marker =
          SuccessDataFormat.fromJson(read.get().body(), layout.destination().uriOf(key));
      return new Previous(etag, SuccessDataFormat.writtenByThisLibrary(marker) ? marker : null);
    } catch (FormatException e) {
      LOG.warn("{}: replaced, with an empty history of earlier jobs", e.getMessage());
      return new Previous(etag, null);
    }
  }

  /**
   * The history the new marker carries: the job the marker being replaced names, then that marker's
   * own history, newest first, without this job (the new marker names it as its own) and without
   * naming any job twice, at most {@value #FINISHED_JOBS_KEPT} entries.
   */
  static List<FinishedJob> history(SuccessData previous, String jobId) {
    List<FinishedJob> history = new ArrayList<>();
    if (previous == null) {
      return history;
    }
    Set<String> named = new HashSet<>();
    named.add(jobId);
    List<FinishedJob> candidates = new ArrayList<>();
    candidates.add(
        FinishedJob.of(
            previous.jobId(),
            previous.diagnostics().get(CommitStatistics.RUN_UUID),
            previous.timestamp()));
    candidates.addAll(previous.finishedJobs());
    for (FinishedJob earlier : candidates) {
      if (history.size() >= FINISHED_JOBS_KEPT) {
        break;
      }
      if (named.add(earlier.jobId())) {
        history.add(earlier);
      }
    }
    return history;
  }

  /**
   * The whole job's requests: the committing process's own since it opened the store (job setup and
   * commit, when one committer runs both) including this stage's reads, the {@code _SUCCESS} PUT
   * about to go, and what each committed task attempt reported in its manifest.
   */
  private static Map<String, Long> counters(StoreGateway store, Map<String, Long> taskRequests) {
    Map<String, Long> counters = new LinkedHashMap<>();
    store
        .counters()
        .snapshot()
        .forEach(
            (type, count) ->
                counters.put(
                    type.counterName(),
                    count
                        + (type == RequestType.PUT_OBJECT ? 1 : 0)
                        + taskRequests.getOrDefault(type.counterName(), 0L)));
    return counters;
  }

  /** The first {@code limit} files the job published, lost ones left out. */
  private static List<String> publishedNames(
      JobRecords records, JobManifest manifest, CompleteUploadsStage.Completed outcome, int limit)
      throws IOException {
    List<String> names = new ArrayList<>();
    Set<String> lostKeys = new HashSet<>();
    outcome.lost().forEach(e -> lostKeys.addAll(e.lostKeys()));
    List<PendingUpload> first = manifest.uploads();
    if (manifest.isChunked() && limit > 0) {
      // The names come from the first chunks only: the others are not read again.
      first = new ArrayList<>();
      for (ManifestChunk chunk : manifest.chunks()) {
        first.addAll(records.loadManifestChunk(manifest, chunk));
        if (first.size() >= limit + lostKeys.size()) {
          break;
        }
      }
    }
    for (PendingUpload upload : first) {
      if (names.size() >= limit) {
        break;
      }
      if (!lostKeys.contains(upload.key())) {
        names.add(manifest.destination().uriOf(upload.key()));
      }
    }
    return names;
  }
}
