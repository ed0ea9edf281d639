package dev.writeonce.bench;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(
    name = "demo",
    description =
        "Start a local MinIO, stage files as pending multipart uploads from several tasks, commit them through the job manifest, and print the store's own request counts.",
    mixinStandardHelpOptions = true)
final class DemoCommand implements Callable<Integer> {

  @Option(names = "--files", defaultValue = "1000", description = "files to write (default 1000)")
  int files;

  @Option(names = "--tasks", defaultValue = "10", description = "tasks writing them (default 10)")
  int tasks;

  @Override
  public Integer call() throws Exception {
    return Demo.run(
        new String[] {"--files", Integer.toString(files), "--tasks", Integer.toString(tasks)});
  }
}
