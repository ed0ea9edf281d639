package dev.writeonce.core.work;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one action over many items on a bounded pool (a job commit's or a file system's): as many
 * workers as the pool allows pull items in order, so memory stays flat however many items there
 * are. The first failure is thrown with later ones attached as suppressed; progress is logged at
 * most every few seconds.
 */
public final class Tasks {

  private static final Logger LOG = LoggerFactory.getLogger(Tasks.class);
  private static final long PROGRESS_INTERVAL_NANOS = 5_000_000_000L;
  private static final int MAX_SUPPRESSED = 10;

  /** The work done for one item. */
  public interface Action<T> {
    void run(T item) throws IOException;
  }

  private Tasks() {}

  /**
   * Runs the action over every item; after the first failure no further item is started.
   *
   * @param what names the work in progress lines, e.g. "completing uploads"
   */
  public static <T> void runStoppingOnFailure(
      WorkerPool context, String what, List<T> items, Action<T> action) throws IOException {
    run(context, what, items, action, true);
  }

  /** Runs the action over every item even when some fail, as cleanup must. */
  public static <T> void runAll(WorkerPool context, String what, List<T> items, Action<T> action)
      throws IOException {
    run(context, what, items, action, false);
  }

  private static <T> void run(
      WorkerPool context, String what, List<T> items, Action<T> action, boolean stopOnFailure)
      throws IOException {
    if (items.isEmpty()) {
      return;
    }
    AtomicInteger next = new AtomicInteger();
    AtomicInteger done = new AtomicInteger();
    AtomicBoolean failed = new AtomicBoolean();
    ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
    Progress progress = new Progress(context.owner(), what, items.size());
    Runnable worker =
        () -> {
          int index;
          while (!(stopOnFailure && failed.get())
              && (index = next.getAndIncrement()) < items.size()) {
            try {
              action.run(items.get(index));
            } catch (IOException | RuntimeException e) {
              failed.set(true);
              failures.add(e);
            }
            progress.report(done.incrementAndGet());
          }
        };
    int workers = Math.min(context.parallelism(), items.size());
    List<Future<?>> futures = new ArrayList<>(workers);
    if (items.size() == 1) {
      worker.run(); // one item (a file system's single-file listing or rename): no thread handoff
    } else {
      for (int i = 0; i < workers; i++) {
        futures.add(context.pool().submit(worker));
      }
    }
    for (Future<?> future : futures) {
      try {
        future.get();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        futures.forEach(f -> f.cancel(true));
        throw new InterruptedIOException(what + " was interrupted");
      } catch (ExecutionException e) {
        failures.add(e.getCause());
      }
    }
    if (!failures.isEmpty()) {
      throw firstWithSuppressed(what, failures, done.get(), items.size());
    }
    progress.finished();
  }

  private static IOException firstWithSuppressed(
      String what, ConcurrentLinkedQueue<Throwable> failures, int done, int total) {
    Throwable first = failures.poll();
    IOException primary =
        first instanceof IOException io ? io : new IOException(what + " failed: " + first, first);
    int extra = 0;
    for (Throwable other : failures) {
      if (extra++ < MAX_SUPPRESSED) {
        primary.addSuppressed(other);
      }
    }
    LOG.warn(
        "{} failed after {} of {} items with {} failures; first: {}",
        what,
        done,
        total,
        extra + 1,
        primary.getMessage());
    return primary;
  }

  /** Logs "what: done/total" at most every few seconds, so long commits show they move. */
  private static final class Progress {
    private final String owner;
    private final String what;
    private final int total;
    private final long started = System.nanoTime();
    private final AtomicLong lastLog;

    Progress(String owner, String what, int total) {
      this.owner = owner;
      this.what = what;
      this.total = total;
      this.lastLog = new AtomicLong(started);
    }

    void report(int done) {
      long now = System.nanoTime();
      long last = lastLog.get();
      if (now - last >= PROGRESS_INTERVAL_NANOS && lastLog.compareAndSet(last, now)) {
        LOG.info("{}: {}: {}/{}", owner, what, done, total);
      }
    }

    void finished() {
      long millis = (System.nanoTime() - started) / 1_000_000;
      LOG.debug("{}: {}: {} done in {} ms", owner, what, total, millis);
    }
  }
}
