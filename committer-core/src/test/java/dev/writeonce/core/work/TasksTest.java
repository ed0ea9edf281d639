package dev.writeonce.core.work;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.engine.JobCommitContext;
import java.io.IOException;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

class TasksTest {

  @Test
  void oneItemRunsOnTheCallersThreadAndItsFailureIsReportedAsForMany() throws Exception {
    try (JobCommitContext context = new JobCommitContext("job_1", 4)) {
      Set<Thread> threads = ConcurrentHashMap.newKeySet();
      Tasks.runAll(context, "one item", List.of("a"), item -> threads.add(Thread.currentThread()));
      assertThat(threads).containsExactly(Thread.currentThread());

      assertThatThrownBy(
              () ->
                  Tasks.runAll(
                      context,
                      "one failing item",
                      List.of("a"),
                      item -> {
                        throw new IllegalStateException("boom " + item);
                      }))
          .isInstanceOf(IOException.class)
          .hasMessageContaining("one failing item failed")
          .hasMessageContaining("boom a");
    }
  }

  @Test
  void manyItemsRunOnThePoolAndEveryItemRunsEvenAfterAFailureForCleanup() throws Exception {
    try (JobCommitContext context = new JobCommitContext("job_1", 2)) {
      Set<String> done = ConcurrentHashMap.newKeySet();
      Set<Thread> threads = ConcurrentHashMap.newKeySet();
      assertThatThrownBy(
              () ->
                  Tasks.runAll(
                      context,
                      "cleanup",
                      List.of("a", "b", "c"),
                      item -> {
                        threads.add(Thread.currentThread());
                        done.add(item);
                        if (item.equals("b")) {
                          throw new IOException("b failed");
                        }
                      }))
          .isInstanceOf(IOException.class)
          .hasMessage("b failed");
      assertThat(done).containsExactlyInAnyOrder("a", "b", "c");
      assertThat(threads).doesNotContain(Thread.currentThread());
    }
  }
}
