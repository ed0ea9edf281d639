package dev.writeonce.shim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.RequestType;
import dev.writeonce.core.testing.InMemoryStore;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class CommittedTaskTreesTest {

  private static final String TASK = "out/_temporary/0/task_20261126_0001_m_000000";

  private final InMemoryStore store = new InMemoryStore("bucket");
  private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
  private final CommittedTaskTrees trees = new CommittedTaskTrees(store, 1_000, nanos::get);

  @BeforeEach
  void aPartitionedTasksTree() throws Exception {
    for (int day = 0; day < 50; day++) {
      put(TASK + "/day=" + day + "/part-00000.parquet");
    }
    put(TASK + "/_SUCCESS.crc");
    put(TASK + "/empty/"); // a directory marker
  }

  private void put(String key) throws Exception {
    store.putObject(key, "{}".getBytes(StandardCharsets.UTF_8), false);
  }

  private long lists() {
    return store.counters().snapshot().getOrDefault(RequestType.LIST_OBJECTS, 0L);
  }

  @Test
  void theMergeOfAPartitionedTaskListsItsTreeOnceAndEachPartitionFromThat() throws Exception {
    CommittedTaskTrees.Children root = trees.children(TASK).orElseThrow();
    assertThat(root.files()).extracting(ObjectInfo::key).containsExactly(TASK + "/_SUCCESS.crc");
    assertThat(root.directories()).hasSize(51).contains(TASK + "/day=7", TASK + "/empty");
    for (int day = 0; day < 50; day++) {
      CommittedTaskTrees.Children partition = trees.children(TASK + "/day=" + day).orElseThrow();
      assertThat(partition.files())
          .extracting(ObjectInfo::key)
          .containsExactly(TASK + "/day=" + day + "/part-00000.parquet");
      assertThat(partition.directories()).isEmpty();
    }
    assertThat(lists()).isEqualTo(1);
  }

  @Test
  void whatThisInstanceRenamesAwayOrDeletesLeavesTheListingAndAWriteDropsIt() throws Exception {
    trees.children(TASK);
    trees.removed(TASK + "/day=1/part-00000.parquet"); // a file merged into place
    trees.removed(TASK + "/day=2"); // a partition moved whole
    assertThat(trees.children(TASK + "/day=1")).isEmpty(); // the store answers, as before
    assertThat(trees.children(TASK).orElseThrow().directories())
        .doesNotContain(TASK + "/day=1", TASK + "/day=2")
        .contains(TASK + "/day=3");
    assertThat(lists()).isEqualTo(1);

    trees.wrote(TASK + "/day=3/late.parquet");
    trees.children(TASK + "/day=3");
    assertThat(lists()).isEqualTo(2);
  }

  @Test
  void theJobCommitsListingOfTheCommittedTasksListsEveryTaskTreeAtOnce() throws Exception {
    String other = "out/_temporary/0/task_20261126_0001_m_000001";
    put(other + "/day=0/part-00001.parquet");
    put("out/_temporary/0/_temporary/attempt_20261126_0001_m_000002_0/day=0/part-00002.parquet");

    CommittedTaskTrees.Children attempt = trees.children("out/_temporary/0").orElseThrow();
    assertThat(attempt.directories()).containsExactly("out/_temporary/0/_temporary", TASK, other);
    assertThat(trees.children(TASK + "/day=3")).isPresent();
    assertThat(trees.children(other + "/day=0")).isPresent();
    assertThat(lists()).isEqualTo(1);
    // An attempt's own directory, where a task may still write, is left to the store.
    assertThat(trees.children("out/_temporary/0/_temporary")).isEmpty();

    // A task commit renames into the job attempt's directory: its listing is no longer whole.
    trees.wrote("out/_temporary/0/task_20261126_0001_m_000002");
    trees.children(TASK);
    assertThat(lists()).isEqualTo(2);
  }

  @Test
  void aTreeIsListedAgainOnceOlderThanTheWindowAndOtherPathsAreLeftToTheStore() throws Exception {
    trees.children(TASK);
    nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(1_000));
    trees.children(TASK + "/day=0");
    assertThat(lists()).isEqualTo(2);

    assertThat(trees.children("out/_temporary/0/_temporary/attempt_1/day=0")).isEmpty();
    assertThat(trees.children("out/day=0")).isEmpty();
    assertThat(new CommittedTaskTrees(store, 0, nanos::get).children(TASK)).isEmpty();
    assertThat(lists()).isEqualTo(2);
  }

  @Test
  void aTreeAMergeKeepsUsingIsNotListedAgainUntilItIsAMinuteOld() throws Exception {
    trees.children(TASK);
    for (int day = 0; day < 50; day++) {
      nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(600)); // each within the window of the last
      trees.children(TASK + "/day=" + day);
    }
    assertThat(lists()).as("30 s of use, more than the window").isEqualTo(1);

    for (int day = 0; day < 50; day++) {
      nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(600)); // up to 60 s
      trees.children(TASK + "/day=" + day);
    }
    assertThat(lists()).as("listed again at a minute, once").isEqualTo(2);
  }
}
