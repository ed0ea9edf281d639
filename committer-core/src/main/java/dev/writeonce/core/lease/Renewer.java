package dev.writeonce.core.lease;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The one thread of the process that renews leases: the drivers' job leases and the lease locks
 * (insert locks, publication locks). A renewal is one small PUT, so one daemon thread serves them
 * all; a cancelled renewal leaves the queue at once, with the store it holds.
 */
public final class Renewer {

  private static final ScheduledThreadPoolExecutor EXECUTOR = executor();

  private Renewer() {}

  private static ScheduledThreadPoolExecutor executor() {
    ScheduledThreadPoolExecutor executor =
        new ScheduledThreadPoolExecutor(
            1,
            runnable -> {
              Thread thread = new Thread(runnable, "writeonce-renewer");
              thread.setDaemon(true);
              return thread;
            });
    executor.setRemoveOnCancelPolicy(true);
    return executor;
  }

  /** Runs {@code renewal} every {@code periodMillis}, first after one period, until cancelled. */
  public static ScheduledFuture<?> every(long periodMillis, Runnable renewal) {
    long period = Math.max(1, periodMillis);
    return EXECUTOR.scheduleWithFixedDelay(renewal, period, period, TimeUnit.MILLISECONDS);
  }
}
