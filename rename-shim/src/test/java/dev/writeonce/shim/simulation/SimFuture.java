package dev.writeonce.shim.simulation;

import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/** The future of work handed to a simulated pool: an actor waiting for it yields its turn. */
final class SimFuture<T> implements Future<T> {

  private final Scheduler scheduler;
  private volatile boolean done;
  private volatile boolean cancelled;
  private T value;
  private Throwable failure;

  SimFuture(Scheduler scheduler) {
    this.scheduler = scheduler;
  }

  void complete(T result) {
    synchronized (this) {
      value = result;
      done = true;
    }
    scheduler.completed(this);
  }

  void fail(Throwable cause) {
    synchronized (this) {
      failure = cause;
      done = true;
    }
    scheduler.completed(this);
  }

  @Override
  public boolean cancel(boolean mayInterruptIfRunning) {
    if (done) {
      return false;
    }
    cancelled = true;
    return true;
  }

  boolean cancelled() {
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
    scheduler.await(this);
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
