package dev.writeonce.shim.simulation;

import dev.writeonce.core.testing.simulation.Scheduler;
import dev.writeonce.core.testing.simulation.SimFuture;
import dev.writeonce.core.work.WorkerPool;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A simulated process's thread pool: every task handed to it is an actor of its own, ready when
 * handed over, so that the scheduler decides when it runs, and waiting for it yields the turn.
 */
final class SimWorkers implements WorkerPool {

  private final Scheduler scheduler;
  private final String owner;
  private final int parallelism;
  private final Process process;
  private final AtomicInteger tasks = new AtomicInteger();
  private final ExecutorService pool = new Pool();

  SimWorkers(Scheduler scheduler, Process process, String owner, int parallelism) {
    this.scheduler = scheduler;
    this.process = process;
    this.owner = owner;
    this.parallelism = parallelism;
  }

  @Override
  public String owner() {
    return owner;
  }

  @Override
  public int parallelism() {
    return parallelism;
  }

  @Override
  public ExecutorService pool() {
    return pool;
  }

  private final class Pool extends AbstractExecutorService {
    private volatile boolean shutdown;

    @Override
    public <T> Future<T> submit(Callable<T> task) {
      SimFuture<T> future = new SimFuture<>(scheduler);
      if (scheduler.current() == null) {
        // Handed over outside the schedule (a process ending after it, closing its file
        // systems): no actor would ever run it, so it runs here.
        try {
          future.complete(process.call(task));
        } catch (Throwable failed) {
          future.fail(failed);
        }
        return future;
      }
      String name = process.name() + "/" + owner + "#" + tasks.incrementAndGet();
      scheduler.spawn(
          name,
          () -> {
            if (future.cancelled()) {
              future.fail(new CancellationException(name + " was cancelled"));
              return;
            }
            try {
              future.complete(process.call(task));
            } catch (Throwable failed) {
              future.fail(failed);
            }
          });
      return future;
    }

    @Override
    public Future<?> submit(Runnable task) {
      return submit(
          () -> {
            task.run();
            return null;
          });
    }

    @Override
    public <T> Future<T> submit(Runnable task, T result) {
      return submit(
          () -> {
            task.run();
            return result;
          });
    }

    @Override
    public void execute(Runnable command) {
      submit(command);
    }

    @Override
    public void shutdown() {
      shutdown = true;
    }

    @Override
    public List<Runnable> shutdownNow() {
      shutdown = true;
      return new ArrayList<>();
    }

    @Override
    public boolean isShutdown() {
      return shutdown;
    }

    @Override
    public boolean isTerminated() {
      return shutdown;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
      return true;
    }

    @Override
    public <T> List<Future<T>> invokeAll(Collection<? extends Callable<T>> callables) {
      List<Future<T>> futures = new ArrayList<>();
      for (Callable<T> callable : callables) {
        futures.add(submit(callable));
      }
      return futures;
    }
  }
}
