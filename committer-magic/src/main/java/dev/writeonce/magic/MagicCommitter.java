package dev.writeonce.magic;

import dev.writeonce.core.committer.ConflictPolicy;
import dev.writeonce.core.committer.MultipartOutputCommitter;
import dev.writeonce.core.model.PendingUpload;
import java.io.IOException;
import java.util.List;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The magic committer: tasks write through {@link MagicS3AFileSystem} to a magic work path, and
 * their data streams as multipart parts to the final keys while they write. Task commit persists
 * the attempt's pending uploads; the job commit completes them through the job manifest.
 */
public final class MagicCommitter extends MultipartOutputCommitter {

  private static final Logger LOG = LoggerFactory.getLogger(MagicCommitter.class);

  public static final String NAME = "magic";

  private final Path workPath;

  public MagicCommitter(Path outputPath, JobContext context, StoreOpener opener)
      throws IOException {
    super(NAME, outputPath, context, ConflictPolicy.directory(), opener);
    String attempt =
        context instanceof TaskAttemptContext task ? attemptId(task) : "job-" + jobId(context);
    String baseKey = MagicPaths.baseKey(destination().prefix(), recordsJobId(context), attempt);
    this.workPath = new Path(destination().uriOf(baseKey));
  }

  /**
   * The magic key prefix of the attempt a call names: not necessarily this committer's own. It
   * carries the id the job's records go under, not the Hadoop job id: Spark makes that from the
   * second and the stage, so two writes to one table could otherwise share an attempt's files.
   */
  private String attemptKey(TaskAttemptContext context) {
    String baseKey =
        MagicPaths.baseKey(destination().prefix(), recordsJobId(context), attemptId(context));
    return baseKey.substring(0, baseKey.length() - MagicPaths.BASE.length());
  }

  /** The magic key prefix of every attempt of the job a call names. */
  private String jobKey(JobContext context) {
    return destination().prefix() + MagicPaths.MAGIC_PREFIX + recordsJobId(context) + "/";
  }

  /** The magic path tasks write under; its files stream to the destination. */
  @Override
  public Path getWorkPath() {
    return workPath;
  }

  private MagicS3AFileSystem magicFileSystem(JobContext context) throws IOException {
    FileSystem fs = getOutputPath().getFileSystem(context.getConfiguration());
    if (fs instanceof MagicS3AFileSystem magic) {
      return magic;
    }
    throw new IOException(
        "the magic committer needs MagicS3AFileSystem for "
            + getOutputPath()
            + ", but the filesystem is "
            + fs.getClass().getName()
            + ": set fs.s3a.impl (or fs.s3a.bucket."
            + destination().bucket()
            + ".impl) to "
            + MagicS3AFileSystem.class.getName()
            + ", or choose writeonce.committer=directory");
  }

  @Override
  public void setupJob(JobContext context) throws IOException {
    magicFileSystem(context);
    super.setupJob(context);
  }

  @Override
  protected void prepareTask(TaskAttemptContext context) throws IOException {
    magicFileSystem(context);
  }

  @Override
  protected boolean hasTaskOutput(TaskAttemptContext context) throws IOException {
    return magicFileSystem(context).hasPending(attemptKey(context));
  }

  @Override
  protected List<PendingUpload> uploadTaskOutput(TaskAttemptContext context) throws IOException {
    return magicFileSystem(context).claimAttempt(attemptKey(context));
  }

  @Override
  protected void discardTaskOutput(TaskAttemptContext context) throws IOException {
    magicFileSystem(context).abortAttempt(attemptKey(context));
  }

  @Override
  protected void releaseTask(TaskAttemptContext context) {
    // The attempt's uploads were handed over at claim; nothing is held locally.
  }

  /**
   * Once the job has committed or aborted, aborts the uploads of its attempts in this process that
   * neither committed nor aborted (a task whose commit never came, a speculative attempt left
   * running): their uploads are named nowhere else, and the job no longer needs them.
   */
  @Override
  protected void cleanupJobLocally(JobContext context) throws IOException {
    int aborted = magicFileSystem(context).abortAttemptsUnder(jobKey(context));
    if (aborted > 0) {
      LOG.info(
          "Job {}: aborted the uploads of {} attempts that neither committed nor aborted",
          recordsJobId(context),
          aborted);
    }
  }
}
