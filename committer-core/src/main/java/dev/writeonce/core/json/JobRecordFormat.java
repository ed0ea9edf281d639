package dev.writeonce.core.json;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.model.DestinationClaim;
import dev.writeonce.core.model.JobRecord;

/**
 * JSON of the job record ({@code writeonce.job}, version 1), and of the abort fence ({@code
 * writeonce.job-abort}, version 1): the small object an abort creates, conditionally, at the key of
 * the job manifest, so that a manifest write still in flight can no longer land.
 */
public final class JobRecordFormat {

  public static final String FORMAT = "writeonce.job";
  public static final int VERSION = 1;
  public static final String ABORT_FORMAT = "writeonce.job-abort";
  public static final int ABORT_VERSION = 1;
  public static final String CLAIM_FORMAT = "writeonce.fail-mode-claim";
  public static final int CLAIM_VERSION = 1;
  public static final String LEASE_FORMAT = "writeonce.job-lease";
  public static final int LEASE_VERSION = 1;

  /** The lease of a record written before records carried one: the default lease. */
  static final long DEFAULT_LEASE_MILLIS = 10 * 60 * 1000L;

  private JobRecordFormat() {}

  public static byte[] toJson(JobRecord record) {
    return Json.write(
        out -> {
          out.writeStartObject();
          out.writeStringField("format", FORMAT);
          out.writeNumberField("version", VERSION);
          out.writeStringField("jobId", record.jobId());
          out.writeStringField("uuid", record.uuid());
          out.writeStringField("destination", record.destination().toString());
          out.writeStringField("state", record.state().id());
          out.writeStringField("host", record.host());
          out.writeNumberField("createdAtMillis", record.createdAtMillis());
          out.writeNumberField("updatedAtMillis", record.updatedAtMillis());
          out.writeNumberField("leaseMillis", record.leaseMillis());
          out.writeEndObject();
        });
  }

  public static JobRecord fromJson(byte[] data, String source) throws FormatException {
    ObjectNode root = Json.readObject(data, source);
    Json.requireFormat(root, FORMAT, VERSION, source);
    try {
      return new JobRecord(
          Json.text(root, "jobId", source),
          Json.text(root, "uuid", source),
          Destination.of(Json.text(root, "destination", source)),
          JobRecord.State.parse(Json.text(root, "state", source)),
          Json.text(root, "host", source),
          Json.number(root, "createdAtMillis", source),
          Json.number(root, "updatedAtMillis", source),
          root.has("leaseMillis")
              ? Json.number(root, "leaseMillis", source)
              : DEFAULT_LEASE_MILLIS);
    } catch (IllegalArgumentException e) {
      throw new FormatException(source, e.getMessage(), e);
    }
  }

  /** The abort fence of a job. */
  public static byte[] abortToJson(String jobId, long abortedAtMillis) {
    return Json.write(
        out -> {
          out.writeStartObject();
          out.writeStringField("format", ABORT_FORMAT);
          out.writeNumberField("version", ABORT_VERSION);
          out.writeStringField("jobId", jobId);
          out.writeNumberField("abortedAtMillis", abortedAtMillis);
          out.writeEndObject();
        });
  }

  public static byte[] claimToJson(DestinationClaim claim) {
    return Json.write(
        out -> {
          out.writeStartObject();
          out.writeStringField("format", CLAIM_FORMAT);
          out.writeNumberField("version", CLAIM_VERSION);
          out.writeStringField("jobId", claim.jobId());
          out.writeStringField("uuid", claim.uuid());
          out.writeStringField("host", claim.host());
          out.writeNumberField("claimedAtMillis", claim.claimedAtMillis());
          out.writeNumberField("expiresAtMillis", claim.expiresAtMillis());
          out.writeEndObject();
        });
  }

  /**
   * A fail-mode claim. A claim written before claims were JSON holds only its job id: it is read as
   * a claim of that job with no run and no expiry.
   */
  public static DestinationClaim claimFromJson(byte[] data, String source) throws FormatException {
    String text = new String(data, java.nio.charset.StandardCharsets.UTF_8).trim();
    if (!text.startsWith("{")) {
      if (text.isEmpty()) {
        throw new FormatException(source, "is empty");
      }
      return new DestinationClaim(text, "", "unknown", 0, 0);
    }
    ObjectNode root = Json.readObject(data, source);
    Json.requireFormat(root, CLAIM_FORMAT, CLAIM_VERSION, source);
    return new DestinationClaim(
        Json.text(root, "jobId", source),
        Json.text(root, "uuid", source),
        Json.text(root, "host", source),
        Json.number(root, "claimedAtMillis", source),
        Json.number(root, "expiresAtMillis", source));
  }

  /**
   * The lease a driver renews while its job runs. Readers go by the object's store time, not by its
   * content, so that the driver's clock does not matter; the content says whose it is.
   */
  public static byte[] leaseToJson(JobRecord record, long renewedAtMillis, boolean released) {
    return Json.write(
        out -> {
          out.writeStartObject();
          out.writeStringField("format", LEASE_FORMAT);
          out.writeNumberField("version", LEASE_VERSION);
          out.writeStringField("jobId", record.jobId());
          out.writeStringField("uuid", record.uuid());
          out.writeStringField("host", record.host());
          out.writeNumberField("renewedAtMillis", renewedAtMillis);
          out.writeNumberField("leaseMillis", record.leaseMillis());
          out.writeBooleanField("released", released);
          out.writeEndObject();
        });
  }

  /** Whether a lease says its driver gave the job up. */
  public static boolean isLeaseReleased(byte[] data, String source) throws FormatException {
    ObjectNode root = Json.readObject(data, source);
    Json.requireFormat(root, LEASE_FORMAT, LEASE_VERSION, source);
    return root.path("released").asBoolean(false);
  }

  /** True when a document at the job manifest's key is an abort fence, not a manifest. */
  public static boolean isAbortFence(byte[] data, String source) throws FormatException {
    ObjectNode root = Json.readObject(data, source);
    if (!ABORT_FORMAT.equals(Json.optionalText(root, "format", ""))) {
      return false;
    }
    Json.requireFormat(root, ABORT_FORMAT, ABORT_VERSION, source);
    return true;
  }
}
