package dev.writeonce.spark;

import dev.writeonce.core.committer.MultipartOutputCommitter;
import dev.writeonce.core.model.TaskManifest;
import java.io.IOException;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.OutputCommitter;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.spark.mapred.SparkHadoopMapRedUtil;

/**
 * A task attempt's commit under Spark's output-commit coordinator, so that one attempt per
 * partition commits: the attempt's committer turns its output into a task manifest, carried to the
 * driver in the task commit message rather than written to the store.
 */
public final class CoordinatedTaskCommit {

  private CoordinatedTaskCommit() {}

  /** Commits the attempt if the coordinator lets it, and returns its manifest. */
  public static TaskManifest commit(MultipartOutputCommitter task, TaskAttemptContext context) {
    TaskManifest[] manifest = new TaskManifest[1];
    OutputCommitter coordinated =
        new OutputCommitter() {
          @Override
          public void setupJob(JobContext job) {}

          @Override
          public void setupTask(TaskAttemptContext attempt) {}

          @Override
          public boolean needsTaskCommit(TaskAttemptContext attempt) {
            return true;
          }

          @Override
          public void commitTask(TaskAttemptContext attempt) throws IOException {
            manifest[0] = task.commitTaskToManifest(attempt);
          }

          @Override
          public void abortTask(TaskAttemptContext attempt) throws IOException {
            task.abortTask(attempt);
          }
        };
    TaskAttemptID attempt = context.getTaskAttemptID();
    SparkHadoopMapRedUtil.commitTask(
        coordinated, context, attempt.getJobID().getId(), attempt.getTaskID().getId());
    return manifest[0];
  }
}
