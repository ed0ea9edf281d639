package dev.writeonce.shim;

import dev.writeonce.core.model.InsertLock;
import java.time.Duration;
import java.time.Instant;

/** What a statement waiting for an insert lock is told, and why it gives up. */
final class InsertLockMessages {

  private InsertLockMessages() {}

  static String waitedTooLong(
      String holder,
      String destination,
      String uri,
      InsertLock other,
      long lapsesAt,
      long waitMillis,
      String waitSetting) {
    return "statement "
        + holder
        + " cannot add files to "
        + destination
        + ": statement "
        + other.holder()
        + " (host "
        + other.host()
        + ", since "
        + Instant.ofEpochMilli(other.claimedAtMillis())
        + ") holds "
        + uri
        + " and has not finished within "
        + waitSetting
        + " ("
        + Duration.ofMillis(waitMillis)
        + "). Statements that add files to one table run one at a time through the"
        + " rename shim, because the names of their files depend on each other. If that"
        + " session is gone, its lock lapses at "
        + Instant.ofEpochMilli(lapsesAt)
        + " and the next statement takes it over; otherwise raise "
        + waitSetting
        + " or run the statements one after another";
  }

  static String waiting(
      InsertLock other, String destination, long waited, long waitMillis, String waitSetting) {
    return "waiting for statement "
        + other.holder()
        + " (host "
        + other.host()
        + ", since "
        + Instant.ofEpochMilli(other.claimedAtMillis())
        + ") to finish adding files to "
        + destination
        + "; waited "
        + Duration.ofMillis(waited).toSeconds()
        + " s of at most "
        + Duration.ofMillis(waitMillis)
        + " ("
        + waitSetting
        + ")";
  }
}
