package dev.writeonce.shim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.upload.UploadPool;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The queue's rules: rounds, barriers, and who a failed completion is reported to. */
class CompletionQueueTest {

  private static final String JOB_ATTEMPT = "out/_temporary/0";
  private static final String TASK = JOB_ATTEMPT + "/task_1/";

  private final UploadPool pool = new UploadPool("completion queue test", 4);
  private final ShimStatistics counters = new ShimStatistics();
  private final List<String> landed = Collections.synchronizedList(new ArrayList<>());
  private final List<String> recordsDeleted = Collections.synchronizedList(new ArrayList<>());
  private final CompletionQueue queue =
      new CompletionQueue(
          pool,
          new CompletionQueue.Landing() {
            @Override
            public void promised(String destinationKey) {}

            @Override
            public void ended(String destinationKey, boolean succeeded) {
              if (succeeded) {
                landed.add(destinationKey);
              }
            }
          },
          "b",
          RenameShim.PAGE_SIZE);
  private final CountDownLatch release = new CountDownLatch(1);

  @AfterEach
  void stop() {
    release.countDown();
    pool.close();
  }

  private void queue(String name, boolean fails) throws IOException {
    queue.queue(
        TASK + name,
        List.of(TASK + name),
        "out/" + name,
        () -> {
          try {
            release.await(30, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          if (fails) {
            throw new IOException("the store refused the completion of " + name);
          }
        },
        recordsDeleted::addAll,
        this,
        counters);
  }

  @Test
  void aDeletedTemporaryTreeEndsTheRoundsOfItsJobAttempts() {
    queue.startRound(JOB_ATTEMPT, List.of(TASK + "a"), 0L);
    queue.temporaryTreeChanged("out/_temporary", false);
    assertThat(queue.inRound(TASK + "a")).as("a mkdirs leaves the round").isTrue();

    queue.temporaryTreeChanged("out/_temporary", true);

    assertThat(queue.inRound(TASK + "a")).as("the job's abort ends it").isFalse();
    assertThat(queue.rounds()).isZero();
  }

  /** A delete of one job attempt directory ends its round only, not a sibling's. */
  @Test
  void aDeleteOfOneJobAttemptDirectoryLeavesTheRoundsOfItsSiblings() {
    queue.startRound("out/_temporary/0", List.of("out/_temporary/0/task_1/a"), 0L);
    queue.startRound("out/_temporary/1", List.of("out/_temporary/1/task_1/a"), 0L);
    queue.startRound("out/_temporary/10", List.of("out/_temporary/10/task_1/a"), 0L);

    queue.temporaryTreeChanged("out/_temporary/1", true);
    queue.temporaryTreeChanged("out/_temporary/0/_temporary/attempt_1", true); // a task's abort

    assertThat(queue.inRound("out/_temporary/0/task_1/a")).isTrue();
    assertThat(queue.inRound("out/_temporary/1/task_1/a")).isFalse();
    assertThat(queue.inRound("out/_temporary/10/task_1/a"))
        .as("a name sharing the prefix")
        .isTrue();
    assertThat(queue.rounds()).isEqualTo(2);
  }

  /**
   * A round ended by a delete while one of its completions failed untold. The delete is refused
   * with the failure first (its barrier), so the round cannot end before the committing side is
   * told; a later move of the ended round reports nothing, and the failure is still reported to a
   * create under the output until the tree is deleted.
   */
  @Test
  void aRoundEndedByADeleteNeverSwallowsAFailureNobodyWasToldOf() throws Exception {
    queue.startRound(JOB_ATTEMPT, List.of(TASK + "a", TASK + "b"), 0L);
    queue("a", true);
    release.countDown();

    assertThatThrownBy(() -> queue.barrier(Operation.Kind.DELETE, JOB_ATTEMPT, true, counters))
        .hasMessageContaining("out/a");
    queue.barrier(Operation.Kind.DELETE, JOB_ATTEMPT, true, counters);
    queue.temporaryTreeChanged(JOB_ATTEMPT, true);
    assertThat(queue.rounds()).isZero();
    queue.moved(JOB_ATTEMPT, List.of(TASK + "b"), counters); // the ended round: nothing to report
    assertThat(queue.idle()).as("the failed batch ended with the told abort").isTrue();
  }

  /** A queue that deletes records in the background once {@code keys} of them wait. */
  private CompletionQueue queueDeletingRecordsPer(int keys) {
    return new CompletionQueue(
        pool,
        new CompletionQueue.Landing() {
          @Override
          public void promised(String destinationKey) {}

          @Override
          public void ended(String destinationKey, boolean landed) {}
        },
        "b",
        keys);
  }

  /**
   * Records of completed files are deleted beside the merge as soon as they fill one request, not
   * all at the barrier: one delete of a full page before any barrier, the rest by the barrier.
   */
  @Test
  void recordsOfCompletedFilesAreDeletedBesideTheMergeOnceTheyFillARequest() throws Exception {
    List<List<String>> deletes = Collections.synchronizedList(new ArrayList<>());
    CompletionQueue paged = queueDeletingRecordsPer(2);
    CompletionQueue.RecordDeletes records = keys -> deletes.add(List.copyOf(keys));
    for (String name : List.of("a", "b", "c")) {
      paged.queue(
          TASK + name, List.of(TASK + name), "out/" + name, () -> {}, records, this, counters);
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (deletes.isEmpty() && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    assertThat(deletes).as("a full page, deleted with no barrier").hasSize(1);
    assertThat(deletes.get(0)).hasSize(2);

    paged.barrier(Operation.Kind.AWAIT, "out", false, counters);

    assertThat(deletes).as("the rest, by the barrier").hasSize(2);
    assertThat(deletes.stream().flatMap(List::stream))
        .containsExactlyInAnyOrder(TASK + "a", TASK + "b", TASK + "c");
    assertThat(paged.idle()).isTrue();
  }

  /**
   * A background delete of records that fails with an unchecked exception (an S3 client closed
   * under it) puts its entries back: the next barrier deletes them again or reports the failure,
   * and never returns leaving the records of completed files where a delete of the temporary tree
   * would take them for pending files.
   */
  @Test
  void aBackgroundDeleteThatFailsUncheckedIsRetriedOrReported() throws Exception {
    CountDownLatch deleteStarted = new CountDownLatch(1);
    List<String> deleted = Collections.synchronizedList(new ArrayList<>());
    AtomicInteger calls = new AtomicInteger();
    CompletionQueue.RecordDeletes records =
        keys -> {
          if (calls.getAndIncrement() == 0) {
            deleteStarted.countDown();
            throw new IllegalStateException("Connection pool shut down");
          }
          deleted.addAll(keys);
        };
    CompletionQueue paged = queueDeletingRecordsPer(2);
    for (String name : List.of("a", "b")) {
      paged.queue(
          TASK + name, List.of(TASK + name), "out/" + name, () -> {}, records, this, counters);
    }
    assertThat(deleteStarted.await(30, TimeUnit.SECONDS)).isTrue();
    Throwable thrown = null;
    try {
      paged.barrier(Operation.Kind.AWAIT, "out", false, counters);
    } catch (IOException e) {
      thrown = e;
    }
    assertThat(thrown != null || deleted.containsAll(List.of(TASK + "a", TASK + "b")))
        .as("the barrier reported the failed delete or deleted the records again: %s", deleted)
        .isTrue();
  }

  @Test
  void aFileOfTheRoundMayQueueAndAnyOtherMayNot() {
    queue.startRound(JOB_ATTEMPT, List.of(TASK + "a"), 0L);

    assertThat(queue.inRound(TASK + "a")).isTrue();
    assertThat(queue.inRound(TASK + "b")).as("not listed by the job commit").isFalse();
    assertThat(queue.inRound("out/_temporary/1/task_1/a")).as("another job attempt").isFalse();
  }

  @Test
  void theRenameOfTheRoundsLastFileWaitsForEveryCompletionAndFailsWithTheFirstFailure()
      throws Exception {
    queue.startRound(JOB_ATTEMPT, List.of(TASK + "a", TASK + "b"), 0L);
    queue("a", false);
    queue.moved(JOB_ATTEMPT, List.of(TASK + "a"), counters);
    queue("b", true);
    release.countDown();

    assertThatThrownBy(() -> queue.moved(JOB_ATTEMPT, List.of(TASK + "b"), counters))
        .hasMessageContaining("out/b")
        .hasMessageContaining("the store refused the completion of b");
    assertThat(landed).containsExactly("out/a");
    assertThat(recordsDeleted).as("only the completed file's record").containsExactly(TASK + "a");
  }

  @Test
  void aReaderWaitsButNeverConsumesTheFailureWhichTheTemporaryTreesDeleteThenReports()
      throws Exception {
    queue.startRound(JOB_ATTEMPT, List.of(TASK + "a"), 0L);
    queue("a", true);
    release.countDown();

    // A query listing the table and a status of the output: they wait, and see no error.
    queue.barrier(Operation.Kind.READ, "out/a", false, counters);
    queue.barrier(Operation.Kind.STATUS, "out", false, counters);

    assertThatThrownBy(() -> queue.barrier(Operation.Kind.DELETE, "out/_temporary", true, counters))
        .as("the cleanup would abort the failed file's upload: refused with the failure")
        .hasMessageContaining("out/a");
    // The committing side has been told: the next delete of the tree is the job's abort.
    queue.barrier(Operation.Kind.DELETE, "out/_temporary", true, counters);
    queue.temporaryTreeChanged("out/_temporary", true);
    assertThat(queue.idle()).isTrue();
  }

  @Test
  void everyCreateUnderTheOutputAndEveryAwaitFailsWithTheFailureUntilTheJobAborts()
      throws Exception {
    queue.startRound(JOB_ATTEMPT, List.of(TASK + "a"), 0L);
    queue("a", true);
    release.countDown();

    for (int i = 0; i < 2; i++) {
      assertThatThrownBy(
              () -> queue.barrier(Operation.Kind.CREATE, "out/_SUCCESS", false, counters))
          .hasMessageContaining("out/a");
      assertThatThrownBy(() -> queue.barrier(Operation.Kind.AWAIT, "out", false, counters))
          .hasMessageContaining("out/a");
    }
    queue.barrier(Operation.Kind.CREATE, "elsewhere/_SUCCESS", false, counters);

    queue.barrier(Operation.Kind.DELETE, "out/_temporary", true, counters); // the abort
    queue.temporaryTreeChanged("out/_temporary", true);
    queue.barrier(Operation.Kind.CREATE, "out/_SUCCESS", false, counters);
  }

  @Test
  void onceACompletionFailedTheMergeStopsAtItsNextQueuedRename() throws Exception {
    queue.startRound(JOB_ATTEMPT, List.of(TASK + "a", TASK + "b"), 0L);
    queue("a", true);
    release.countDown();
    queue.barrier(Operation.Kind.READ, "out/a", false, counters); // waits for it to fail

    assertThatThrownBy(() -> queue("b", false)).hasMessageContaining("out/a");
  }

  @Test
  void aStatusOfADirectoryAboveAQueuedFileDoesNotWaitAndOneOfTheFileDoes() throws Exception {
    queue.startRound(JOB_ATTEMPT, List.of(TASK + "p=1/a"), 0L);
    queue.queue(
        TASK + "p=1/a",
        List.of(TASK + "p=1/a"),
        "out/p=1/a",
        () -> {
          try {
            release.await(30, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        },
        recordsDeleted::addAll,
        this,
        counters);

    queue.barrier(Operation.Kind.STATUS, "out/p=1", false, counters);
    assertThat(landed).as("answered without waiting").isEmpty();
    assertThat(counters.directoriesOfQueued()).isEqualTo(1);

    release.countDown();
    queue.barrier(Operation.Kind.STATUS, "out/p=1/a", false, counters);
    assertThat(landed).containsExactly("out/p=1/a");
    assertThat(recordsDeleted).containsExactly(TASK + "p=1/a");
    assertThat(queue.idle()).isTrue();
  }

  @Test
  void closeReportsAFailureNoJobCommitWasToldOf() throws Exception {
    queue.startRound(JOB_ATTEMPT, List.of(TASK + "a", TASK + "b"), 0L);
    queue("a", true);
    release.countDown();

    assertThatThrownBy(() -> queue.awaitOwnedBy(this, counters)).hasMessageContaining("out/a");
  }

  /**
   * Seed 5377 of the simulation (a dynamic partition overwrite whose merge moved a record into
   * Spark's staging directory through the queue). A reader's barrier took the moved file's entry
   * and was deleting its old record when the job's cleanup deleted the temporary tree: its barrier
   * found nothing left to wait for, its listing still showed the old record, and it aborted the
   * upload that the moved record names. A barrier returns only once every record deletion another
   * caller has under way is done.
   */
  @Test
  void aBarrierReturnsOnlyOnceTheRecordsAnotherCallerIsDeletingAreGone() throws Exception {
    CountDownLatch deleting = new CountDownLatch(1);
    CountDownLatch mayDelete = new CountDownLatch(1);
    List<String> stored = Collections.synchronizedList(new ArrayList<>(List.of(TASK + "a")));
    queue.startRound(JOB_ATTEMPT, List.of(TASK + "a"), 0L);
    queue.queue(
        TASK + "a",
        List.of(TASK + "a"),
        "out/.spark-staging-1/a",
        () -> {},
        keys -> {
          deleting.countDown();
          try {
            mayDelete.await(30, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          stored.removeAll(keys);
        },
        this,
        counters);
    Thread reader =
        new Thread(
            () -> {
              try {
                queue.barrier(Operation.Kind.READ, TASK + "a", true, counters);
              } catch (IOException e) {
                throw new UncheckedIOException(e);
              }
            });
    reader.start();
    assertThat(deleting.await(30, TimeUnit.SECONDS)).as("the reader deletes the record").isTrue();

    Thread cleanup =
        new Thread(
            () -> {
              try {
                queue.barrier(Operation.Kind.DELETE, "out/_temporary", true, counters);
              } catch (IOException e) {
                throw new UncheckedIOException(e);
              }
            });
    cleanup.start();
    cleanup.join(500);
    assertThat(cleanup.isAlive())
        .as("the cleanup's barrier waits while the old record is still stored")
        .isTrue();

    mayDelete.countDown();
    cleanup.join(30_000);
    reader.join(30_000);
    assertThat(cleanup.isAlive()).isFalse();
    assertThat(stored).as("what the cleanup's listing then shows").isEmpty();
    assertThat(queue.idle()).isTrue();
  }

  @Test
  void recordsWhoseDeleteFailedAreDeletedByTheNextBarrier() throws Exception {
    AtomicInteger attempts = new AtomicInteger();
    queue.startRound(JOB_ATTEMPT, List.of(TASK + "a"), 0L);
    queue.queue(
        TASK + "a",
        List.of(TASK + "a"),
        "out/a",
        () -> {},
        keys -> {
          if (attempts.incrementAndGet() == 1) {
            throw new IOException("the store refused the delete of " + keys);
          }
          recordsDeleted.addAll(keys);
        },
        this,
        counters);

    assertThatThrownBy(() -> queue.barrier(Operation.Kind.READ, "out/a", false, counters))
        .hasMessageContaining("refused the delete");
    assertThat(recordsDeleted).isEmpty();
    assertThat(queue.idle()).as("the record is still to delete").isFalse();

    queue.barrier(Operation.Kind.READ, "out/a", false, counters);
    assertThat(recordsDeleted).containsExactly(TASK + "a");
    assertThat(landed).containsExactly("out/a");
    assertThat(queue.idle()).isTrue();
  }
}
