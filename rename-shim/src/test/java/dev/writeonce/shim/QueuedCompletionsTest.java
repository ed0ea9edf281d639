package dev.writeonce.shim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.upload.UploadPool;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class QueuedCompletionsTest {

  private static final String TASK = "out/_temporary/0/task_1/";

  private final UploadPool pool = new UploadPool("queued completions test", 4);
  private final ShimStatistics counters = new ShimStatistics();
  private final List<List<String>> recordDeletes = Collections.synchronizedList(new ArrayList<>());
  private final QueuedCompletions completions =
      new QueuedCompletions(
          pool, keys -> recordDeletes.add(List.copyOf(keys)), key -> {}, counters, "b");
  private final CountDownLatch release = new CountDownLatch(1);
  private final List<String> completed = Collections.synchronizedList(new ArrayList<>());

  @AfterEach
  void closePool() {
    release.countDown();
    completions.close();
    pool.close();
  }

  /** Queues a completion that runs only once the test releases it. */
  private void queueHeld(String name) throws IOException {
    completions.queue(
        TASK + name,
        "out/" + name,
        () -> {
          awaitRelease();
          completed.add("out/" + name);
        });
  }

  private void awaitRelease() throws IOException {
    try {
      if (!release.await(30, TimeUnit.SECONDS)) {
        throw new IOException("never released");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException(e);
    }
  }

  /** Opens a latch a moment after the caller began waiting for what it holds back. */
  private static Thread countDownSoon(CountDownLatch latch) {
    Thread opener =
        new Thread(
            () -> {
              try {
                Thread.sleep(100);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
              latch.countDown();
            });
    opener.setDaemon(true);
    opener.start();
    return opener;
  }

  /**
   * With Hadoop's file system cache disabled, FileOutputCommitter's cleanup deletes the temporary
   * tree through another instance than the one whose renames queued the completions.
   */
  @Test
  void anotherInstanceOfTheBucketWaitsForTheQueuedCompletionsAndOneOfAnotherBucketDoesNot()
      throws Exception {
    List<String> landedElsewhere = Collections.synchronizedList(new ArrayList<>());
    QueuedCompletions sameBucket =
        new QueuedCompletions(pool, keys -> {}, landedElsewhere::add, counters, "b");
    QueuedCompletions otherBucket =
        new QueuedCompletions(pool, keys -> {}, key -> {}, counters, "other");
    try {
      queueHeld("part-0");
      otherBucket.beforeUse("out/_temporary");
      assertThat(completed).as("another bucket's delete does not wait").isEmpty();

      countDownSoon(release);
      sameBucket.beforeUse("out/_temporary");
      assertThat(completed).as("waited for before the delete").containsExactly("out/part-0");
      assertThat(recordDeletes)
          .as("the record deleted by the instance that wrote it")
          .containsExactly(List.of(TASK + "part-0"));
      assertThat(landedElsewhere)
          .as("the other instance's listings stop answering for the destination")
          .containsExactly("out/part-0");
      assertThat(completions.idle()).isTrue();
    } finally {
      sameBucket.close();
      otherBucket.close();
    }
  }

  @Test
  void aClosedInstanceIsNoLongerWaitedForByAnother() throws Exception {
    QueuedCompletions closed = new QueuedCompletions(pool, keys -> {}, key -> {}, counters, "b");
    closed.queue(TASK + "part-9", "out/part-9", this::awaitRelease);
    closed.close();
    completions.beforeUse("out/_temporary");
    assertThat(closed.idle()).as("still queued in the closed instance").isFalse();
  }

  @Test
  void aCallOnAQueuedDestinationWaitsForItsCompletionAndItsRecordGoesInOneBulkDelete()
      throws Exception {
    queueHeld("part-0");
    queueHeld("part-1");
    assertThat(completed).isEmpty();

    countDownSoon(release);
    completions.beforeUse("out/part-0");

    assertThat(completed).containsExactlyInAnyOrder("out/part-0", "out/part-1");
    assertThat(recordDeletes).hasSize(1);
    assertThat(recordDeletes.get(0)).containsExactlyInAnyOrder(TASK + "part-0", TASK + "part-1");
    assertThat(counters.barriers()).isEqualTo(1);
    assertThat(completions.idle()).isTrue();
  }

  @Test
  void eachCallThatCouldObserveTheQueueWaitsAndTheMergesOwnChecksDoNot() throws Exception {
    queueHeld("p=1/part-0");
    // The merge's own checks: another file's destination, and the next task's temporary files.
    completions.beforeUse("out/p=1/part-1");
    completions.beforeUse("out/_temporary/0/task_2/p=1/part-1");
    completions.beforeCreate("out/_temporary/0/_temporary/attempt_2/part-9", true);
    // A partition directory above a queued file is a directory whether or not it completed.
    assertThat(completions.directoryOfQueued("out/p=1")).isTrue();
    assertThat(completions.directoryOfQueued("out")).isTrue();
    assertThat(completions.directoryOfQueued("out/p=1/part-0")).isFalse();
    assertThat(completions.directoryOfQueued("other")).isFalse();
    assertThat(counters.barriers()).isZero();
    assertThat(completed).isEmpty();
    release.countDown();
    completions.awaitAll();

    String[] watched = {
      "out/p=1/part-0", // status, open or delete of the destination
      "out/p=1/part-0/x", // under it
      "out/p=1", // listing of a directory above it
      "out",
      "", // the bucket's root
      TASK + "p=1/part-0", // the record's own path
      TASK + "p=1", // the temporary tree: its delete or rename
      "out/_temporary"
    };
    for (String key : watched) {
      assertThat(waits(() -> completions.beforeUse(key))).as(key).isTrue();
    }
    // Creates under the root outside temporary directories: _SUCCESS.
    assertThat(waits(() -> completions.beforeCreate("out/_SUCCESS", false))).isTrue();
    assertThat(waits(() -> completions.beforeCreate("out/p=2", false))).isTrue();
    assertThat(waits(() -> completions.beforeCreate("elsewhere/_SUCCESS", false))).isFalse();
    // The file system's close, and the committer's explicit wait.
    assertThat(waits(completions::awaitAll)).isTrue();
    assertThat(waits(() -> completions.awaitUnder("out"))).isTrue();
  }

  /** Queues a fresh held completion, runs the call and tells whether it waited for it. */
  private boolean waits(IoCall call) throws Exception {
    CountDownLatch hold = new CountDownLatch(1);
    AtomicInteger done = new AtomicInteger();
    completions.queue(
        TASK + "p=1/part-0",
        "out/p=1/part-0",
        () -> {
          try {
            hold.await(30, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          done.incrementAndGet();
        });
    Thread opener = countDownSoon(hold);
    long barriers = counters.barriers();
    call.run();
    boolean waited = done.get() == 1;
    assertThat(counters.barriers() > barriers).isEqualTo(waited);
    opener.join();
    completions.awaitAll(); // leaves nothing queued for the next call
    return waited;
  }

  @FunctionalInterface
  private interface IoCall {
    void run() throws Exception;
  }

  @Test
  void aFailedCompletionFailsTheFirstBarrierAndEveryCreateUnderTheRootUntilTheTreeIsDeleted()
      throws Exception {
    release.countDown();
    completions.queue(TASK + "part-0", "out/part-0", () -> completed.add("out/part-0"));
    completions.queue(
        TASK + "part-1",
        "out/part-1",
        () -> {
          throw new IOException("NoSuchUpload");
        });

    // FileOutputCommitter's cleanup: the delete of the temporary tree reports the failure.
    assertThatThrownBy(() -> completions.beforeUse("out/_temporary"))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("s3a://b/" + TASK + "part-1")
        .hasMessageContaining("s3a://b/out/part-1")
        .hasMessageContaining("NoSuchUpload")
        .hasMessageContaining("deleting the temporary directory aborts it");
    // The completed file's record went; the failed file's record stays, naming its upload.
    assertThat(recordDeletes).containsExactly(List.of(TASK + "part-0"));
    // Where the cleanup's failure is ignored, _SUCCESS is still refused.
    assertThatThrownBy(() -> completions.beforeCreate("out/_SUCCESS", false))
        .hasMessageContaining("out/part-1");
    // The job's abort deletes the temporary tree, which aborts the failed upload.
    completions.beforeUse("out/_temporary");
    completions.afterTemporaryTreeChanged("out/_temporary");
    assertThat(completions.idle()).isTrue();
    completions.beforeCreate("out/_SUCCESS", false);
  }

  @Test
  void aFailureNobodyWaitedForIsReportedByClose() throws Exception {
    release.countDown();
    completions.queue(
        TASK + "part-0",
        "out/part-0",
        () -> {
          throw new IOException("InternalError");
        });
    assertThatThrownBy(completions::awaitAll).hasMessageContaining("out/part-0");
  }

  @Test
  void aProcessThatDiesWithCompletionsQueuedLeavesEveryRecordInPlace() throws Exception {
    queueHeld("part-0");
    queueHeld("part-1");
    // The process dies here: no barrier runs, so no record is deleted, and every upload,
    // completed or not, stays named by its record for the temporary tree's delete or a rerun.
    assertThat(recordDeletes).isEmpty();
    assertThat(completions.idle()).isFalse();
  }

  @Test
  void concurrentMergesQueueIntoOneRootAndOneBarrierWaitsForThemAll() throws Exception {
    release.countDown();
    int threads = 4;
    int files = 250;
    List<Thread> mergers = new ArrayList<>();
    List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
    for (int t = 0; t < threads; t++) {
      int task = t;
      Thread merger =
          new Thread(
              () -> {
                try {
                  for (int f = 0; f < files; f++) {
                    String name = "part-" + task + "-" + f;
                    completions.queue(
                        "out/_temporary/0/task_" + task + "/" + name,
                        "out/" + name,
                        () -> completed.add(name));
                  }
                } catch (IOException | RuntimeException e) {
                  failures.add(e);
                }
              });
      mergers.add(merger);
      merger.start();
    }
    for (Thread merger : mergers) {
      merger.join();
    }
    completions.beforeUse("out/_temporary");

    assertThat(failures).isEmpty();
    assertThat(completed).hasSize(threads * files);
    assertThat(recordDeletes.stream().mapToInt(List::size).sum()).isEqualTo(threads * files);
    assertThat(completions.idle()).isTrue();
  }

  @Test
  void theRootIsTheDirectoryAboveBothTheTemporaryFileAndItsDestination() {
    assertThat(QueuedCompletions.commonDirectory("out/_temporary/0/task_1/p=1/f", "out/p=1/f"))
        .isEqualTo("out");
    assertThat(QueuedCompletions.commonDirectory("_temporary/0/task_1/f", "f")).isEmpty();
    assertThat(QueuedCompletions.commonDirectory("a/b/_temporary/0/task_1/f", "a/b/f"))
        .isEqualTo("a/b");
    assertThat(QueuedCompletions.commonDirectory("ab/_temporary/0/t/f", "a/f")).isEmpty();
  }
}
