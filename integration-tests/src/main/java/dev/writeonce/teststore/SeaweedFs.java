package dev.writeonce.teststore;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;

/**
 * A SeaweedFS server process (master, volume server, filer and S3 gateway in one {@code weed
 * server}) on loopback ports with a fresh data directory. The binary is the pinned build of {@link
 * SeaweedFsBinary}. Its requests are metered by a {@link StoreRelay} in front of the S3 port:
 * SeaweedFS's own Prometheus counters ({@code SeaweedFS_s3_request_total}) are per HTTP method and
 * bucket, not per S3 operation. The suites reach the store through the relay; the server's log is
 * kept in {@code target/seaweedfs/} of the working directory.
 */
public final class SeaweedFs extends AbstractTestStore {

  private static final Logger LOG = LoggerFactory.getLogger(SeaweedFs.class);
  private static final Duration START_TIMEOUT = Duration.ofSeconds(120);
  private static final int START_ATTEMPTS = 3;

  /** SeaweedFS serves gRPC on each service's port plus this, unless told otherwise. */
  private static final int GRPC_OFFSET = 10_000;

  /**
   * One volume at a time where a collection grows (SeaweedFS: 7). Every bucket is a collection of
   * its own: with the defaults, 7 volumes a time and 8 slots, a second bucket found no free volume.
   */
  private static final Map<String, String> ONE_VOLUME_PER_GROWTH =
      Map.of("WEED_MASTER_VOLUME_GROWTH_COPY_1", "1");

  /** Volume slots, one per bucket the suites create (volume files are sparse). */
  private static final int MAX_VOLUMES = 2000;

  /** The services of one {@code weed server}, in the order of their ports. */
  private static final List<String> SERVICES = List.of("master", "volume", "filer", "s3");

  private final Process process;
  private final Path dir;
  private final Path log;
  private final StoreRelay relay;
  private final List<Integer> ports;

  private SeaweedFs(
      Process process,
      Path dir,
      Path log,
      StoreRelay relay,
      List<Integer> ports,
      String accessKey,
      String secretKey) {
    super("seaweedfs", relay.endpoint(), relay, "us-east-1", accessKey, secretKey);
    this.process = process;
    this.dir = dir;
    this.log = log;
    this.relay = relay;
    this.ports = ports;
  }

  /** Provisions the binary if needed and starts a server; close() stops it. */
  static SeaweedFs start() throws IOException {
    Path binary = SeaweedFsBinary.provision();
    IOException failure = null;
    for (int attempt = 1; attempt <= START_ATTEMPTS; attempt++) {
      try {
        return startOnce(binary);
      } catch (PortTaken e) {
        // another process took a port between the check and the server's bind: new ports
        failure = e;
        LOG.info("SeaweedFS could not bind its ports (attempt {}): {}", attempt, e.getMessage());
      }
    }
    throw failure;
  }

  private static SeaweedFs startOnce(Path binary) throws IOException {
    Path dir = Files.createTempDirectory("writeonce-seaweedfs-");
    String accessKey = "writeonce-" + UUID.randomUUID().toString().substring(0, 8);
    String secretKey = UUID.randomUUID().toString();
    Path identities = dir.resolve("s3.json");
    Files.writeString(identities, identitiesJson(accessKey, secretKey), StandardCharsets.UTF_8);
    Path data = Files.createDirectories(dir.resolve("data"));
    List<Integer> ports = freePortsWithGrpc(SERVICES.size());
    int s3Port = ports.get(3);
    Path logs = Files.createDirectories(Path.of("target", "seaweedfs").toAbsolutePath());
    Path log = logs.resolve("weed-" + s3Port + ".log");
    List<String> command =
        List.of(
            binary.toString(),
            "server",
            "-dir=" + data,
            "-ip=127.0.0.1",
            "-master.port=" + ports.get(0),
            "-volume.port=" + ports.get(1),
            "-filer.port=" + ports.get(2),
            "-filer.localSocket=" + dir.resolve("filer.sock"),
            "-volume.max=" + MAX_VOLUMES,
            "-master.telemetry=false",
            "-s3",
            "-s3.port=" + s3Port,
            "-s3.config=" + identities,
            "-s3.localSocket=" + dir.resolve("s3.sock"),
            // The catalog servers SeaweedFS starts beside S3 take fixed ports by default.
            "-s3.port.iceberg=0",
            "-s3.port.lance=0");
    ProcessBuilder builder =
        new ProcessBuilder(command)
            // SeaweedFS also reads master.toml and its other settings from its working directory.
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile());
    builder.environment().putAll(ONE_VOLUME_PER_GROWTH);
    Process process = builder.start();
    StoreRelay relay;
    try {
      relay = StoreRelay.start(URI.create("http://127.0.0.1:" + s3Port));
    } catch (IOException e) {
      stop(process, ports);
      ScratchDirectories.remove(dir);
      throw e;
    }
    SeaweedFs store = new SeaweedFs(process, dir, log, relay, ports, accessKey, secretKey);
    try {
      store.awaitReady(s3Port);
    } catch (IOException | RuntimeException e) {
      store.close();
      throw e;
    }
    LOG.info(
        "SeaweedFS {} started: S3 at {} through the counting relay at {} (data in {}, log {})",
        binary,
        "127.0.0.1:" + s3Port,
        store.endpoint(),
        dir,
        log);
    return store;
  }

  private static String identitiesJson(String accessKey, String secretKey) throws IOException {
    Map<String, Object> identity =
        Map.of(
            "name",
            "writeonce",
            "credentials",
            List.of(Map.of("accessKey", accessKey, "secretKey", secretKey)),
            "actions",
            List.of("Admin", "Read", "Write", "List", "Tagging"));
    return new ObjectMapper().writeValueAsString(Map.of("identities", List.of(identity)));
  }

  /**
   * Ports whose gRPC companions are free too, the pairs below the kernel's range for outgoing
   * connections where it starts high enough, so that no client connection takes one before the
   * server binds it.
   */
  private static List<Integer> freePortsWithGrpc(int count) throws IOException {
    int floor = 10_000;
    int ceiling = Math.max(floor + 1_000, ephemeralLow() - GRPC_OFFSET);
    List<Integer> ports = new ArrayList<>();
    for (int tries = 0; ports.size() < count && tries < 10_000; tries++) {
      int port = ThreadLocalRandom.current().nextInt(floor, ceiling);
      if (!ports.contains(port) && isFree(port) && isFree(port + GRPC_OFFSET)) {
        ports.add(port);
      }
    }
    if (ports.size() < count) {
      throw new IOException(
          "found no "
              + count
              + " free ports between "
              + floor
              + " and "
              + ceiling
              + " for SeaweedFS");
    }
    return ports;
  }

  /** The first port of the kernel's range for outgoing connections. */
  private static int ephemeralLow() {
    try {
      // Not Files.readString, which returned a truncated value for this procfs file.
      String range =
          Files.readAllLines(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).get(0).trim();
      return Integer.parseInt(range.split("\\s+")[0]);
    } catch (IOException | RuntimeException e) {
      return 32_768;
    }
  }

  private static boolean isFree(int port) {
    try (ServerSocket socket = new ServerSocket()) {
      socket.setReuseAddress(false);
      socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /**
   * Waits until S3 answers on the server's own port, then until a write succeeds: the gateway
   * answers before the volume server has joined the master, and until then writes fail.
   */
  private void awaitReady(int s3Port) throws IOException {
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    URI health = URI.create("http://127.0.0.1:" + s3Port + "/healthz");
    while (true) {
      checkAlive();
      try {
        HttpResponse<Void> response =
            http.send(
                HttpRequest.newBuilder(health).GET().build(),
                HttpResponse.BodyHandlers.discarding());
        if (response.statusCode() == 200) {
          break;
        }
      } catch (IOException notYet) {
        // not listening yet
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new InterruptedIOException("waiting for SeaweedFS");
      }
      checkDeadline(deadline, health + " to answer 200");
      sleep(200);
    }
    String bucket = "writeonce-ready-" + UUID.randomUUID().toString().substring(0, 8);
    boolean created = false;
    while (true) {
      checkAlive();
      try {
        if (!created) {
          adminClient().createBucket(b -> b.bucket(bucket));
          created = true;
        }
        adminClient()
            .putObject(b -> b.bucket(bucket).key("ready"), RequestBody.fromString("ready"));
        adminClient().deleteObject(b -> b.bucket(bucket).key("ready"));
        adminClient().deleteBucket(b -> b.bucket(bucket));
        return;
      } catch (SdkException notYet) {
        checkDeadline(deadline, "a first write to succeed (last: " + notYet.getMessage() + ")");
        sleep(500);
      }
    }
  }

  private void checkAlive() throws IOException {
    if (!process.isAlive()) {
      String tail = Processes.tail(log);
      String message = "SeaweedFS exited with code " + process.exitValue() + tail;
      throw tail.contains("address already in use")
          ? new PortTaken(message)
          : new IOException(message);
    }
  }

  private void checkDeadline(long deadline, String what) throws IOException {
    if (System.nanoTime() > deadline) {
      throw new IOException(
          "SeaweedFS did not get ready within "
              + START_TIMEOUT
              + ": waited for "
              + what
              + Processes.tail(log));
    }
  }

  /** The server exited because a port it was given was taken. */
  private static final class PortTaken extends IOException {
    private static final long serialVersionUID = 1L;

    PortTaken(String message) {
      super(message);
    }
  }

  private static void sleep(long millis) throws InterruptedIOException {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("waiting for SeaweedFS");
    }
  }

  /**
   * Stops the server and whatever it started. SeaweedFS takes half a minute to stop on SIGTERM,
   * flushing data this store throws away, so it gets a few seconds before SIGKILL; the gRPC sockets
   * a killed server leaves in /tmp are removed here.
   */
  private static void stop(Process process, List<Integer> ports) {
    List<ProcessHandle> tree = new ArrayList<>(process.descendants().toList());
    tree.add(process.toHandle());
    tree.forEach(ProcessHandle::destroy);
    try {
      if (!process.waitFor(5, TimeUnit.SECONDS)) {
        tree.forEach(ProcessHandle::destroyForcibly);
        process.waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      tree.forEach(ProcessHandle::destroyForcibly);
      Thread.currentThread().interrupt();
    }
    for (int i = 0; i < SERVICES.size(); i++) {
      int grpcPort = ports.get(i) + GRPC_OFFSET;
      try {
        Files.deleteIfExists(
            Path.of("/tmp", "seaweedfs-" + SERVICES.get(i) + "-grpc-" + grpcPort + ".sock"));
      } catch (IOException e) {
        // a leftover socket is removed by the next server on that port
      }
    }
  }

  @Override
  public void close() throws IOException {
    adminClient().close();
    relay.close();
    stop(process, ports);
    ScratchDirectories.remove(dir);
  }
}
