package dev.writeonce.teststore;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs the provisioning scripts and reports their failures with the end of their log. */
final class Processes {

  private Processes() {}

  /** Runs a command to its end; stdout is returned, stderr goes to the log file and console. */
  static String run(List<String> command, Path log, long timeoutSeconds) throws IOException {
    Files.createDirectories(log.getParent());
    ProcessBuilder builder =
        new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()));
    Process process = builder.start();
    byte[] out;
    try {
      out = process.getInputStream().readAllBytes();
      if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new IOException(
            String.join(" ", command) + " did not finish in " + timeoutSeconds + " s" + tail(log));
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new InterruptedIOException(String.join(" ", command));
    }
    if (process.exitValue() != 0) {
      throw new IOException(
          String.join(" ", command) + " failed with exit code " + process.exitValue() + tail(log));
    }
    return new String(out, StandardCharsets.UTF_8);
  }

  static String tail(Path log) {
    try {
      List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
      List<String> last = lines.subList(Math.max(0, lines.size() - 25), lines.size());
      return "\n--- last lines of " + log + " ---\n" + String.join("\n", last);
    } catch (IOException e) {
      return " (log " + log + " unreadable: " + e.getMessage() + ")";
    }
  }
}
