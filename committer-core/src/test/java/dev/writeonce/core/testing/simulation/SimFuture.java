package dev.writeonce.core.testing.simulation;

import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * The future of work another actor does (a simulated pool's task): an actor waiting for it yields
 * its turn until it is done.
 */
public final class SimFuture<T> implements Future<T> {

  private final Scheduler scheduler;
  private volatile boolean done;
  private volatile boolean cancelled;
  private T value;
  private Throwable failure;

  public SimFuture(Scheduler scheduler) {
    this.scheduler = scheduler;
  }

  public void complete(T result) {
    synchronized (this) {
      value = result;
      done = true;
    }
    scheduler.changed();
  }

  public void fail(Throwable cause) {
    synchronized (this) {
      failure = cause;
      done = true;
    }
    scheduler.changed();
  }

  @Override
  public boolean cancel(boolean mayInterruptIfRunning) {
    if (done) {
      return false;
    }
    cancelled = true;
    return true;
  }

  /** Whether a caller cancelled it before it ran. */
  public boolean cancelled() {
    return cancelled;
  }

  @Override
  public boolean isCancelled() {
    return cancelled && done;
  }

  @Override
  public boolean isDone() {
    return done;
  }

  @Override
  public T get() throws ExecutionException {
    if (!done) {
      scheduler.blockUntil(this::isDone);
    }
    synchronized (this) {
      if (failure instanceof CancellationException cancellation) {
        throw cancellation;
      }
      if (failure != null) {
        throw new ExecutionException(failure);
      }
      return value;
    }
  }

  @Override
  public T get(long timeout, TimeUnit unit) throws ExecutionException {
    return get();
  }
}
