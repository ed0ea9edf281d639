package dev.writeonce.core.engine;

import dev.writeonce.core.json.SuccessDataFormat;
import dev.writeonce.core.model.CommitStatistics;
import dev.writeonce.core.model.JobManifest;
import dev.writeonce.core.model.JobRecord;
import dev.writeonce.core.model.ManifestChunk;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.SuccessData;
import dev.writeonce.core.store.RequestType;
import dev.writeonce.core.store.StoreGateway;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Writes {@code _SUCCESS} with the job's statistics: the last visible step of a commit. */
final class SuccessMarkerStage {

  private SuccessMarkerStage() {}

  static SuccessData write(
      StoreGateway store,
      JobRecords records,
      JobLayout layout,
      JobManifest manifest,
      int fileLimit,
      CompleteUploadsStage.Outcome outcome,
      Map<RequestType, Long> driverRequests,
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

    // The whole job's requests: the committing process's own since it opened the store (job setup
    // and commit, when one committer runs both), the _SUCCESS PUT, and what each committed task
    // attempt reported in its manifest.
    Map<String, Long> counters = new LinkedHashMap<>();
    driverRequests.forEach(
        (type, count) ->
            counters.put(
                type.counterName(),
                count
                    + (type == RequestType.PUT_OBJECT ? 1 : 0)
                    + taskRequests.getOrDefault(type.counterName(), 0L)));

    Map<String, String> diagnostics = new LinkedHashMap<>();
    diagnostics.put(CommitStatistics.CONFLICT_MODE, manifest.conflictMode().id());
    diagnostics.put(CommitStatistics.DESTINATION, manifest.destination().toString());
    diagnostics.put(
        CommitStatistics.REQUESTS_COUNTED,
        taskRequests.isEmpty()
            ? CommitStatistics.REQUESTS_OF_THIS_PROCESS
            : CommitStatistics.REQUESTS_OF_THE_JOB);
    if (!lost.isEmpty()) {
      // Accepted by an operator: these files of the job were never published.
      diagnostics.put(CommitStatistics.LOST_FILES, String.join(" ", lost));
    }
    List<String> names = publishedNames(records, manifest, outcome, fileLimit);
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
            counters);
    store.putObject(layout.successKey(), SuccessDataFormat.toJson(success), false);
    return success;
  }

  /** The first {@code limit} files the job published, lost ones left out. */
  private static List<String> publishedNames(
      JobRecords records, JobManifest manifest, CompleteUploadsStage.Outcome outcome, int limit)
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
