package dev.writeonce.core.committer;

import dev.writeonce.core.engine.JobLayout;
import dev.writeonce.core.engine.JobRecords;
import dev.writeonce.core.errors.DestinationConflictException;
import dev.writeonce.core.errors.ErrorKind;
import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.json.JobRecordFormat;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.model.DestinationClaim;
import dev.writeonce.core.model.JobRecord;
import dev.writeonce.core.store.OwnedObjects;
import dev.writeonce.core.store.StoreGateway;
import java.io.IOException;
import java.time.Instant;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The claim a job takes on its destination while it commits in conflict mode fail. */
final class FailModeClaim {

  private static final Logger LOG = LoggerFactory.getLogger(FailModeClaim.class);

  private FailModeClaim() {}

  /**
   * Releases the fail-mode claim, only while it is still this run's ({@link OwnedObjects}): if an
   * operator's recover removed it as stale and another job took it since, that job's claim stays. A
   * failure here must not turn a commit that went through into a reported failure: the claim is
   * only left behind, and the message says how to remove it.
   */
  static void release(StoreGateway store, Destination destination, JobRecord job, String claim) {
    String jobId = job.jobId();
    try {
      OwnedObjects.ReadBack outcome =
          OwnedObjects.deleteIfOwned(
              store, claim, body -> isHeldBy(body, claim, job), (info, storeNow) -> true);
      if (outcome == OwnedObjects.ReadBack.NOT_OURS) {
        LOG.warn(
            "Job {}: the fail-mode claim {} is no longer this run's: left for its holder",
            jobId,
            destination.uriOf(claim));
      }
    } catch (IOException e) {
      LOG.warn(
          "Job {}: the fail-mode claim {} could not be removed ({}); later fail-mode jobs on {}"
              + " are refused until 'writeonce recover {}' removes it (once this job's lease has"
              + " lapsed) or it is deleted",
          jobId,
          destination.uriOf(claim),
          e.getMessage(),
          destination,
          destination);
    }
  }

  private static boolean isHeldBy(byte[] body, String key, JobRecord job) {
    try {
      return JobRecordFormat.claimFromJson(body, key).isHeldBy(job.jobId(), job.uuid());
    } catch (dev.writeonce.core.errors.FormatException e) {
      return false;
    }
  }

  /**
   * In fail mode, one job at a time may commit to a destination: the claim is a conditional PUT
   * ({@code If-None-Match: *}), held from before the emptiness check until the commit ends. Two
   * jobs that both passed their setup check cannot then both commit.
   *
   * <p>The claim names the job and its run. When the PUT's answer is lost, or its retry finds the
   * claim already there, the claim is read back: if it is this run's own, the write landed and the
   * claim is held. Without that, a lost answer would leave a claim nobody releases.
   */
  static String take(StoreGateway store, Destination destination, JobRecord job)
      throws IOException {
    JobLayout layout = new JobLayout(destination);
    String key = layout.failModeClaimKey();
    long now = System.currentTimeMillis();
    DestinationClaim mine =
        new DestinationClaim(
            job.jobId(), job.uuid(), JobRecord.thisHost(), now, now + job.leaseMillis());
    for (int tries = 0; ; tries++) {
      try {
        store.putObject(key, JobRecordFormat.claimToJson(mine), true);
        return key;
      } catch (StoreException e) {
        boolean lostAnswer = e.is(ErrorKind.TRANSIENT);
        if (!e.is(ErrorKind.PRECONDITION_FAILED) && !lostAnswer) {
          throw e;
        }
        Optional<DestinationClaim> holder = new JobRecords(store, layout).loadFailModeClaim();
        if (holder.isPresent() && holder.get().isHeldBy(job.jobId(), job.uuid())) {
          LOG.info("Job {}: its fail-mode claim on {} landed", job.jobId(), destination);
          return key;
        }
        if (holder.isEmpty() && tries < 2) {
          continue; // released in between, or the lost write never landed: try again
        }
        if (holder.isEmpty()) {
          throw e;
        }
        throw refusal(destination, job.jobId(), key, holder.get());
      }
    }
  }

  private static DestinationConflictException refusal(
      Destination destination, String jobId, String key, DestinationClaim holder) {
    String since =
        holder.claimedAtMillis() > 0
            ? " on host "
                + holder.host()
                + " since "
                + Instant.ofEpochMilli(holder.claimedAtMillis())
                + " (run "
                + holder.uuid()
                + ")"
            : "";
    return new DestinationConflictException(
        "job "
            + jobId
            + " cannot commit to "
            + destination
            + ": job "
            + holder.jobId()
            + since
            + " is committing there and writeonce.conflict-mode is fail, which lets one job"
            + " write the destination at a time. If that job's driver died, 'writeonce recover "
            + destination
            + "' removes its claim once the job's lease has lapsed; or delete "
            + destination.uriOf(key));
  }
}
