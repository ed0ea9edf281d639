package dev.writeonce.bench;

import dev.writeonce.shim.RenameShimFileSystem;
import dev.writeonce.teststore.Traffic;
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

  /**
   * The store's counts and the rename shim's statistics (calls and their time by kind, barrier
   * waits) across the last job commit, where the output is written through the shim.
   */
  record JobCommitProfile(Traffic traffic, java.util.Map<String, Long> shim, long nanos) {}

  private static volatile java.util.function.Supplier<Traffic> meter;
  private static volatile JobCommitProfile lastProfile;

  /** Reads the store's counts around each job commit from now on. */
  static void meter(java.util.function.Supplier<Traffic> reader) {
    meter = reader;
  }

  /** The profile of the last job commit through the shim, if any since {@link #time}. */
  static java.util.Optional<JobCommitProfile> lastProfile() {
    return java.util.Optional.ofNullable(lastProfile);
  }

  /** Sets the protocol the next writes use and clears the totals. */
  static void time(String protocolClass) {
    timedClass = protocolClass;
    lastProfile = null;
    TASK_COMMIT_NANOS.reset();
    JOB_COMMIT_NANOS.reset();
  }

  /** The totals since {@link #time}. */
  static Timings timings() {
    return new Timings(TASK_COMMIT_NANOS.sum(), JOB_COMMIT_NANOS.sum());
  }

  private final FileCommitProtocol timed;
  private final String outputPath;

  public TimedCommitProtocol(String jobId, String path, boolean dynamicPartitionOverwrite) {
    outputPath = path;
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
    RenameShimFileSystem shim = shimOf(job);
    java.util.function.Supplier<Traffic> reader = meter;
    Traffic before = shim == null || reader == null ? null : reader.get();
    java.util.Map<String, Long> shimBefore = shim == null ? null : shim.shimStatistics().asMap();
    long start = System.nanoTime();
    try {
      timed.commitJob(job, messages);
    } finally {
      long nanos = System.nanoTime() - start;
      JOB_COMMIT_NANOS.add(nanos);
      if (before != null) {
        java.util.Map<String, Long> delta = new java.util.LinkedHashMap<>();
        shim.shimStatistics()
            .asMap()
            .forEach((key, value) -> delta.put(key, value - shimBefore.getOrDefault(key, 0L)));
        lastProfile = new JobCommitProfile(reader.get().minus(before), delta, nanos);
      }
    }
  }

  private RenameShimFileSystem shimOf(JobContext job) {
    try {
      FileSystem fs = new Path(outputPath).getFileSystem(job.getConfiguration());
      return fs instanceof RenameShimFileSystem shim ? shim : null;
    } catch (java.io.IOException e) {
      return null;
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
