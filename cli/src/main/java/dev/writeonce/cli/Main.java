package dev.writeonce.cli;

import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The operator command: inspect, recover, purge and check-store. It needs Java, Hadoop's S3A and
 * the AWS SDK only; the demo and the benchmarks are the {@code benchmarks} module's.
 *
 * <p>Exit codes: 0 success (for inspect: nothing needs attention), 1 the operation failed, 2 bad
 * usage or a destination that cannot be used, 3 inspect found jobs that need recovery or records
 * that cannot be read, 4 the store does not honour a request a guarantee rests on (check-store
 * finds it; recover and purge refuse such a store).
 */
@Command(
    name = "writeonce",
    mixinStandardHelpOptions = true,
    versionProvider = Main.BuildVersion.class,
    description = "Operate on destinations written by the writeonce committers.",
    subcommands = {
      InspectCommand.class,
      RecoverCommand.class,
      PurgeCommand.class,
      CheckStoreCommand.class
    },
    footer = {
      "",
      "Exit codes: 0 success, 1 the operation failed, 2 bad usage or unusable destination,",
      "3 (inspect) jobs need recovery or records are damaged,",
      "4 (check-store, recover, purge) the store does not honour what a guarantee rests on."
    })
public final class Main implements Runnable {

  public static final int OK = 0;
  public static final int FAILED = 1;
  public static final int USAGE = 2;
  public static final int ATTENTION = 3;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  /** The version the build wrote into the jar, so that a release prints its own. */
  static final class BuildVersion implements CommandLine.IVersionProvider {

    private static final String POM_PROPERTIES = "/META-INF/maven/dev.writeonce/cli/pom.properties";

    @Override
    public String[] getVersion() throws java.io.IOException {
      java.util.Properties properties = new java.util.Properties();
      try (java.io.InputStream in = Main.class.getResourceAsStream(POM_PROPERTIES)) {
        if (in != null) {
          properties.load(in);
        }
      }
      return new String[] {"writeonce " + properties.getProperty("version", "(built from source)")};
    }
  }

  public static void main(String[] args) {
    System.exit(run(new PrintWriter(System.out, true), new PrintWriter(System.err, true), args));
  }

  /** Runs the command with its output and errors going to the given writers. */
  public static int run(PrintWriter out, PrintWriter err, String... args) {
    return run(new Main(), out, err, args);
  }

  /**
   * Runs a picocli command with this command's exit codes and error lines: the operator command, or
   * another tool built on it.
   */
  public static int run(Object command, PrintWriter out, PrintWriter err, String... args) {
    CommandLine line = new CommandLine(command);
    line.setOut(out);
    line.setErr(err);
    line.setExitCodeExceptionMapper(
        e ->
            e instanceof IllegalArgumentException || e instanceof CommandLine.ParameterException
                ? USAGE
                : e instanceof dev.writeonce.core.errors.UntrustedStoreException
                    ? CheckStoreCommand.UNTRUSTED
                    : FAILED);
    line.setExecutionExceptionHandler(
        (e, commandLine, parseResult) -> {
          commandLine
              .getErr()
              .println("writeonce " + commandLine.getCommandName() + ": " + Messages.of(e));
          return commandLine.getExitCodeExceptionMapper().getExitCode(e);
        });
    return line.execute(args);
  }

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }
}
