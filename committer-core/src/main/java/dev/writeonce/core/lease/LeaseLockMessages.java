package dev.writeonce.core.lease;

import dev.writeonce.core.model.InsertLock;
import java.time.Duration;
import java.time.Instant;

/** What a statement waiting for a lease lock is told, and why it gives up. */
final class LeaseLockMessages {

  private LeaseLockMessages() {}

  static String waitedTooLong(
      LeaseLock.Request request, InsertLock other, long lapsesAt, long waitMillis) {
    return "statement "
        + request.holder()
        + " cannot "
        + request.purpose()
        + " "
        + request.destination()
        + ": statement "
        + other.holder()
        + " (host "
        + other.host()
        + ", since "
        + Instant.ofEpochMilli(other.claimedAtMillis())
        + ") holds "
        + request.uri()
        + " and has not finished within "
        + request.waitSetting()
        + " ("
        + Duration.ofMillis(waitMillis)
        + "). "
        + request.why()
        + " If that session is gone, its lock lapses at "
        + Instant.ofEpochMilli(lapsesAt)
        + " and the next statement takes it over; otherwise raise "
        + request.waitSetting()
        + " or run the statements one after another";
  }

  static String waiting(LeaseLock.Request request, InsertLock other, long waited) {
    return "waiting for statement "
        + other.holder()
        + " (host "
        + other.host()
        + ", since "
        + Instant.ofEpochMilli(other.claimedAtMillis())
        + ") to finish; it holds the lock to "
        + request.purpose()
        + " "
        + request.destination()
        + "; waited "
        + Duration.ofMillis(waited).toSeconds()
        + " s of at most "
        + Duration.ofMillis(request.waitMillis())
        + " ("
        + request.waitSetting()
        + ")";
  }

  static String tookOver(LeaseLock.Request request, InsertLock other, long lapsesAt) {
    return "took over the lock "
        + request.uri()
        + " of statement "
        + other.holder()
        + " (host "
        + other.host()
        + "), which lapsed at "
        + Instant.ofEpochMilli(lapsesAt)
        + ": its session stopped renewing it";
  }

  /** A holder that must not act: the lock is another's now, or gone. */
  static String lost(String holder, String uri, String action, InsertLock taker) {
    String by =
        taker == null
            ? "was taken over by another statement, which has since released it"
            : "was taken over by statement "
                + taker.holder()
                + " (host "
                + taker.host()
                + ", since "
                + Instant.ofEpochMilli(taker.claimedAtMillis())
                + ")";
    return "statement "
        + holder
        + " no longer holds the lock "
        + uri
        + ": it "
        + by
        + " after this statement's lease lapsed (a pause of the process, or renewals that"
        + " failed). It does not "
        + action
        + ", and leaves everything as the statement that took the lock over left it";
  }
}
