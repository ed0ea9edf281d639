package dev.writeonce.magic;

import dev.writeonce.core.committer.CommitterProvider;
import dev.writeonce.core.committer.MultipartOutputCommitter;
import java.io.IOException;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitter;

/** {@code writeonce.committer=magic}. */
public final class MagicCommitterProvider implements CommitterProvider {

  @Override
  public String name() {
    return MagicCommitter.NAME;
  }

  @Override
  public PathOutputCommitter create(Path outputPath, TaskAttemptContext context)
      throws IOException {
    return new MagicCommitter(outputPath, context, MultipartOutputCommitter.S3A);
  }
}
