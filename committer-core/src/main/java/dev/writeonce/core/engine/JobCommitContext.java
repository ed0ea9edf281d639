package dev.writeonce.core.engine;

import dev.writeonce.core.work.WorkerPool;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadPoolExecutor;

/**
 * The threads of one job's commit: a bounded pool named after the job, created when the commit
 * starts and shut down when it ends. Nothing static outlives a job.
 */
public final class JobCommitContext implements WorkerPool, AutoCloseable {

  private final String jobId;
  private final ThreadPoolExecutor pool;

  public JobCommitContext(String jobId, int threads) {
    this.jobId = jobId;
    this.pool = WorkerPool.boundedExecutor("writeonce-" + jobId + "-", threads);
  }

  public String jobId() {
    return jobId;
  }

  @Override
  public String owner() {
    return "Job " + jobId;
  }

  /** How many tasks may run at once. */
  @Override
  public int parallelism() {
    return pool.getMaximumPoolSize();
  }

  @Override
  public ExecutorService pool() {
    return pool;
  }

  @Override
  public void close() {
    pool.shutdownNow();
  }
}
