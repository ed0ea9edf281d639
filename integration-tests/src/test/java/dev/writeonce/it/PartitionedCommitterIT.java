package dev.writeonce.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.teststore.BucketView;
import dev.writeonce.teststore.EachStore;
import dev.writeonce.teststore.S3Api;
import dev.writeonce.teststore.TestStore;
import dev.writeonce.teststore.Traffic;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The partitioned staging committer's conflict modes, with real MapReduce jobs. */
@EachStore
class PartitionedCommitterIT {

  private final TestStore store;

  PartitionedCommitterIT(TestStore store) {
    this.store = store;
  }

  private TestStore store() {
    return store;
  }

  @TempDir Path scratch;

  private String bucket;
  private BucketView view;

  @BeforeEach
  void setUp() throws IOException {
    bucket = store().newBucket("partitioned");
    view = new BucketView(store(), bucket);
  }

  private boolean runPartitioned(String mode) throws Exception {
    MapReduceJobs.writeInput(scratch.resolve("in"), 4, 50, true);
    Configuration conf = MapReduceJobs.configuration(store(), "partitioned", scratch);
    conf.set(CommitterConfig.CONFLICT_MODE, mode);
    return MapReduceJobs.partitionedJob(conf, scratch.resolve("in"), view.uri("table"))
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
    view.put("table/day=1/old.txt", "old\n");
    Map<String, String> before = view.etags("table/");

    assertThat(runPartitioned("fail")).as("job fails").isFalse();

    assertThat(view.etags("table/")).isEqualTo(before);
    List<String> attempted = new ArrayList<>(newFiles("day=1"));
    attempted.addAll(newFiles("day=2"));
    assertThat(view.openUploads(attempted)).isEmpty();
  }

  @Test
  void partitionedAppendModeKeepsOldFilesBesideTheNewOnes() throws Exception {
    view.put("table/day=1/old.txt", "old\n");

    assertThat(runPartitioned("append")).isTrue();

    List<String> expected = new ArrayList<>(newFiles("day=1"));
    expected.add("table/day=1/old.txt");
    expected.addAll(newFiles("day=2"));
    assertThat(view.keys("table/day=")).containsExactlyInAnyOrderElementsOf(expected);
    assertThat(view.read("table/day=1/old.txt")).isEqualTo("old\n");
  }

  @Test
  void partitionedReplaceModeReplacesOnlyThePartitionsWritten() throws Exception {
    view.put("table/day=1/old.txt", "old\n");
    view.put("table/day=9/other.txt", "untouched\n");
    Map<String, String> untouched = view.etags("table/day=9/");

    Traffic before = store().meter().read();
    assertThat(runPartitioned("replace")).isTrue();
    Traffic traffic = store().meter().read().minus(before);

    List<String> expected = new ArrayList<>(newFiles("day=1"));
    expected.addAll(newFiles("day=2"));
    expected.add("table/day=9/other.txt");
    assertThat(view.keys("table/day=")).containsExactlyInAnyOrderElementsOf(expected);
    assertThat(view.etags("table/day=9/")).isEqualTo(untouched);
    assertThat(traffic.requests(S3Api.COPY_OBJECT)).isZero();
  }
}
