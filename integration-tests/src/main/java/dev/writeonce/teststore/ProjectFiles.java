package dev.writeonce.teststore;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Finds the project's scripts, which provision the stores. */
public final class ProjectFiles {

  private ProjectFiles() {}

  public static Path script(String name) throws IOException {
    String configured =
        System.getProperty("writeonce.project.root", System.getenv("WRITEONCE_PROJECT_ROOT"));
    if (configured != null && !configured.isBlank()) {
      Path candidate = Path.of(configured, "scripts", name);
      if (Files.isExecutable(candidate)) {
        return candidate;
      }
    }
    for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
      Path candidate = dir.resolve("scripts").resolve(name);
      if (Files.isExecutable(candidate)) {
        return candidate;
      }
    }
    throw new IOException(
        "cannot find scripts/"
            + name
            + ": run from the project checkout or set WRITEONCE_PROJECT_ROOT to it");
  }
}
