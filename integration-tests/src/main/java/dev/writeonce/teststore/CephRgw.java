package dev.writeonce.teststore;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real single-node Ceph cluster (monitor, memstore OSD, radosgw) started by {@code
 * scripts/ceph-rgw.sh}, which installs Debian's Ceph packages when they are missing.
 */
public final class CephRgw extends AbstractTestStore {

  /**
   * The S3A settings rename-based commit code needs on RGW 16.2, with or without the shim: RGW
   * refuses an empty PUT whose payload is signed (XAmzContentSHA256Mismatch), and
   * FileOutputCommitter and Hive write empty objects (directory markers, {@code _SUCCESS}).
   * Unsigned payloads are the documented setting for such clusters (docs/stores.md).
   */
  private static final Map<String, String> EMPTY_OBJECT_SETTINGS =
      Map.of("fs.s3a.signing-algorithm", "AWS4UnsignedPayloadSignerType");

  private static final Logger LOG = LoggerFactory.getLogger(CephRgw.class);

  private final Path stateDir;
  private final Path script;

  private CephRgw(Path script, Path stateDir, Map<String, String> info) {
    super(
        "ceph-rgw",
        URI.create(info.get("endpoint")),
        new RgwUsageMeter(Path.of(info.get("conf")), info.get("uid")),
        info.getOrDefault("region", "us-east-1"),
        info.get("access_key"),
        info.get("secret_key"));
    this.script = script;
    this.stateDir = stateDir;
  }

  static CephRgw start() throws IOException {
    Path script = ProjectFiles.script("ceph-rgw.sh");
    Path stateDir = Files.createTempDirectory("writeonce-ceph-");
    String out =
        Processes.run(
            List.of(script.toString(), "start", stateDir.toString()),
            stateDir.resolve("start.log"),
            900);
    Map<String, String> info = new HashMap<>();
    for (String line : out.split("\n")) {
      int eq = line.indexOf('=');
      if (eq > 0) {
        info.put(line.substring(0, eq).trim(), line.substring(eq + 1).trim());
      }
    }
    for (String required : List.of("endpoint", "access_key", "secret_key", "uid", "conf")) {
      if (!info.containsKey(required)) {
        throw new IOException(
            script + " start printed no '" + required + "=' line; it printed: " + out);
      }
    }
    LOG.info("Ceph RGW started at {} (state in {})", info.get("endpoint"), stateDir);
    return new CephRgw(script, stateDir, info);
  }

  @Override
  public Map<String, String> emptyObjectSettings() {
    return EMPTY_OBJECT_SETTINGS;
  }

  @Override
  public void close() throws IOException {
    adminClient().close();
    Processes.run(
        List.of(script.toString(), "stop", stateDir.toString()), stateDir.resolve("stop.log"), 120);
    ScratchDirectories.remove(stateDir);
  }
}
