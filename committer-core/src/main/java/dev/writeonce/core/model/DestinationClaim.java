package dev.writeonce.core.model;

/**
 * The claim a job in conflict mode {@code fail} holds on its destination while it commits: one job
 * at a time may hold it. It names its job and run, so that a claim whose write landed although its
 * answer was lost is recognised as one's own, and so that an operator's command can tell a claim of
 * a live job from one left by a driver that died.
 *
 * @param jobId the job holding the claim
 * @param uuid the run of the job holding it, or empty for a claim written before claims named it
 * @param host the host of the driver that took it
 * @param claimedAtMillis when it was taken, by the driver's clock, or 0 when unknown
 * @param expiresAtMillis after this, a claim whose job is no longer live may be removed by recover
 */
public record DestinationClaim(
    String jobId, String uuid, String host, long claimedAtMillis, long expiresAtMillis) {

  /** Whether the claim was taken by the given run of the given job. */
  public boolean isHeldBy(String otherJobId, String otherUuid) {
    return jobId.equals(otherJobId) && !uuid.isEmpty() && uuid.equals(otherUuid);
  }
}
