package dev.writeonce.core.engine;

import dev.writeonce.core.errors.InvalidJobException;
import dev.writeonce.core.model.ConflictMode;
import dev.writeonce.core.model.JobManifest;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.TaskManifest;
import dev.writeonce.core.store.StoreGateway;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Builds the job manifest, the commit point's content, from a commit request. */
final class ManifestStage {

  private ManifestStage() {}

  /**
   * The job manifest of a commit request: every upload of every task, each key written once, and in
   * replace mode the objects the job replaces.
   *
   * @throws InvalidJobException when the tasks cannot form one commit (nothing is changed)
   */
  static JobManifest build(
      StoreGateway store,
      JobLayout layout,
      JobRecords records,
      JobCommitRequest request,
      long now,
      ReplaceStage.Finisher finisher)
      throws IOException {
    Map<String, String> writerOfKey = new HashMap<>();
    List<PendingUpload> uploads = uploadsOf(layout, request, writerOfKey);
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
            ReplaceStage.resolveWhenNoOtherJobIsUnfinished(
                store, layout, records, request, writerOfKey.keySet(), finisher);
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
      throw invalid(layout, request, e.getMessage());
    }
    return manifest;
  }

  private static InvalidJobException invalid(
      JobLayout layout, JobCommitRequest request, String problem) {
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

  /** Every upload of the request's tasks, each key written by one task attempt only. */
  private static List<PendingUpload> uploadsOf(
      JobLayout layout, JobCommitRequest request, Map<String, String> writerOfKey)
      throws InvalidJobException {
    List<PendingUpload> uploads = new ArrayList<>();
    for (TaskManifest task : request.taskManifests()) {
      if (!task.jobId().equals(request.jobId())) {
        throw invalid(
            layout,
            request,
            "task attempt " + task.taskAttemptId() + " belongs to job " + task.jobId());
      }
      for (PendingUpload upload : task.uploads()) {
        String other = writerOfKey.putIfAbsent(upload.key(), task.taskAttemptId());
        if (other != null) {
          throw invalid(
              layout,
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
    return uploads;
  }
}
