package dev.writeonce.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.writeonce.teststore.TestStore;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;

/**
 * A real Alluxio cluster (module {@code alluxio-fixture}) in a JVM of its own, whose root is a
 * bucket of the suite's store, and the reader in it that lists and reads through Alluxio's client.
 * Its standard input is held open: when this JVM ends, the cluster ends with it.
 */
final class AlluxioCluster implements AutoCloseable {

  /** One listing through Alluxio and the read of every file it named. */
  record Observation(
      long listStart, long listEnd, Map<String, FileSeen> files, List<String> errors) {}

  /** A file as the reader saw it: path under the bucket, length, SHA-256 of the bytes read. */
  record FileSeen(String path, long length, String sha256) {}

  private static final ObjectMapper JSON = new ObjectMapper();

  private final Process process;
  private final OutputStream commands;
  private final BlockingQueue<String> answers;
  private final String uri;
  private final Path log;

  private AlluxioCluster(Process process, String uri, BlockingQueue<String> answers, Path log) {
    this.process = process;
    this.commands = process.getOutputStream();
    this.uri = uri;
    this.log = log;
    this.answers = answers;
  }

  /** Starts the cluster with its root on the bucket, and waits until it answers. */
  static AlluxioCluster start(TestStore store, String bucket, Path workDir) throws Exception {
    Path fixture = Path.of(System.getProperty("writeonce.alluxio.fixture", "missing"));
    Path classpathFile = fixture.resolve("server.classpath");
    if (!Files.isRegularFile(classpathFile)) {
      throw new IllegalStateException(
          "the Alluxio fixture is not built: "
              + classpathFile
              + " is missing. Build the module alluxio-fixture first (mvn -B install -pl"
              + " alluxio-fixture), or run the suite from the project root");
    }
    String classpath =
        fixture.resolve("classes")
            + java.io.File.pathSeparator
            + Files.readString(classpathFile).trim();
    Configuration s3a = store.configure(new Configuration(false));
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Xmx192m");
    command.add("-XX:+UseSerialGC");
    command.add("-Dlog4j.configuration=alluxio-fixture-log4j.properties");
    Map<String, String> settings = new LinkedHashMap<>();
    settings.put("alluxio.master.mount.table.root.ufs", "s3://" + bucket + "/");
    settings.put("alluxio.underfs.s3.endpoint", store.endpoint().toString());
    settings.put("s3a.accessKeyId", s3a.get("fs.s3a.access.key"));
    settings.put("s3a.secretKey", s3a.get("fs.s3a.secret.key"));
    settings.put("alluxio.master.rpc.port", Integer.toString(freePort()));
    settings.put("alluxio.master.web.port", Integer.toString(freePort()));
    if (!store.emptyObjectSettings().isEmpty()) {
      // A store that refuses signed empty PUTs (Ceph RGW 16) refuses Alluxio's directory markers
      // signed with SigV4 and the SDK's payload hash; SigV2 signs no payload.
      settings.put("alluxio.underfs.s3.signer.algorithm", "S3SignerType");
    }
    settings.forEach((key, value) -> command.add("-Dwriteonce.alluxio." + key + "=" + value));
    command.add("-cp");
    command.add(classpath);
    command.add("dev.writeonce.alluxio.AlluxioServer");
    Files.createDirectories(workDir);
    Path log = workDir.resolve("alluxio-" + store.name() + ".log");
    ProcessBuilder builder = new ProcessBuilder(command).redirectError(log.toFile());
    builder.environment().put("ALLUXIO_HOME", workDir.toString());
    Process process = builder.start();
    BlockingQueue<String> answers = new LinkedBlockingQueue<>();
    Thread reader =
        new Thread(
            () -> {
              try (BufferedReader out =
                  new BufferedReader(
                      new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = out.readLine()) != null) {
                  answers.add(line);
                }
              } catch (IOException e) {
                answers.add("FAILED output: " + e);
              }
            },
            "alluxio-fixture-output");
    reader.setDaemon(true);
    reader.start();
    String ready = answers.poll(120, TimeUnit.SECONDS);
    while (ready != null && !ready.startsWith("ALLUXIO_READY")) {
      ready = answers.poll(120, TimeUnit.SECONDS);
    }
    if (ready == null) {
      process.destroyForcibly();
      throw new IllegalStateException(
          "Alluxio did not start within 120 s (exit "
              + (process.isAlive() ? "none" : process.exitValue())
              + "); its log: "
              + log
              + "\n"
              + tail(log));
    }
    AlluxioCluster cluster = new AlluxioCluster(process, ready.split(" ")[1], answers, log);
    return cluster;
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  private static String tail(Path log) {
    try {
      List<String> lines = Files.readAllLines(log);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
    } catch (IOException e) {
      return "(unreadable: " + e + ")";
    }
  }

  /** The cluster's root, {@code alluxio://127.0.0.1:PORT/}. */
  String uri() {
    return uri;
  }

  private void send(String command) throws Exception {
    String verb = command.split(" ")[0];
    commands.write((command + "\n").getBytes(StandardCharsets.UTF_8));
    commands.flush();
    while (true) {
      String answer = answers.poll(180, TimeUnit.SECONDS);
      if (answer == null) {
        throw new IllegalStateException("Alluxio did not answer '" + command + "'; log: " + log);
      }
      if (answer.equals("OK " + verb)) {
        return;
      }
      if (answer.startsWith("FAILED " + verb) || answer.startsWith("WATCH_FAILED")) {
        throw new IllegalStateException("Alluxio: " + answer + "\n" + tail(log));
      }
    }
  }

  /** Starts observing a path (under the bucket) again and again, pausing between. */
  void watch(String path, Path file, long pauseMillis) throws Exception {
    send("watch " + path + " " + file + " " + pauseMillis);
  }

  /** Stops watching and returns every observation made. */
  List<Observation> unwatch(Path file) throws Exception {
    send("unwatch");
    return read(file);
  }

  /**
   * Hadoop's FileOutputCommitter (algorithm 1) writes tasks x files files of the given size to an
   * {@code alluxio://} URI, through Alluxio's Hadoop client with write type THROUGH.
   */
  void fileOutputCommitterWrite(String uri, int tasks, int files, int bytes) throws Exception {
    send("foc-write " + uri + " " + tasks + " " + files + " " + bytes);
  }

  /** One observation of a path, now. */
  Observation snapshot(String path, Path file) throws Exception {
    send("snapshot " + path + " " + file);
    return read(file).get(0);
  }

  private static List<Observation> read(Path file) throws IOException {
    List<Observation> observations = new ArrayList<>();
    for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
      if (line.isBlank()) {
        continue;
      }
      JsonNode node = JSON.readTree(line);
      Map<String, FileSeen> files = new LinkedHashMap<>();
      for (JsonNode f : node.get("files")) {
        String path = f.get("path").asText();
        files.put(path, new FileSeen(path, f.get("length").asLong(), f.get("sha256").asText()));
      }
      List<String> errors = new ArrayList<>();
      node.get("errors").forEach(e -> errors.add(e.asText()));
      observations.add(
          new Observation(
              node.get("listStart").asLong(), node.get("listEnd").asLong(), files, errors));
    }
    return observations;
  }

  /** Ends the cluster: its standard input closes, and it stops. */
  @Override
  public void close() throws IOException {
    commands.close();
    try {
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }
}
