package dev.writeonce.packaging;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The built bundles, module jars and operator tarball, copied into {@code target/dist} by the build
 * (integration-tests' pom) before the integration suites run.
 */
final class Distributions {

  private Distributions() {}

  static Path dir() {
    Path dir = Path.of(System.getProperty("writeonce.dist.dir", "target/dist"));
    if (!Files.isDirectory(dir)) {
      throw new IllegalStateException(
          dir.toAbsolutePath()
              + " does not exist: run the suite with 'mvn verify' from the project root, which"
              + " builds the bundles and the tarball and copies them there");
    }
    return dir;
  }

  static String version() {
    String version = System.getProperty("writeonce.version");
    if (version == null) {
      throw new IllegalStateException("writeonce.version is not set: run the suite through Maven");
    }
    return version;
  }

  static Path file(String name) {
    Path file = dir().resolve(name);
    if (!Files.isRegularFile(file)) {
      throw new IllegalStateException(file.toAbsolutePath() + " was not built");
    }
    return file;
  }
}
