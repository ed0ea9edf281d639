package dev.writeonce.staging;

import dev.writeonce.core.committer.CommitterProvider;
import dev.writeonce.core.committer.ConflictPolicy;
import dev.writeonce.core.committer.MultipartOutputCommitter;
import java.io.IOException;
import java.util.function.Supplier;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitter;

/** The staging committers, as the factory finds them by {@code writeonce.committer}. */
public abstract class StagingCommitterProvider implements CommitterProvider {

  private final String name;
  private final Supplier<ConflictPolicy> conflicts;

  StagingCommitterProvider(String name, Supplier<ConflictPolicy> conflicts) {
    this.name = name;
    this.conflicts = conflicts;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public PathOutputCommitter create(Path outputPath, TaskAttemptContext context)
      throws IOException {
    return new StagingCommitter(
        name, outputPath, context, conflicts.get(), MultipartOutputCommitter.S3A);
  }

  /** {@code directory}: the whole destination is the unit of conflict. */
  public static final class Directory extends StagingCommitterProvider {
    public Directory() {
      super("directory", ConflictPolicy::directory);
    }
  }

  /** {@code partitioned}: each partition directory the job writes is the unit of conflict. */
  public static final class Partitioned extends StagingCommitterProvider {
    public Partitioned() {
      super("partitioned", ConflictPolicy::partitioned);
    }
  }
}
