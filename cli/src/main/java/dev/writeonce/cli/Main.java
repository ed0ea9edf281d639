package dev.writeonce.cli;

import java.util.Arrays;

/** The operator command. Exit codes: 0 success, 1 the operation failed, 2 bad usage. */
public final class Main {

  private Main() {}

  public static void main(String[] args) {
    System.exit(run(args));
  }

  static int run(String[] args) {
    if (args.length == 0 || args[0].equals("--help") || args[0].equals("-h")) {
      System.out.println(usage());
      return args.length == 0 ? 2 : 0;
    }
    String[] rest = Arrays.copyOfRange(args, 1, args.length);
    try {
      switch (args[0]) {
        case "demo":
          return Demo.run(rest);
        default:
          System.err.println("writeonce: unknown command '" + args[0] + "'\n" + usage());
          return 2;
      }
    } catch (IllegalArgumentException e) {
      System.err.println("writeonce: " + e.getMessage());
      return 2;
    } catch (Exception e) {
      System.err.println("writeonce: " + args[0] + " failed: " + e.getMessage());
      return 1;
    }
  }

  static String usage() {
    return String.join(
        "\n",
        "usage: writeonce <command> [options]",
        "",
        "commands:",
        "  demo [--files N] [--tasks N]   start a local MinIO, stage N files as pending multipart",
        "                                 uploads from N tasks, commit them through the job",
        "                                 manifest, and print the store's own request counts",
        "",
        "exit codes: 0 success, 1 the operation failed, 2 bad usage");
  }
}
