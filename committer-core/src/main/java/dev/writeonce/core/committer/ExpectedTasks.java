package dev.writeonce.core.committer;

import dev.writeonce.core.errors.InvalidJobException;
import dev.writeonce.core.model.TaskManifest;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskID;
import org.apache.hadoop.mapreduce.TaskType;

/**
 * The tasks whose output a submitted MapReduce job publishes: its reduce tasks, or its map tasks
 * when it has no reducers. The job knows how many there are, so its commit can refuse to publish
 * when one of them has no committed task manifest, whatever removed it (a lost write, an operator's
 * command): publishing the rest would report success for a partial output.
 *
 * <p>Only a job submitted through MapReduce's job submission says so ({@code mapreduce.job.dir} is
 * set, and with it the map and reduce counts); other callers, such as Spark, hand their task
 * manifests to the commit themselves.
 */
final class ExpectedTasks {

  static final String JOB_DIR = "mapreduce.job.dir";
  static final String MAPS = "mapreduce.job.maps";
  static final String REDUCES = "mapreduce.job.reduces";

  private final TaskType outputType;
  private final int count;

  private ExpectedTasks(TaskType outputType, int count) {
    this.outputType = outputType;
    this.count = count;
  }

  /** The tasks of a submitted MapReduce job, or empty for any other caller. */
  static Optional<ExpectedTasks> of(Configuration conf) {
    if (conf.getTrimmed(JOB_DIR, "").isEmpty()) {
      return Optional.empty();
    }
    int maps = conf.getInt(MAPS, -1);
    int reduces = conf.getInt(REDUCES, -1);
    if (maps < 0 || reduces < 0) {
      return Optional.empty();
    }
    return Optional.of(
        reduces > 0
            ? new ExpectedTasks(TaskType.REDUCE, reduces)
            : new ExpectedTasks(TaskType.MAP, maps));
  }

  /** Whether the attempt belongs to a task whose output the job publishes. */
  boolean isOutputTask(TaskAttemptID attempt) {
    return attempt.getTaskType() == outputType;
  }

  /**
   * Refuses a commit whose task manifests, one per task, miss a task of the job, naming the missing
   * tasks.
   */
  void requireAll(JobID job, Collection<TaskManifest> oneAttemptPerTask, String destination)
      throws InvalidJobException {
    requireAllAttempts(
        job, oneAttemptPerTask.stream().map(TaskManifest::taskAttemptId).toList(), destination);
  }

  /** As {@link #requireAll}, from the attempt ids of the committed task manifests. */
  void requireAllAttempts(JobID job, Collection<String> oneAttemptPerTask, String destination)
      throws InvalidJobException {
    TreeSet<Integer> present = new TreeSet<>();
    for (String attempt : oneAttemptPerTask) {
      try {
        TaskID task = TaskAttemptID.forName(attempt).getTaskID();
        if (task.getTaskType() == outputType) {
          present.add(task.getId());
        }
      } catch (IllegalArgumentException e) {
        // Not a MapReduce attempt id: it counts for no task.
      }
    }
    List<String> missing = new ArrayList<>();
    for (int id = 0; id < count; id++) {
      if (!present.contains(id)) {
        missing.add(new TaskID(job, outputType, id).toString());
      }
    }
    if (missing.isEmpty()) {
      return;
    }
    throw new InvalidJobException(
        "job "
            + job
            + " on "
            + destination
            + " is incomplete: "
            + missing.size()
            + " of its "
            + count
            + " "
            + outputType.name().toLowerCase(java.util.Locale.ROOT)
            + " tasks have no committed task manifest ("
            + String.join(", ", missing.subList(0, Math.min(10, missing.size())))
            + (missing.size() > 10 ? ", ..." : "")
            + "), so publishing would report success for a partial output. Nothing was published;"
            + " the job is aborted. A task manifest is removed only by this job's own abort or by"
            + " an operator's recover or purge of a job whose lease had lapsed: run the job again",
        null);
  }
}
