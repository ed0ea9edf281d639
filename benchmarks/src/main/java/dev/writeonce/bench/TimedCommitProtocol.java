package dev.writeonce.bench;

import java.io.Serializable;
import java.util.concurrent.atomic.LongAdder;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.spark.internal.io.FileCommitProtocol;
import org.apache.spark.internal.io.FileNameSpec;
import scala.Option;
import scala.collection.immutable.Seq;

/**
 * Times the commit work of another Spark commit protocol: every task commit, summed, and the job
 * commit. For the benchmarks, which run Spark in local mode, one write at a time: the protocol to
 * time and the totals are static, shared by the driver and the executor threads of one JVM.
 */
public class TimedCommitProtocol extends FileCommitProtocol implements Serializable {

  private static final long serialVersionUID = 1L;

  private static volatile String timedClass;
  private static final LongAdder TASK_COMMIT_NANOS = new LongAdder();
  private static final LongAdder JOB_COMMIT_NANOS = new LongAdder();

  /** The commit work of one write. */
  record Timings(long taskCommitNanos, long jobCommitNanos) {
    double taskCommitSeconds() {
      return taskCommitNanos / 1e9;
    }

    double jobCommitSeconds() {
      return jobCommitNanos / 1e9;
    }

    /** Output-commit work: task commits plus the job commit. */
    double commitSeconds() {
      return (taskCommitNanos + jobCommitNanos) / 1e9;
    }
  }

  /** Sets the protocol the next writes use and clears the totals. */
  static void time(String protocolClass) {
    timedClass = protocolClass;
    TASK_COMMIT_NANOS.reset();
    JOB_COMMIT_NANOS.reset();
  }

  /** The totals since {@link #time}. */
  static Timings timings() {
    return new Timings(TASK_COMMIT_NANOS.sum(), JOB_COMMIT_NANOS.sum());
  }

  private final FileCommitProtocol timed;

  public TimedCommitProtocol(String jobId, String path, boolean dynamicPartitionOverwrite) {
    if (timedClass == null) {
      throw new IllegalStateException("TimedCommitProtocol.time(...) names no protocol to time");
    }
    timed = FileCommitProtocol.instantiate(timedClass, jobId, path, dynamicPartitionOverwrite);
  }

  @Override
  public void setupJob(JobContext job) {
    timed.setupJob(job);
  }

  @Override
  public void commitJob(JobContext job, Seq<TaskCommitMessage> messages) {
    long start = System.nanoTime();
    try {
      timed.commitJob(job, messages);
    } finally {
      JOB_COMMIT_NANOS.add(System.nanoTime() - start);
    }
  }

  @Override
  public void abortJob(JobContext job) {
    timed.abortJob(job);
  }

  @Override
  public void setupTask(TaskAttemptContext context) {
    timed.setupTask(context);
  }

  @Override
  @SuppressWarnings("deprecation")
  public String newTaskTempFile(TaskAttemptContext context, Option<String> dir, String ext) {
    return timed.newTaskTempFile(context, dir, ext);
  }

  @Override
  public String newTaskTempFile(TaskAttemptContext context, Option<String> dir, FileNameSpec spec) {
    return timed.newTaskTempFile(context, dir, spec);
  }

  @Override
  @SuppressWarnings("deprecation")
  public String newTaskTempFileAbsPath(TaskAttemptContext context, String absoluteDir, String ext) {
    return timed.newTaskTempFileAbsPath(context, absoluteDir, ext);
  }

  @Override
  public String newTaskTempFileAbsPath(
      TaskAttemptContext context, String absoluteDir, FileNameSpec spec) {
    return timed.newTaskTempFileAbsPath(context, absoluteDir, spec);
  }

  @Override
  public TaskCommitMessage commitTask(TaskAttemptContext context) {
    long start = System.nanoTime();
    try {
      return timed.commitTask(context);
    } finally {
      TASK_COMMIT_NANOS.add(System.nanoTime() - start);
    }
  }

  @Override
  public void abortTask(TaskAttemptContext context) {
    timed.abortTask(context);
  }

  @Override
  public boolean deleteWithJob(FileSystem fs, Path path, boolean recursive) {
    return timed.deleteWithJob(fs, path, recursive);
  }

  @Override
  public void onTaskCommit(TaskCommitMessage message) {
    timed.onTaskCommit(message);
  }
}
