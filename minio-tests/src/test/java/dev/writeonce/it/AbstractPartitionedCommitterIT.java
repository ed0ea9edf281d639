package dev.writeonce.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.teststore.S3Api;
import dev.writeonce.teststore.TestStore;
import dev.writeonce.teststore.Traffic;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.S3Object;

/** The partitioned staging committer's conflict modes, with real MapReduce jobs. */
abstract class AbstractPartitionedCommitterIT {

  protected abstract TestStore store();

  @TempDir Path scratch;

  private String bucket;

  @BeforeEach
  void setUp() throws IOException {
    bucket = store().newBucket("partitioned");
  }

  private String uri(String path) {
    return "s3a://" + bucket + "/" + path;
  }

  private List<String> keys(String prefix) {
    return store()
        .adminClient()
        .listObjectsV2Paginator(b -> b.bucket(bucket).prefix(prefix))
        .contents()
        .stream()
        .map(S3Object::key)
        .toList();
  }

  private String read(String key) throws IOException {
    try (ResponseInputStream<GetObjectResponse> in =
        store().adminClient().getObject(b -> b.bucket(bucket).key(key))) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  private List<String> openUploads(List<String> keys) {
    List<String> open = new ArrayList<>();
    for (String key : keys) {
      if (!store()
          .adminClient()
          .listMultipartUploads(b -> b.bucket(bucket).prefix(key))
          .uploads()
          .isEmpty()) {
        open.add(key);
      }
    }
    return open;
  }

  private void putObject(String key, String text) {
    store()
        .adminClient()
        .putObject(
            b -> b.bucket(bucket).key(key),
            software.amazon.awssdk.core.sync.RequestBody.fromString(text));
  }

  private Map<String, String> etags(String prefix) {
    Map<String, String> etags = new TreeMap<>();
    store()
        .adminClient()
        .listObjectsV2Paginator(b -> b.bucket(bucket).prefix(prefix))
        .contents()
        .forEach(o -> etags.put(o.key(), o.eTag()));
    return etags;
  }

  private boolean runPartitioned(String mode) throws Exception {
    MapReduceJobs.writeInput(scratch.resolve("in"), 4, 50, true);
    Configuration conf = MapReduceJobs.configuration(store(), "partitioned", scratch);
    conf.set(CommitterConfig.CONFLICT_MODE, mode);
    return MapReduceJobs.partitionedJob(conf, scratch.resolve("in"), uri("table"))
        .waitForCompletion(false);
  }

  private static List<String> newFiles(String partition) {
    List<String> keys = new ArrayList<>();
    for (int task = 0; task < 4; task++) {
      keys.add("table/" + partition + "/part-m-0000" + task + ".txt");
    }
    return keys;
  }

  @Test
  void partitionedFailModeRefusesAnExistingPartitionAndLeavesTheTableAsItWas() throws Exception {
    putObject("table/day=1/old.txt", "old\n");
    Map<String, String> before = etags("table/");

    assertThat(runPartitioned("fail")).as("job fails").isFalse();

    assertThat(etags("table/")).isEqualTo(before);
    List<String> attempted = new ArrayList<>(newFiles("day=1"));
    attempted.addAll(newFiles("day=2"));
    assertThat(openUploads(attempted)).isEmpty();
  }

  @Test
  void partitionedAppendModeKeepsOldFilesBesideTheNewOnes() throws Exception {
    putObject("table/day=1/old.txt", "old\n");

    assertThat(runPartitioned("append")).isTrue();

    List<String> expected = new ArrayList<>(newFiles("day=1"));
    expected.add("table/day=1/old.txt");
    expected.addAll(newFiles("day=2"));
    assertThat(keys("table/day=")).containsExactlyInAnyOrderElementsOf(expected);
    assertThat(read("table/day=1/old.txt")).isEqualTo("old\n");
  }

  @Test
  void partitionedReplaceModeReplacesOnlyThePartitionsWritten() throws Exception {
    putObject("table/day=1/old.txt", "old\n");
    putObject("table/day=9/other.txt", "untouched\n");
    Map<String, String> untouched = etags("table/day=9/");

    Traffic before = store().meter().read();
    assertThat(runPartitioned("replace")).isTrue();
    Traffic traffic = store().meter().read().minus(before);

    List<String> expected = new ArrayList<>(newFiles("day=1"));
    expected.addAll(newFiles("day=2"));
    expected.add("table/day=9/other.txt");
    assertThat(keys("table/day=")).containsExactlyInAnyOrderElementsOf(expected);
    assertThat(etags("table/day=9/")).isEqualTo(untouched);
    assertThat(traffic.requests(S3Api.COPY_OBJECT)).isZero();
  }
}
