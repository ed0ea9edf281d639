package dev.writeonce.cli;

import dev.writeonce.core.committer.ConflictPolicy;
import dev.writeonce.core.committer.MultipartOutputCommitter;
import dev.writeonce.core.committer.MultipartOutputCommitter.StoreOpener;
import dev.writeonce.core.store.RequestType;
import dev.writeonce.core.store.S3StoreGateway;
import dev.writeonce.core.testing.FaultInjectingStore;
import dev.writeonce.staging.StagingCommitter;
import java.io.FileReader;
import java.io.IOException;
import java.io.OutputStream;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Properties;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.task.JobContextImpl;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;

/**
 * A job driver to be killed: it runs a job of {@link #TASKS} tasks through the directory staging
 * committer and, at the point named in its settings, prints {@link #PAUSED} and waits, so that the
 * test can kill its JVM with SIGKILL exactly there. Settings come from a properties file: {@code
 * destination}, {@code point} and Hadoop settings as {@code conf.<key>}.
 */
public final class CommitCrashDriver {

  public static final String PAUSED = "WRITEONCE-DRIVER-PAUSED";
  public static final String FINISHED = "WRITEONCE-DRIVER-FINISHED";
  public static final int TASKS = 8;

  private CommitCrashDriver() {}

  /** The content of one task's output file. */
  public static String content(int task) {
    return ("task " + task + " wrote this line\n").repeat(200 + task);
  }

  public static String fileName(int task) {
    return String.format(Locale.ROOT, "part-m-%05d", task);
  }

  public static void main(String[] args) throws Exception {
    Properties settings = new Properties();
    try (Reader in = new FileReader(args[0], StandardCharsets.UTF_8)) {
      settings.load(in);
    }
    Configuration conf = new Configuration();
    for (String key : settings.stringPropertyNames()) {
      if (key.startsWith("conf.")) {
        conf.set(key.substring("conf.".length()), settings.getProperty(key));
      }
    }
    String point = settings.getProperty("point");
    Path out = new Path(settings.getProperty("destination"));
    FileSystem fs = out.getFileSystem(conf);
    FaultInjectingStore store = new FaultInjectingStore(S3StoreGateway.forFileSystem(fs));
    runJob(
        conf,
        out,
        (path, c) -> store,
        () -> {
          if (point.equals("while-tasks-write")) {
            pause();
          }
        },
        () -> {
          if (point.equals("after-task-commits")) {
            pause();
          }
          // The job commit's PUTs: the job record (committing), the job manifest (the commit
          // point), _SUCCESS, the job record (finished).
          int puts = store.calls(RequestType.PUT_OBJECT);
          switch (point) {
            case "before-commit-point" ->
                store.pauseAt(RequestType.PUT_OBJECT, puts + 2, CommitCrashDriver::announce);
            case "mid-completion" ->
                store.pauseAt(RequestType.COMPLETE_UPLOAD, TASKS / 2, CommitCrashDriver::announce);
            case "before-success" ->
                store.pauseAt(RequestType.PUT_OBJECT, puts + 3, CommitCrashDriver::announce);
            default -> {}
          }
        });
    System.out.println(FINISHED);
  }

  /**
   * Settings that reach the store through a proxy, with S3A's usual retries and a local scratch.
   */
  public static Configuration throughProxy(
      dev.writeonce.teststore.TestStore store, java.net.URI proxy, java.nio.file.Path scratch) {
    Configuration conf = store.configure(new Configuration());
    conf.set("fs.s3a.endpoint", proxy.toString());
    conf.set("fs.s3a.impl.disable.cache", "true");
    conf.set("hadoop.tmp.dir", scratch.resolve("hadoop").toString());
    conf.set("writeonce.staging.local-dir", scratch.resolve("staging").toString());
    return conf;
  }

  /** {@link #runJob} into {@code out}, with nothing injected between its steps. */
  public static void runJob(Configuration conf, String out) throws IOException {
    runJob(conf, new Path(out), MultipartOutputCommitter.S3A, () -> {}, () -> {});
  }

  /**
   * Runs the job of {@link #TASKS} tasks through the directory staging committer, as a MapReduce
   * application master would, calling {@code midTasks} after half the tasks wrote (before that
   * task's commit) and {@code beforeJobCommit} after every task commit.
   */
  public static void runJob(
      Configuration conf, Path out, StoreOpener opener, Runnable midTasks, Runnable beforeJobCommit)
      throws IOException {
    conf.set("mapreduce.output.fileoutputformat.outputdir", out.toString());
    JobID jobId = new JobID("2026112223", 1);
    JobContext job = new JobContextImpl(conf, jobId);
    committer(out, job, opener).setupJob(job);
    for (int task = 0; task < TASKS; task++) {
      TaskAttemptContext context =
          new TaskAttemptContextImpl(
              conf,
              new TaskAttemptID(jobId.getJtIdentifier(), jobId.getId(), TaskType.MAP, task, 0));
      StagingCommitter committer = committer(out, context, opener);
      committer.setupTask(context);
      Path file = new Path(committer.getWorkPath(), fileName(task));
      try (OutputStream stream = file.getFileSystem(conf).create(file, false)) {
        stream.write(content(task).getBytes(StandardCharsets.UTF_8));
      }
      if (task == TASKS / 2) {
        midTasks.run();
      }
      committer.commitTask(context);
    }
    beforeJobCommit.run();
    committer(out, job, opener).commitJob(job);
  }

  private static StagingCommitter committer(Path out, JobContext context, StoreOpener opener)
      throws IOException {
    return new StagingCommitter("directory", out, context, ConflictPolicy.directory(), opener);
  }

  private static void announce() {
    System.out.println(PAUSED);
    System.out.flush();
  }

  private static void pause() {
    announce();
    try {
      Thread.sleep(Long.MAX_VALUE);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
