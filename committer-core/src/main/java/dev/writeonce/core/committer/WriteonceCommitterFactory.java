package dev.writeonce.core.committer;

import java.io.IOException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitter;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitterFactory;

/**
 * The committer factory to name in {@code mapreduce.outputcommitter.factory.scheme.s3a}: it creates
 * the committer that {@code writeonce.committer} selects, with no change to the job.
 */
public final class WriteonceCommitterFactory extends PathOutputCommitterFactory {

  /** Which committer to use: {@code directory}, {@code partitioned} or {@code magic}. */
  public static final String COMMITTER = "writeonce.committer";

  public static final String COMMITTER_DEFAULT = "directory";

  @Override
  public PathOutputCommitter createOutputCommitter(Path outputPath, TaskAttemptContext context)
      throws IOException {
    if (outputPath == null) {
      throw new IOException(
          "the writeonce committers need an output path: the job sets none"
              + " (mapreduce.output.fileoutputformat.outputdir)");
    }
    Configuration conf = context.getConfiguration();
    return CommitterProviders.find(CommitterProviders.nameIn(conf), conf.getClassLoader())
        .create(outputPath, context);
  }
}
