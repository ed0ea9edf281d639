package dev.writeonce.shim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.store.RequestType;
import dev.writeonce.core.testing.InMemoryStore;
import dev.writeonce.core.upload.UploadPool;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class DestinationChecksTest {

  private static final String TASK = "out/_temporary/0/task_20261126_0001_m_000003";

  private final InMemoryStore store = new InMemoryStore("bucket");
  private final UploadPool pool = new UploadPool("destination checks test", 4);
  private final DestinationChecks checks =
      new DestinationChecks(
          ShimConfig.from(new Configuration(false), "bucket"),
          new DestinationListings(store, 60_000, System::nanoTime, new ShimStatistics()),
          pool);

  @AfterEach
  void closePool() {
    pool.close();
  }

  private long lists() {
    return store.counters().snapshot().getOrDefault(RequestType.LIST_OBJECTS, 0L);
  }

  @Test
  void aCommittedTasksListingListsTheDestinationDirectoriesItMergesIntoAtOnce() throws Exception {
    for (String key : List.of("out/day=0/part-a", "out/day=1/part-b")) {
      store.putObject(key, "x".getBytes(StandardCharsets.UTF_8), false);
    }
    checks.temporaryListed(TASK, List.of(TASK + "/day=0", TASK + "/day=1", TASK + "/day=2"));
    // The output, whole, in one LIST: it answers for every directory under it.
    assertThat(lists()).isEqualTo(1);

    assertThat(checks.answer("out/day=0/part-c")).isEqualTo(DestinationChecks.Answer.ABSENT);
    assertThat(checks.answer("out/day=1/part-b")).isEqualTo(DestinationChecks.Answer.UNKNOWN);
    assertThat(checks.answer("out/day=2")).isEqualTo(DestinationChecks.Answer.ABSENT);
    assertThat(checks.answer("out/day=1")).isEqualTo(DestinationChecks.Answer.DIRECTORY);
    assertThat(lists()).as("checks answered from that listing").isEqualTo(1);

    // The next task's merge into the same directories within the window lists nothing again.
    checks.temporaryListed(
        "out/_temporary/0/task_20261126_0001_m_000004",
        List.of("out/_temporary/0/task_20261126_0001_m_000004/day=0"));
    assertThat(lists()).isEqualTo(1);
  }

  @Test
  void aDestinationTooLargeToListWholeIsListedDirectoryByDirectoryInParallel() throws Exception {
    byte[] x = "x".getBytes(StandardCharsets.UTF_8);
    for (int i = 0; i <= DestinationChecks.MERGE_TREE_KEYS; i++) {
      store.putObject("out/day=0/part-" + i, x, false);
    }
    store.putObject("out/day=1/part-b", x, false);
    long before = lists();
    checks.temporaryListed(TASK, List.of(TASK + "/day=0", TASK + "/day=1", TASK + "/day=2"));
    // The attempt at the whole tree, then out, then out/day=0 and out/day=1 (out/day=2 does not
    // exist, so its directory moves whole).
    assertThat(lists() - before).isEqualTo(4);
    assertThat(checks.answer("out/day=1/part-c")).isEqualTo(DestinationChecks.Answer.ABSENT);
    assertThat(lists() - before).isEqualTo(4);

    // The next task's merge does not page through the output again to find it still too large.
    String next = "out/_temporary/0/task_20261126_0001_m_000004";
    checks.temporaryListed(next, List.of(next + "/day=0", next + "/day=1"));
    checks.temporaryListed(next + "/day=0", List.of());
    assertThat(lists() - before)
        .as("out/day=0 (more children than a page, so not kept) twice, the output not again")
        .isEqualTo(6);
  }

  @Test
  void directoriesAnEarlierMergeRenamedIntoPlaceGetTheTreeListedOnceMoreNotEachItsOwnList()
      throws Exception {
    String next = "out/_temporary/0/task_20261126_0001_m_000004";
    checks.temporaryListed(TASK, List.of(TASK + "/day=0", TASK + "/day=1"));
    assertThat(checks.answer("out/day=0")).isEqualTo(DestinationChecks.Answer.ABSENT);
    // The first task's merge moves both directories whole; one of their files has landed since.
    checks.wrote("out/day=0");
    checks.wrote("out/day=1");
    store.putObject("out/day=0/part-a", "x".getBytes(StandardCharsets.UTF_8), false);
    long before = lists();

    checks.temporaryListed(next, List.of(next + "/day=0", next + "/day=1"));
    checks.temporaryListed(next + "/day=0", List.of());
    checks.temporaryListed(next + "/day=1", List.of());

    assertThat(lists() - before).as("the tree, once, within the half window").isEqualTo(1);
    assertThat(checks.answer("out/day=0/part-b")).isEqualTo(DestinationChecks.Answer.ABSENT);
    assertThat(checks.answer("out/day=1/part-c"))
        .as("a directory the listing shows nothing under")
        .isEqualTo(DestinationChecks.Answer.ABSENT);
    assertThat(checks.answer("out/day=0/part-a")).isEqualTo(DestinationChecks.Answer.UNKNOWN);
    assertThat(lists() - before).isEqualTo(1);
  }
}
