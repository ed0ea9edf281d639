package dev.writeonce.core.store.check;

import dev.writeonce.core.errors.UntrustedStoreException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.s3a.S3AFileSystem;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * What the committers, the shim and the operator command consult before they write: the {@link
 * StoreCheck} of the store, run once per store endpoint per process and then answered from memory
 * (a job pays nothing once its process has checked the store). Where a guarantee cannot be given,
 * they refuse with an error that names the capability, the store's answer and the setting that
 * overrides it; where a documented fallback exists, they take it and say so once.
 */
public final class StoreTrust {

  private static final Logger LOG = LoggerFactory.getLogger(StoreTrust.class);

  /** {@code true} (the default) checks the store before the first write; {@code false} skips. */
  public static final String CHECK = "writeonce.store.check";

  /**
   * Capabilities (comma-separated ids, see {@link Capability#id()}) whose failed check the user
   * accepts at their own risk: the library then runs as if the store honoured them.
   */
  public static final String TRUST = "writeonce.store.check.trust";

  private static final Map<String, StoreReport> CHECKED = new ConcurrentHashMap<>();

  private StoreTrust() {}

  /**
   * The report of the store behind an S3A filesystem, checked now if this process has not yet, with
   * the probes under {@code under}; refused when a guarantee cannot be given.
   *
   * @param who what is about to write, for the error: "job job_1 on s3a://b/t/"
   * @return the report, or null when the check is switched off
   */
  public static StoreReport require(FileSystem fs, String under, Configuration conf, String who)
      throws java.io.IOException {
    if (!conf.getBoolean(CHECK, true) || !(fs instanceof S3AFileSystem s3a)) {
      return null;
    }
    S3Client client = s3a.getS3AInternals().getAmazonS3Client("writeonce store check");
    String endpoint = StoreCheck.endpointOf(client, fs);
    StoreReport report;
    try {
      // A check that got no answer throws, so that nothing is remembered and the next write
      // checks again.
      report =
          CHECKED.computeIfAbsent(
              endpoint,
              e -> {
                StoreReport fresh =
                    new StoreCheck(client, s3a.getBucket(), e, under).run(LOG::debug);
                logOnce(e, fresh);
                return fresh;
              });
    } catch (java.io.UncheckedIOException e) {
      throw new java.io.IOException(
          who + ": the job wrote nothing. " + e.getCause().getMessage(), e);
    }
    refuseBroken(report, trusted(conf), who);
    return report;
  }

  /** Remembers a report for its endpoint, as a check run by hand or at a store's start. */
  public static void remember(StoreReport report) {
    remember(report.endpoint(), report);
  }

  /**
   * Remembers a report for an endpoint that reaches the same store another way, such as a proxy in
   * front of it.
   */
  public static void remember(String endpoint, StoreReport report) {
    String key = StoreCheck.normalized(endpoint);
    CHECKED.put(key, report);
    logOnce(key, report);
  }

  /** The report this process holds for an endpoint, if it checked the store there. */
  public static java.util.Optional<StoreReport> known(String endpoint) {
    return java.util.Optional.ofNullable(CHECKED.get(StoreCheck.normalized(endpoint)));
  }

  /** Forgets the report of one endpoint: the next write there checks again. */
  public static void forget(String endpoint) {
    CHECKED.remove(StoreCheck.normalized(endpoint));
    LOGGED.remove(StoreCheck.normalized(endpoint));
  }

  /** Refuses when the report leaves a guarantee that the trusted set does not waive. */
  public static void refuseBroken(StoreReport report, Set<Capability> trusted, String who)
      throws UntrustedStoreException {
    List<StoreReport.Finding> broken = report.brokenGuarantees(trusted);
    if (broken.isEmpty()) {
      return;
    }
    List<String> lines = new ArrayList<>();
    for (StoreReport.Finding finding : broken) {
      lines.add(
          finding.capability().title()
              + " ("
              + finding.capability().id()
              + "): "
              + finding.verdict().id()
              + ", the store "
              + finding.answer()
              + "; "
              + finding.capability().guarantee()
              + " cannot hold");
    }
    throw new UntrustedStoreException(
        who
            + ": refused, nothing written. The store at "
            + report.endpoint()
            + (report.server().isEmpty() ? "" : " (" + report.server() + ")")
            + " does not honour what this library's guarantees rest on: "
            + String.join("; ", lines)
            + ". Run 'writeonce check-store' for the whole report. To run anyway at your own"
            + " risk, set "
            + TRUST
            + "="
            + String.join(",", broken.stream().map(f -> f.capability().id()).toList()));
  }

  /** The capabilities the configuration trusts. */
  public static Set<Capability> trusted(Configuration conf) {
    Set<Capability> trusted = EnumSet.noneOf(Capability.class);
    for (String id : conf.getTrimmedStringCollection(TRUST)) {
      trusted.add(Capability.of(id));
    }
    return trusted;
  }

  private static final Set<String> LOGGED = ConcurrentHashMap.newKeySet();

  private static void logOnce(String endpoint, StoreReport report) {
    if (!LOGGED.add(endpoint)) {
      return;
    }
    LOG.info(
        "Store at {} ({}) checked with {} requests: {}",
        endpoint,
        report.server().isEmpty() ? "no Server header" : report.server(),
        report.requests(),
        String.join(
            ", ",
            report.findings().stream()
                .map(f -> f.capability().id() + " " + f.verdict().id())
                .toList()));
    for (StoreReport.Finding finding : report.fallbacks()) {
      LOG.warn(
          "Store at {}: {} {} ({}): the library {}",
          endpoint,
          finding.capability().title(),
          finding.verdict().id(),
          finding.answer(),
          finding.capability().withoutIt());
    }
  }
}
