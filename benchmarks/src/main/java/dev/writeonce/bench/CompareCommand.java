package dev.writeonce.bench;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
    name = "compare",
    mixinStandardHelpOptions = true,
    description =
        "Start a local MinIO and Spark in local mode, write one partitioned Parquet workload through"
            + " Spark's FileOutputCommitter v1 on S3A, Hadoop's S3A magic and directory committers,"
            + " this project's directory and magic committers and the rename shim, and print one"
            + " table of the store's own counts.")
final class CompareCommand implements Callable<Integer> {

  @Option(names = "--rows", defaultValue = "200000", description = "rows to write (200000)")
  int rows;

  @Option(names = "--tasks", defaultValue = "20", description = "write tasks (20): 5 files each")
  int tasks;

  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    return SparkComparison.run(spec.commandLine().getOut(), rows, tasks);
  }
}
