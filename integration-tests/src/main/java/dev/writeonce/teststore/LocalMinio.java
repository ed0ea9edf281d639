package dev.writeonce.teststore;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A MinIO server process on a free loopback port with a fresh data directory. The binary is the
 * project's pinned build, made once by {@code scripts/provision-minio.sh} and cached; {@code
 * WRITEONCE_MINIO_BINARY} names another binary instead.
 */
public final class LocalMinio extends AbstractTestStore {

  private static final Logger LOG = LoggerFactory.getLogger(LocalMinio.class);
  private static final Duration START_TIMEOUT = Duration.ofSeconds(90);

  private final Process process;
  private final Path dir;

  private LocalMinio(Process process, Path dir, URI endpoint, String user, String password) {
    super("minio", endpoint, new MinioMetricsMeter(endpoint), "us-east-1", user, password);
    this.process = process;
    this.dir = dir;
  }

  /** Provisions the binary if needed and starts a server; close() stops it. */
  public static LocalMinio start() throws IOException {
    Path binary = binary();
    Path dir = Files.createTempDirectory("writeonce-minio-");
    int port = freePort();
    int consolePort = freePort();
    String user = "writeonce-" + UUID.randomUUID().toString().substring(0, 8);
    String password = UUID.randomUUID().toString();
    ProcessBuilder builder =
        new ProcessBuilder(
                binary.toString(),
                "server",
                dir.resolve("data").toString(),
                "--address",
                "127.0.0.1:" + port,
                "--console-address",
                "127.0.0.1:" + consolePort)
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("minio.log").toFile());
    builder.environment().put("MINIO_ROOT_USER", user);
    builder.environment().put("MINIO_ROOT_PASSWORD", password);
    builder.environment().put("MINIO_PROMETHEUS_AUTH_TYPE", "public");
    builder.environment().put("MINIO_BROWSER", "off");
    builder.environment().put("MINIO_UPDATE", "off");
    URI endpoint = URI.create("http://127.0.0.1:" + port);
    Process process = builder.start();
    LocalMinio minio = new LocalMinio(process, dir, endpoint, user, password);
    try {
      minio.awaitLive();
    } catch (IOException | RuntimeException e) {
      minio.close();
      throw e;
    }
    LOG.info("MinIO {} started at {} (data in {})", binary, endpoint, dir);
    return minio;
  }

  private static Path binary() throws IOException {
    String configured = System.getenv("WRITEONCE_MINIO_BINARY");
    if (configured != null && !configured.isBlank()) {
      return Path.of(configured);
    }
    Path script = ProjectFiles.script("provision-minio.sh");
    Path log = Path.of(System.getProperty("java.io.tmpdir"), "writeonce-provision-minio.log");
    LOG.info(
        "Provisioning the pinned MinIO server (the first run builds it, about 3 minutes; log: {})",
        log);
    String out = Processes.run(List.of(script.toString()), log, 1200).trim();
    String[] lines = out.split("\n");
    return Path.of(lines[lines.length - 1]);
  }

  private void awaitLive() throws IOException {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    URI live = endpoint().resolve("/minio/health/live");
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IOException(
            "MinIO exited with code "
                + process.exitValue()
                + Processes.tail(dir.resolve("minio.log")));
      }
      try {
        HttpResponse<Void> response =
            http.send(
                HttpRequest.newBuilder(live).GET().build(), HttpResponse.BodyHandlers.discarding());
        if (response.statusCode() == 200) {
          return;
        }
      } catch (IOException notYet) {
        // not listening yet
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new InterruptedIOException("waiting for MinIO");
      }
      sleep(200);
    }
    throw new IOException(
        "MinIO did not answer "
            + live
            + " within "
            + START_TIMEOUT
            + Processes.tail(dir.resolve("minio.log")));
  }

  static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }

  private static void sleep(long millis) throws InterruptedIOException {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException();
    }
  }

  @Override
  public void close() {
    adminClient().close();
    process.destroy();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    ScratchDirectories.remove(dir);
  }
}
