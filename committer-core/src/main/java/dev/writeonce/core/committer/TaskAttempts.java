package dev.writeonce.core.committer;

import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.TaskManifest;
import dev.writeonce.core.store.StoreGateway;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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

  private static String taskOf(String attemptId) {
    try {
      return TaskAttemptID.forName(attemptId).getTaskID().toString();
    } catch (IllegalArgumentException e) {
      return attemptId;
    }
  }

  private static int attemptNumber(TaskManifest manifest) {
    try {
      return TaskAttemptID.forName(manifest.taskAttemptId()).getId();
    } catch (IllegalArgumentException e) {
      return 0;
    }
  }
}
