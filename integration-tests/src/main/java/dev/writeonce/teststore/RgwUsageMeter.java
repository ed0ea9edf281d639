package dev.writeonce.teststore;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * Ceph RGW's server-side counters: its usage log, per user and operation category, read with {@code
 * radosgw-admin usage show}. RGW flushes the log on a timer, so a reading waits until two
 * successive reads agree.
 */
public final class RgwUsageMeter implements TrafficMeter {

  /** RGW's category names, as its usage log reports them. */
  private static final Map<String, S3Api> CATEGORIES =
      Map.ofEntries(
          Map.entry("put_obj", S3Api.PUT_OBJECT),
          Map.entry("copy_obj", S3Api.COPY_OBJECT),
          Map.entry("init_multipart", S3Api.CREATE_MULTIPART_UPLOAD),
          Map.entry("complete_multipart", S3Api.COMPLETE_MULTIPART_UPLOAD),
          Map.entry("abort_multipart", S3Api.ABORT_MULTIPART_UPLOAD),
          Map.entry("list_bucket_multiparts", S3Api.LIST_MULTIPART_UPLOADS),
          Map.entry("list_multipart", S3Api.LIST_PARTS),
          Map.entry("get_obj", S3Api.GET_OBJECT),
          Map.entry("list_bucket", S3Api.LIST_OBJECTS),
          Map.entry("delete_obj", S3Api.DELETE_OBJECT),
          Map.entry("multi_object_delete", S3Api.DELETE_OBJECTS));

  private static final long SETTLE_MILLIS = 300;
  private static final int MAX_READS = 50;

  private final Path conf;
  private final String uid;
  private final ObjectMapper json = new ObjectMapper();

  /**
   * @param conf the cluster's ceph.conf, or null for the host's default
   * @param uid the RGW user whose requests are counted
   */
  public RgwUsageMeter(Path conf, String uid) {
    this.conf = conf;
    this.uid = uid;
  }

  @Override
  public String source() {
    return "Ceph RGW usage log of user " + uid;
  }

  @Override
  public Traffic read() throws IOException {
    Traffic previous = readOnce();
    for (int i = 0; i < MAX_READS; i++) {
      sleep();
      Traffic current = readOnce();
      if (current.equals(previous)) {
        return current;
      }
      previous = current;
    }
    throw new IOException(
        "the RGW usage log of " + uid + " did not settle in " + MAX_READS + " reads");
  }

  private Traffic readOnce() throws IOException {
    List<String> command = new ArrayList<>(List.of("radosgw-admin"));
    if (conf != null) {
      command.addAll(List.of("-c", conf.toString()));
    }
    command.addAll(List.of("usage", "show", "--uid=" + uid, "--show-log-entries=false"));
    Path log = Path.of(System.getProperty("java.io.tmpdir"), "writeonce-rgw-usage.log");
    return parse(json.readTree(Processes.run(command, log, 60)));
  }

  static Traffic parse(JsonNode usage) {
    EnumMap<S3Api, Long> requests = new EnumMap<>(S3Api.class);
    long received = 0;
    long sent = 0;
    for (JsonNode user : usage.path("summary")) {
      for (JsonNode category : user.path("categories")) {
        S3Api api = CATEGORIES.getOrDefault(category.path("category").asText(), S3Api.OTHER);
        requests.merge(api, category.path("ops").asLong(), Long::sum);
        received += category.path("bytes_received").asLong();
        sent += category.path("bytes_sent").asLong();
      }
    }
    return new Traffic(requests, received, sent);
  }

  private static void sleep() throws InterruptedIOException {
    try {
      Thread.sleep(SETTLE_MILLIS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("waiting for the RGW usage log");
    }
  }
}
