package dev.writeonce.core.committer;

import java.io.IOException;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitter;

/**
 * A committer module's entry point, found through {@link java.util.ServiceLoader}: the factory
 * picks the provider whose name {@code writeonce.committer} gives, so the core names no committer
 * class.
 */
public interface CommitterProvider {

  /** The value of {@code writeonce.committer} that selects this committer. */
  String name();

  PathOutputCommitter create(Path outputPath, TaskAttemptContext context) throws IOException;
}
