package dev.writeonce.alluxio;

import alluxio.AlluxioURI;
import alluxio.client.file.FileInStream;
import alluxio.client.file.FileSystem;
import alluxio.client.file.URIStatus;
import alluxio.conf.Configuration;
import alluxio.conf.PropertyKey;
import alluxio.exception.FileDoesNotExistException;
import alluxio.grpc.FileSystemMasterCommonPOptions;
import alluxio.grpc.ListStatusPOptions;
import alluxio.master.LocalAlluxioCluster;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An Alluxio master and worker in this JVM, whose root is an S3 bucket, and a reader through
 * Alluxio's own client that the suite drives over standard input, one command per line:
 *
 * <pre>
 * watch PATH FILE PAUSE_MS   list PATH recursively (metadata synced with the bucket on every
 *                            listing), read every file, append one JSON line to FILE, pause, again
 * unwatch                    stop watching, after the observation under way, or without it
 *                            if it has not ended within 60 s (it is then left out of FILE)
 * snapshot PATH FILE         one observation, written to FILE
 * foc-write URI TASKS FILES BYTES
 *                            Hadoop's FileOutputCommitter (algorithm 1), as Spark's default
 *                            protocol drives it, writes TASKS x FILES files of BYTES bytes each
 *                            to URI (alluxio://...) through Alluxio's Hadoop client, write type
 *                            THROUGH: what a job writing through Alluxio costs the store
 * </pre>
 *
 * Each command is answered with a line {@code OK command} (or {@code FAILED command: why}). The
 * server stops when its standard input ends, so it never outlives the suite that started it.
 *
 * <p>Arguments: none. Settings: {@code -Dwriteonce.alluxio.KEY=VALUE} for each Alluxio property, at
 * least the root's bucket, endpoint and credentials, and the master's two ports.
 */
public final class AlluxioServer {

  private static final String SETTING = "writeonce.alluxio.";

  private final FileSystem client;
  private final PrintStream out;

  /** How long {@code unwatch} waits for the observation under way before leaving it out. */
  private static final long OBSERVATION_WAIT_MILLIS = 60_000;

  private Thread watcher;
  private final AtomicBoolean watching = new AtomicBoolean();

  /** Counts the watches begun and the ones abandoned; a watcher writes only while it is current. */
  private final AtomicLong watches = new AtomicLong();

  private AlluxioServer(FileSystem client, PrintStream out) {
    this.client = client;
    this.out = out;
  }

  public static void main(String[] args) throws Exception {
    long start = System.nanoTime();
    LocalAlluxioCluster cluster = new LocalAlluxioCluster(1, false);
    cluster.initConfiguration("writeonce-alluxio");
    Map<String, String> settings = new TreeMap<>();
    settings.put("alluxio.master.hostname", "127.0.0.1");
    settings.put("alluxio.master.bind.host", "127.0.0.1");
    settings.put("alluxio.master.web.bind.host", "127.0.0.1");
    settings.put("alluxio.worker.hostname", "127.0.0.1");
    settings.put("alluxio.worker.bind.host", "127.0.0.1");
    settings.put("alluxio.worker.web.bind.host", "127.0.0.1");
    settings.put("alluxio.underfs.s3.disable.dns.buckets", "true");
    settings.put("alluxio.underfs.s3.inherit.acl", "false");
    settings.put("alluxio.underfs.s3.endpoint.region", "us-east-1");
    // Every listing asks the bucket; listings write no directory markers into it.
    settings.put("alluxio.user.file.metadata.sync.interval", "0");
    settings.put("alluxio.underfs.object.store.breadcrumbs.enabled", "false");
    // A small test heap is not an overloaded master: no throttling, no warning every 3 s.
    settings.put("alluxio.master.throttle.enabled", "false");
    // The local cluster's test defaults use 1 KB blocks, far too small for table files.
    settings.put("alluxio.user.block.size.bytes.default", "64MB");
    // A file that vanishes between a listing and its read (FileOutputCommitter's renames on the
    // store) fails the read in seconds instead of after minutes of retries and stream waits.
    settings.put("alluxio.user.block.read.retry.max.duration", "20s");
    settings.put("alluxio.user.rpc.retry.max.duration", "20s");
    settings.put("alluxio.user.streaming.data.read.timeout", "20s");
    for (String name : System.getProperties().stringPropertyNames()) {
      if (name.startsWith(SETTING)) {
        settings.put(name.substring(SETTING.length()), System.getProperty(name));
      }
    }
    for (Map.Entry<String, String> setting : settings.entrySet()) {
      PropertyKey key = PropertyKey.fromString(setting.getKey());
      Configuration.set(key, key.parseValue(setting.getValue()));
    }
    cluster.start();
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    out.println(
        "ALLUXIO_READY alluxio://127.0.0.1:"
            + cluster.getMasterRpcPort()
            + "/ in "
            + (System.nanoTime() - start) / 1_000_000
            + " ms");
    AlluxioServer server = new AlluxioServer(cluster.getClient(), out);
    try (BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
      String line;
      while ((line = in.readLine()) != null) {
        server.run(line.trim());
      }
    } finally {
      server.stopWatching();
      cluster.stop();
    }
    out.println("ALLUXIO_STOPPED");
    System.exit(0);
  }

  private void run(String command) {
    if (command.isEmpty()) {
      return;
    }
    String[] words = command.split(" ");
    try {
      switch (words[0]) {
        case "watch" -> watch(words[1], Path.of(words[2]), Long.parseLong(words[3]));
        case "unwatch" -> stopWatching();
        case "foc-write" ->
            FileOutputCommitterWrite.run(
                words[1],
                Integer.parseInt(words[2]),
                Integer.parseInt(words[3]),
                Integer.parseInt(words[4]));
        case "snapshot" -> {
          try (Writer writer = Files.newBufferedWriter(Path.of(words[2]), StandardCharsets.UTF_8)) {
            writer.write(observe(words[1]));
          }
        }
        default -> throw new IllegalArgumentException("unknown command");
      }
      out.println("OK " + words[0]);
    } catch (Exception e) {
      out.println("FAILED " + words[0] + ": " + e);
    }
  }

  private void watch(String path, Path file, long pauseMillis) {
    stopWatching();
    watching.set(true);
    long watch = watches.incrementAndGet();
    watcher =
        new Thread(
            () -> {
              try (Writer writer = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
                while (watching.get()) {
                  String observation = observe(path);
                  synchronized (watches) {
                    if (watches.get() != watch) {
                      return;
                    }
                    writer.write(observation);
                    writer.flush();
                  }
                  Thread.sleep(pauseMillis);
                }
              } catch (IOException | InterruptedException e) {
                if (watches.get() == watch) {
                  out.println("WATCH_FAILED " + e);
                }
              }
            },
            "writeonce-alluxio-watcher");
    watcher.setDaemon(true);
    watcher.start();
  }

  /**
   * Ends the watch. An observation still under way after {@link #OBSERVATION_WAIT_MILLIS} (a read
   * stuck in Alluxio's client) is abandoned: it writes nothing, so the file holds whole
   * observations only, and the suite gets its answer.
   */
  private void stopWatching() {
    watching.set(false);
    if (watcher == null) {
      return;
    }
    try {
      watcher.join(OBSERVATION_WAIT_MILLIS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (watcher.isAlive()) {
      synchronized (watches) {
        watches.incrementAndGet();
      }
      watcher.interrupt();
      System.err.println(
          "writeonce-alluxio: an observation still under way after "
              + OBSERVATION_WAIT_MILLIS / 1000
              + " s was abandoned and left out");
    }
    watcher = null;
  }

  /**
   * One observation as a JSON line: when the listing started and ended, every file with its length
   * and the SHA-256 of the bytes read through Alluxio, and what failed (a file gone between the
   * listing and its read, for example).
   */
  private String observe(String path) {
    long listStart = System.currentTimeMillis();
    List<URIStatus> statuses;
    List<String> errors = new ArrayList<>();
    try {
      statuses =
          client.listStatus(
              new AlluxioURI(path),
              ListStatusPOptions.newBuilder()
                  .setRecursive(true)
                  .setCommonOptions(
                      FileSystemMasterCommonPOptions.newBuilder().setSyncIntervalMs(0))
                  .build());
    } catch (FileDoesNotExistException e) {
      statuses = List.of();
    } catch (Exception e) {
      statuses = List.of();
      errors.add("list " + path + ": " + e);
    }
    long listEnd = System.currentTimeMillis();
    StringBuilder json = new StringBuilder();
    json.append("{\"listStart\":").append(listStart).append(",\"listEnd\":").append(listEnd);
    json.append(",\"files\":[");
    boolean first = true;
    for (URIStatus status : statuses) {
      if (status.isFolder()) {
        continue;
      }
      String sha256;
      try {
        sha256 = read(status.getPath());
      } catch (Exception e) {
        errors.add("read " + status.getPath() + ": " + e);
        continue;
      }
      json.append(first ? "" : ",");
      first = false;
      json.append("{\"path\":").append(quote(status.getPath()));
      json.append(",\"length\":").append(status.getLength());
      json.append(",\"sha256\":\"").append(sha256).append("\"}");
    }
    json.append("],\"errors\":[");
    for (int i = 0; i < errors.size(); i++) {
      json.append(i == 0 ? "" : ",").append(quote(errors.get(i)));
    }
    json.append("]}\n");
    return json.toString();
  }

  private String read(String path) throws Exception {
    MessageDigest digest = MessageDigest.getInstance("SHA-256");
    byte[] buffer = new byte[64 * 1024];
    try (FileInStream in = client.openFile(new AlluxioURI(path))) {
      int n;
      while ((n = in.read(buffer)) > 0) {
        digest.update(buffer, 0, n);
      }
    }
    return HexFormat.of().formatHex(digest.digest());
  }

  private static String quote(String text) {
    StringBuilder quoted = new StringBuilder("\"");
    for (char c : text.toCharArray()) {
      switch (c) {
        case '"' -> quoted.append("\\\"");
        case '\\' -> quoted.append("\\\\");
        case '\n' -> quoted.append("\\n");
        case '\r' -> quoted.append("\\r");
        case '\t' -> quoted.append("\\t");
        default -> {
          if (c < 0x20) {
            quoted.append(String.format("\\u%04x", (int) c));
          } else {
            quoted.append(c);
          }
        }
      }
    }
    return quoted.append('"').toString();
  }
}
