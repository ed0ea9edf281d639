package dev.writeonce.bench;

import dev.writeonce.cli.Main;
import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The demo and the benchmarks: Spark writes through every way of committing them, the engine on a
 * simulated store, on a MinIO the tool starts itself. They carry Spark and the test stores, which
 * the operator command ({@link Main}) does not.
 */
@Command(
    name = "writeonce-bench",
    mixinStandardHelpOptions = true,
    version = "writeonce-bench 0.1.0",
    description = "The writeonce demo and benchmarks, on a local MinIO.",
    subcommands = {
      DemoCommand.class,
      CompareCommand.class,
      BenchCommand.class,
      EngineBenchCommand.class,
      CompletionLimitCommand.class,
      FreshAppsCommand.class
    },
    footer = {"", "Exit codes: 0 success, 1 the run failed, 2 bad usage."})
public final class BenchMain implements Runnable {

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  public static void main(String[] args) {
    System.exit(run(new PrintWriter(System.out, true), new PrintWriter(System.err, true), args));
  }

  /** Runs the tool with its output and errors going to the given writers. */
  public static int run(PrintWriter out, PrintWriter err, String... args) {
    return Main.run(new BenchMain(), out, err, args);
  }

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }
}
