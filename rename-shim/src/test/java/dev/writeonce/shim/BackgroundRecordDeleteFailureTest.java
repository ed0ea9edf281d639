package dev.writeonce.shim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.upload.UploadPool;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Records of completed files deleted in the background: a failure is never lost. */
class BackgroundRecordDeleteFailureTest {

  private static final String TASK = "out/_temporary/0/task_1/";

  private final UploadPool pool = new UploadPool("background record deletes", 4);
  private final ShimStatistics counters = new ShimStatistics();
  private final CompletionQueue queue =
      new CompletionQueue(
          pool,
          new CompletionQueue.Landing() {
            @Override
            public void promised(String destinationKey) {}

            @Override
            public void ended(String destinationKey, boolean landed) {}
          },
          "b",
          2);
  private final CountDownLatch deleteStarted = new CountDownLatch(1);
  private final CountDownLatch releaseDelete = new CountDownLatch(1);
  private final List<String> deleted = Collections.synchronizedList(new ArrayList<>());

  @AfterEach
  void stop() {
    releaseDelete.countDown();
    pool.close();
  }

  /**
   * The instance's records delete, as it behaves once the instance closed its S3 client: the first
   * call blocks until released, then fails with the client's unchecked exception.
   */
  private final CompletionQueue.RecordDeletes records =
      new CompletionQueue.RecordDeletes() {
        private boolean first = true;

        @Override
        public void delete(List<String> keys) throws IOException {
          boolean failing;
          synchronized (this) {
            failing = first;
            first = false;
          }
          if (failing) {
            deleteStarted.countDown();
            try {
              releaseDelete.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
              throw new IOException(e);
            }
            throw new IllegalStateException("Connection pool shut down");
          }
          deleted.addAll(keys);
        }
      };

  private void queueTwo(Object owner) throws IOException {
    for (String name : List.of("a", "b")) {
      queue.queue(
          TASK + name, List.of(TASK + name), "out/" + name, () -> {}, records, owner, counters);
    }
  }

  /**
   * A background delete that fails with an unchecked exception loses its entries: they are not put
   * back, the next barrier ignores the failure of a delete it did not start, returns normally, and
   * the records of completed files stay in the store (where a delete of the temporary tree takes
   * them for pending files). Before, the barrier started every delete itself and threw its failure.
   */
  @Test
  void aBackgroundDeleteThatFailsUncheckedIsNeitherRetriedNorReported() throws Exception {
    queueTwo(this);
    assertThat(deleteStarted.await(30, TimeUnit.SECONDS)).isTrue();
    releaseDelete.countDown();
    Throwable thrown = null;
    try {
      queue.barrier(Operation.Kind.AWAIT, "out", false, counters);
    } catch (IOException e) {
      thrown = e;
    }
    assertThat(thrown != null || deleted.containsAll(List.of(TASK + "a", TASK + "b")))
        .as(
            "the barrier reported the failed delete or deleted the records again; deleted %s",
            deleted)
        .isTrue();
  }
}
