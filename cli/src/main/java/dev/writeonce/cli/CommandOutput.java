package dev.writeonce.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintWriter;
import java.time.Instant;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;

/**
 * What an operator command reports: lines for people on standard output, or with {@code --json} one
 * JSON document there instead, for scripts. Errors and progress go to standard error either way,
 * and the exit code is the same with and without {@code --json}.
 */
public final class CommandOutput {

  /** The {@code --json} option of every operator command. */
  public static final class Options {
    @Option(
        names = "--json",
        description =
            "print one JSON document on standard output instead of lines for people (errors and"
                + " progress still go to standard error; exit codes are the same)")
    boolean json;
  }

  private static final ObjectMapper MAPPER =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  /** Progress lines go out at most this often, and at the end of each piece of work. */
  private static final long PROGRESS_EVERY_MILLIS = 5_000;

  private final PrintWriter out;
  private final PrintWriter err;
  private final boolean json;
  private final ObjectNode root = MAPPER.createObjectNode();
  private long lastProgressMillis = System.currentTimeMillis();
  private boolean progressShown;

  public CommandOutput(CommandSpec spec, Options options, String command) {
    this.out = spec.commandLine().getOut();
    this.err = spec.commandLine().getErr();
    this.json = options.json;
    root.put("command", command);
  }

  /** The JSON document's top level. */
  public ObjectNode root() {
    return root;
  }

  /** A list at the top level of the JSON document, created on first use. */
  public ArrayNode list(String name) {
    return root.has(name) ? (ArrayNode) root.get(name) : root.putArray(name);
  }

  /** A new entry of a top-level list. */
  public ObjectNode entry(String list) {
    return list(list).addObject();
  }

  /** A line for people; nothing with {@code --json}. */
  public void say(String line) {
    if (!json) {
      out.println(line);
    }
  }

  /** An error or a warning, on standard error whatever the format. */
  public void error(String line) {
    err.println(line);
    list("errors").add(line);
  }

  /**
   * Progress of long work on standard error, every few seconds: work that ends sooner prints none.
   * The last item is printed when progress was.
   */
  public void progress(String what, long done, long total) {
    long now = System.currentTimeMillis();
    if (now - lastProgressMillis >= PROGRESS_EVERY_MILLIS || done == total && progressShown) {
      lastProgressMillis = now;
      progressShown = done != total;
      err.println(what + ": " + done + (total >= 0 ? "/" + total : ""));
      err.flush();
    }
  }

  /** Ends the command: the JSON document, with the exit code and request count, if asked for. */
  public int finish(int exitCode, long requests) {
    root.put("requests", requests);
    root.put("exitCode", exitCode);
    if (json) {
      try {
        out.println(MAPPER.writeValueAsString(root));
      } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
        throw new IllegalStateException(e);
      }
    }
    out.flush();
    return exitCode;
  }

  public static String instant(long millis) {
    return millis <= 0 ? null : Instant.ofEpochMilli(millis).toString();
  }
}
