package dev.writeonce.shim;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.lib.output.FileOutputCommitter;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitter;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitterFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The committer factory for {@code s3a://} where the rename shim is in place: Hadoop's own
 * FileOutputCommitter, as S3A's factory gives with its default settings, without its warning that
 * the committer is slow and unsafe. Through the shim its renames complete multipart uploads and
 * copy nothing, so this says once per process what happens instead. Its job commit returns only
 * once the completions its merge queued have run. Set with {@code
 * mapreduce.outputcommitter.factory.scheme.s3a}.
 */
public final class ShimCommitterFactory extends PathOutputCommitterFactory {

  private static final Logger LOG = LoggerFactory.getLogger(ShimCommitterFactory.class);

  private static final AtomicBoolean TOLD = new AtomicBoolean();

  @Override
  public PathOutputCommitter createOutputCommitter(Path outputPath, TaskAttemptContext context)
      throws IOException {
    if (TOLD.compareAndSet(false, true)) {
      LOG.info(
          "FileOutputCommitter commits to {} through the rename shim: its renames complete the"
              + " files' multipart uploads and copy nothing (said once per process)",
          outputPath);
    }
    return new FileOutputCommitter(outputPath, context) {
      @Override
      public void commitJob(org.apache.hadoop.mapreduce.JobContext job) throws IOException {
        super.commitJob(job);
        // The job commit's merge queues its completions; wait for them even where the commit
        // ends with no call that waits (no _SUCCESS, cleanup skipped).
        if (outputPath != null
            && outputPath.getFileSystem(job.getConfiguration())
                instanceof RenameShimFileSystem shim) {
          shim.awaitCompletions(outputPath);
        }
      }
    };
  }

  /** Whether this process has said it; for tests. */
  static boolean told() {
    return TOLD.get();
  }
}
