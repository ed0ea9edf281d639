package dev.writeonce.core.upload;

import dev.writeonce.core.work.WorkerPool;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadPoolExecutor;

/**
 * The threads of a file system that writes through uploads, for as long as the file system lives:
 * part uploads of its writers and the parallel work of its renames, deletes and listings. Bounded,
 * its threads named after it and idle ones let go; closed with the file system.
 */
public final class UploadPool implements WorkerPool, AutoCloseable {

  private final String owner;
  private final ThreadPoolExecutor pool;

  /**
   * @param owner whose threads these are, in thread names and progress lines
   * @param threads the most that run at once
   */
  public UploadPool(String owner, int threads) {
    if (threads < 1) {
      throw new IllegalArgumentException(owner + ": an upload pool needs at least one thread");
    }
    this.owner = owner;
    String prefix = "writeonce-" + owner.replaceAll("[^A-Za-z0-9._-]+", "-") + "-";
    this.pool = WorkerPool.boundedExecutor(prefix, threads);
  }

  @Override
  public String owner() {
    return owner;
  }

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
