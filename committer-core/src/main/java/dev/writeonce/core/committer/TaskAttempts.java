package dev.writeonce.core.committer;

import dev.writeonce.core.engine.JobLayout;
import dev.writeonce.core.engine.JobRecords;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.TaskManifest;
import dev.writeonce.core.store.StoreGateway;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Which of several committed attempts of one task a job commit keeps. */
final class TaskAttempts {

  private static final Logger LOG = LoggerFactory.getLogger(TaskAttempts.class);

  private TaskAttempts() {}

  /**
   * Keeps the highest attempt of each task. Hadoop lets one attempt of a task commit, but an
   * attempt whose commit succeeded and was then reported lost can be followed by another; the
   * earlier attempt's uploads are aborted, so its output never appears.
   */
  static List<TaskManifest> onePerTask(StoreGateway store, List<TaskManifest> manifests)
      throws IOException {
    Map<String, TaskManifest> byTask = new LinkedHashMap<>();
    List<TaskManifest> discarded = new ArrayList<>();
    for (TaskManifest manifest : manifests) {
      String task = taskOf(manifest.taskAttemptId());
      TaskManifest other = byTask.get(task);
      if (other == null) {
        byTask.put(task, manifest);
      } else if (attemptNumber(manifest) > attemptNumber(other)) {
        byTask.put(task, manifest);
        discarded.add(other);
      } else {
        discarded.add(manifest);
      }
    }
    for (TaskManifest loser : discarded) {
      LOG.warn(
          "Task attempt {} is superseded by a later attempt: aborting its uploads",
          loser.taskAttemptId());
      for (PendingUpload upload : loser.uploads()) {
        store.abortUpload(upload.key(), upload.uploadId());
      }
    }
    return new ArrayList<>(byTask.values());
  }

  /**
   * As {@link #onePerTask}, from the keys of the task manifests in the store: the kept ones are
   * returned as keys, for the engine to read as it commits; only superseded ones are read here, to
   * abort their uploads.
   *
   * @return the key of each task's highest attempt, in the order of the listing
   */
  static List<String> onePerTaskStored(StoreGateway store, JobRecords records, String jobId)
      throws IOException {
    String prefix = records.layout().taskManifestPrefix(jobId);
    Map<String, String> byTask = new LinkedHashMap<>();
    List<String> discarded = new ArrayList<>();
    for (String key : records.taskManifestKeys(jobId)) {
      String attempt = JobLayout.attemptOfTaskManifest(prefix, key);
      String task = taskOf(attempt);
      String other = byTask.get(task);
      if (other == null) {
        byTask.put(task, key);
      } else if (attemptNumber(attempt)
          > attemptNumber(JobLayout.attemptOfTaskManifest(prefix, other))) {
        byTask.put(task, key);
        discarded.add(other);
      } else {
        discarded.add(key);
      }
    }
    for (String loser : discarded) {
      Optional<TaskManifest> manifest = records.loadTaskManifest(jobId, loser);
      if (manifest.isPresent()) {
        LOG.warn(
            "Task attempt {} is superseded by a later attempt: aborting its uploads",
            manifest.get().taskAttemptId());
        for (PendingUpload upload : manifest.get().uploads()) {
          store.abortUpload(upload.key(), upload.uploadId());
        }
      }
    }
    return new ArrayList<>(byTask.values());
  }

  /** The task attempt of each task manifest key. */
  static List<String> attemptsOf(JobRecords records, String jobId, List<String> keys) {
    String prefix = records.layout().taskManifestPrefix(jobId);
    return keys.stream().map(key -> JobLayout.attemptOfTaskManifest(prefix, key)).toList();
  }

  private static String taskOf(String attemptId) {
    try {
      return TaskAttemptID.forName(attemptId).getTaskID().toString();
    } catch (IllegalArgumentException e) {
      return attemptId;
    }
  }

  private static int attemptNumber(TaskManifest manifest) {
    return attemptNumber(manifest.taskAttemptId());
  }

  private static int attemptNumber(String attemptId) {
    try {
      return TaskAttemptID.forName(attemptId).getId();
    } catch (IllegalArgumentException e) {
      return 0;
    }
  }
}
