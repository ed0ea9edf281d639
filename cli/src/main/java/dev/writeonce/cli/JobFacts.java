package dev.writeonce.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.writeonce.core.engine.JobInspector;
import dev.writeonce.core.engine.JobInspector.Job;
import dev.writeonce.core.engine.JobLayout;
import dev.writeonce.core.engine.JobRecords;
import dev.writeonce.core.model.DestinationClaim;
import dev.writeonce.core.store.StoreGateway;
import java.io.IOException;
import java.time.Duration;
import java.util.Optional;

/** What the operator commands say about a job and about a destination's fail-mode claim. */
final class JobFacts {

  private JobFacts() {}

  /** The facts of a job as JSON fields. */
  static ObjectNode put(ObjectNode node, Job job, long now) {
    node.put("jobId", job.jobId());
    node.put("state", job.state().name().toLowerCase(java.util.Locale.ROOT));
    node.put("live", job.isLive(now));
    node.put("files", job.files());
    node.put("bytes", job.bytes());
    node.put("lastRecordAt", CommandOutput.instant(job.lastModifiedMillis()));
    node.put("idleSeconds", Math.max(0, now - job.lastModifiedMillis()) / 1000);
    if (job.record() != null) {
      node.put("run", job.record().uuid());
      node.put("host", job.record().host());
      node.put("leaseRenewedAt", CommandOutput.instant(job.leaseRenewedMillis()));
      node.put("leaseExpiresAt", CommandOutput.instant(job.leaseExpiresMillis()));
    }
    if (job.problem() != null) {
      node.put("problem", job.problem());
    }
    return node;
  }

  /** A fail-mode claim as an entry of the JSON document's {@code failModeClaims}. */
  static ObjectNode putClaim(CommandOutput output, JobLayout layout, DestinationClaim claim) {
    ObjectNode node = output.entry("failModeClaims");
    node.put("destination", layout.destination().toString());
    node.put("jobId", claim.jobId());
    node.put("run", claim.uuid());
    node.put("host", claim.host());
    node.put("claimedAt", CommandOutput.instant(claim.claimedAtMillis()));
    node.put("expiresAt", CommandOutput.instant(claim.expiresAtMillis()));
    return node;
  }

  /** Why a live job is left alone: who holds its lease and until when. */
  static String whyLive(Job job, long now) {
    return "its driver on "
        + job.record().host()
        + " renewed its lease "
        + Durations.format(Duration.ofSeconds(Math.max(0, now - job.leaseRenewedMillis()) / 1000))
        + " ago; the lease lapses in "
        + Durations.format(Duration.ofSeconds(Math.max(0, job.leaseExpiresMillis() - now) / 1000))
        + " if it is not renewed";
  }

  /**
   * Removes the destination's fail-mode claim when the job holding it is no longer live and the
   * claim has expired: a claim left by a driver that died would refuse every later fail-mode job. A
   * claim of a live job, or one not yet expired, is left alone.
   */
  static void releaseStaleClaim(
      StoreGateway gateway,
      JobLayout layout,
      JobInspector.Report report,
      CommandOutput output,
      boolean act,
      long now)
      throws IOException {
    Optional<DestinationClaim> found = new JobRecords(gateway, layout).loadFailModeClaim();
    if (found.isEmpty()) {
      return;
    }
    DestinationClaim claim = found.get();
    ObjectNode node = putClaim(output, layout, claim);
    Optional<Job> holder =
        report.jobs().stream().filter(job -> job.jobId().equals(claim.jobId())).findFirst();
    String uri = layout.destination().uriOf(layout.failModeClaimKey());
    if (holder.isPresent() && holder.get().isLive(now)) {
      node.put("action", "kept");
      output.say(
          "keep the fail-mode claim of live job "
              + claim.jobId()
              + ": "
              + whyLive(holder.get(), now));
      return;
    }
    if (claim.expiresAtMillis() > now) {
      node.put("action", "kept");
      output.say(
          "keep the fail-mode claim of job "
              + claim.jobId()
              + " until it expires at "
              + CommandOutput.instant(claim.expiresAtMillis()));
      return;
    }
    node.put("action", act ? "removed" : "would-remove");
    output.say(
        (act ? "remove" : "would remove")
            + " the fail-mode claim "
            + uri
            + " of job "
            + claim.jobId()
            + ", which is no longer live");
    if (act) {
      // Only the claim judged stale, and only once it has lapsed on the store's clock: a claim
      // that another job took since the read stays.
      long lease = Math.max(0, claim.expiresAtMillis() - claim.claimedAtMillis());
      dev.writeonce.core.store.OwnedObjects.deleteIfOwned(
          gateway,
          layout.failModeClaimKey(),
          body -> sameClaim(body, claim),
          (info, storeNow) -> info.lastModifiedMillis() + lease <= storeNow);
    }
  }

  private static boolean sameClaim(byte[] body, DestinationClaim claim) {
    try {
      return dev.writeonce.core.json.JobRecordFormat.claimFromJson(body, "fail-mode claim")
          .isHeldBy(claim.jobId(), claim.uuid());
    } catch (dev.writeonce.core.errors.FormatException e) {
      return false;
    }
  }
}
