package dev.writeonce.core.work;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/** Bounded threads that {@link Tasks} runs work on: a job commit's, or a file system's. */
public interface WorkerPool {

  /** Whose work this is, for progress and failure lines: "Job job_1", "rename shim for s3a://b". */
  String owner();

  /** How many tasks may run at once. */
  int parallelism();

  ExecutorService pool();

  /**
   * A fixed number of daemon threads named {@code <prefix>1}, {@code <prefix>2}..., which end after
   * 30 idle seconds and start again on demand; the pool of every {@code WorkerPool}.
   */
  static ThreadPoolExecutor boundedExecutor(String threadPrefix, int threads) {
    AtomicInteger counter = new AtomicInteger();
    ThreadPoolExecutor pool =
        new ThreadPoolExecutor(
            threads,
            threads,
            30,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            runnable -> {
              Thread thread = new Thread(runnable, threadPrefix + counter.incrementAndGet());
              thread.setDaemon(true);
              return thread;
            });
    pool.allowCoreThreadTimeOut(true);
    return pool;
  }
}
