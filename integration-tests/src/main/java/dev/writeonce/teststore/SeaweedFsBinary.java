package dev.writeonce.teststore;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.InterruptedIOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The pinned SeaweedFS server binary, built once from its Go module and cached per version in
 * {@code ${XDG_CACHE_HOME:-~/.cache}/writeonce/seaweedfs/<version>/weed}, as MinIO's is. {@code go
 * install} refuses the module (its go.mod has replace directives), so the module is downloaded,
 * copied out of the module cache and built in the copy. A lock file per version keeps two JVMs from
 * building at once; the binary reaches the cache by an atomic rename, so a reader never sees part
 * of one. {@code WRITEONCE_SEAWEEDFS_BINARY} names another binary instead.
 */
final class SeaweedFsBinary {

  /**
   * The system property with the module version; the build sets it from {@code seaweedfs.version}.
   */
  static final String VERSION_PROPERTY = "writeonce.seaweedfs.version";

  private static final String MODULE = "github.com/seaweedfs/seaweedfs";
  private static final long DOWNLOAD_TIMEOUT_SECONDS = 900;
  private static final long BUILD_TIMEOUT_SECONDS = 1800;
  private static final long PROGRESS_EVERY_SECONDS = 30;

  private static final Logger LOG = LoggerFactory.getLogger(SeaweedFsBinary.class);

  private SeaweedFsBinary() {}

  /** The binary to run: the configured one, or the cached build of the pinned version. */
  static Path provision() throws IOException {
    String configured = System.getenv("WRITEONCE_SEAWEEDFS_BINARY");
    if (configured != null && !configured.isBlank()) {
      return Path.of(configured);
    }
    String version = System.getProperty(VERSION_PROPERTY, "").trim();
    if (version.isEmpty()) {
      throw new IOException(
          VERSION_PROPERTY
              + " is not set: the build passes the parent pom's seaweedfs.version; outside Maven"
              + " pass -D"
              + VERSION_PROPERTY
              + "=<module version> or set WRITEONCE_SEAWEEDFS_BINARY");
    }
    Path root = cacheHome().resolve("writeonce").resolve("seaweedfs");
    Path binary = root.resolve(version).resolve("weed");
    if (Files.isExecutable(binary)) {
      return binary;
    }
    Files.createDirectories(binary.getParent());
    try (FileChannel lockFile =
        FileChannel.open(
            root.resolve(version + ".lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
      FileLock lock = lockFile.tryLock();
      if (lock == null) {
        LOG.info("Another process is building SeaweedFS {}; waiting for it", version);
        lock = lockFile.lock();
      }
      try {
        if (!Files.isExecutable(binary)) {
          build(version, root, binary);
        }
      } finally {
        lock.release();
      }
    }
    return binary;
  }

  private static Path cacheHome() {
    String xdg = System.getenv("XDG_CACHE_HOME");
    return xdg != null && !xdg.isBlank()
        ? Path.of(xdg)
        : Path.of(System.getProperty("user.home"), ".cache");
  }

  private static void build(String version, Path root, Path binary) throws IOException {
    Path log = root.resolve(version + ".build.log");
    Files.deleteIfExists(log);
    LOG.info(
        "Building SeaweedFS {}@{} (first run only, 5 to 10 minutes; log: {})",
        MODULE,
        version,
        log);
    long started = System.nanoTime();
    Path work = Files.createTempDirectory(root, version + ".build-");
    try {
      Path module = download(version, log);
      Path source = work.resolve("src");
      copyWritable(module, source);
      Path built = work.resolve("weed");
      goBuild(source, built, log, started);
      Files.move(built, binary, StandardCopyOption.ATOMIC_MOVE);
      LOG.info(
          "Built SeaweedFS {} in {} s: {}",
          version,
          TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started),
          binary);
    } finally {
      ScratchDirectories.remove(work);
    }
  }

  /** Downloads the module into Go's module cache and returns its directory there. */
  private static Path download(String version, Path log) throws IOException {
    String out =
        Processes.run(
            List.of("go", "mod", "download", "-json", MODULE + "@" + version),
            log,
            DOWNLOAD_TIMEOUT_SECONDS);
    JsonNode info = new ObjectMapper().readTree(out);
    if (info.hasNonNull("Error") || !info.hasNonNull("Dir")) {
      throw new IOException(
          "go mod download " + MODULE + "@" + version + " failed: " + info.path("Error").asText());
    }
    return Path.of(info.get("Dir").asText());
  }

  /** Copies the module's tree; the module cache keeps it read-only, the build needs to write. */
  private static void copyWritable(Path from, Path to) throws IOException {
    try (Stream<Path> paths = Files.walk(from)) {
      paths.forEach(
          path -> {
            Path target = to.resolve(from.relativize(path).toString());
            try {
              if (Files.isDirectory(path)) {
                Files.createDirectories(target);
              } else {
                Files.copy(path, target);
                Set<PosixFilePermission> permissions = Files.getPosixFilePermissions(target);
                permissions.add(PosixFilePermission.OWNER_WRITE);
                Files.setPosixFilePermissions(target, permissions);
              }
            } catch (IOException e) {
              throw new UncheckedIOException(e);
            }
          });
    } catch (UncheckedIOException e) {
      throw e.getCause();
    }
  }

  /** {@code go build -o <built> ./weed}, logging progress while the packages compile. */
  private static void goBuild(Path source, Path built, Path log, long started) throws IOException {
    ProcessBuilder builder =
        new ProcessBuilder("go", "build", "-v", "-o", built.toString(), "./weed")
            .directory(source.toFile())
            .redirectErrorStream(true);
    builder.environment().put("GOWORK", "off");
    Process process;
    try {
      process = builder.start();
    } catch (IOException e) {
      throw new IOException(
          "cannot run 'go' ("
              + e.getMessage()
              + "): install Go 1.26+ or set"
              + " WRITEONCE_SEAWEEDFS_BINARY to a SeaweedFS server binary",
          e);
    }
    AtomicInteger packages = new AtomicInteger();
    Thread reader =
        new Thread(
            () -> {
              try (BufferedReader lines =
                      new BufferedReader(
                          new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
                  PrintWriter out =
                      new PrintWriter(
                          Files.newBufferedWriter(
                              log,
                              StandardCharsets.UTF_8,
                              StandardOpenOption.CREATE,
                              StandardOpenOption.APPEND))) {
                String line;
                while ((line = lines.readLine()) != null) {
                  out.println(line);
                  packages.incrementAndGet();
                }
              } catch (IOException e) {
                // the process ended; its exit code tells
              }
            },
            "seaweedfs-build-output");
    reader.setDaemon(true);
    reader.start();
    try {
      long deadline = started + TimeUnit.SECONDS.toNanos(BUILD_TIMEOUT_SECONDS);
      while (!process.waitFor(PROGRESS_EVERY_SECONDS, TimeUnit.SECONDS)) {
        long elapsed = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started);
        if (System.nanoTime() > deadline) {
          process.destroyForcibly();
          throw new IOException(
              "go build of SeaweedFS did not finish in "
                  + BUILD_TIMEOUT_SECONDS
                  + " s"
                  + Processes.tail(log));
        }
        LOG.info(
            "Building SeaweedFS: {} s, {} output lines (packages compiled) so far",
            elapsed,
            packages.get());
      }
      reader.join(TimeUnit.SECONDS.toMillis(10));
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("building SeaweedFS");
    }
    if (process.exitValue() != 0 || !Files.isExecutable(built)) {
      throw new IOException(
          "go build of SeaweedFS failed with exit code "
              + process.exitValue()
              + Processes.tail(log));
    }
  }
}
