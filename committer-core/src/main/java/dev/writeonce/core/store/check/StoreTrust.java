package dev.writeonce.core.store.check;

import dev.writeonce.core.errors.UntrustedStoreException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.s3a.S3AFileSystem;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * What the committers, the shim and the operator command consult before they write: the {@link
 * StoreCheck} of the store, taken as {@link StoreVerdicts} says: a job pays nothing once its
 * process or its driver has checked the store, and one request once its host did (within a day, by
 * default). Where a guarantee cannot be given, they refuse with an error that names the capability,
 * the store's answer and the setting that overrides it; where a documented fallback exists, they
 * take it and say so once.
 */
public final class StoreTrust {

  /** {@code true} (the default) checks the store before the first write; {@code false} skips. */
  public static final String CHECK = "writeonce.store.check";

  /**
   * Capabilities (comma-separated ids, see {@link Capability#id()}) whose failed check the user
   * accepts at their own risk: the library then runs as if the store honoured them.
   */
  public static final String TRUST = "writeonce.store.check.trust";

  /** Where this host keeps verdicts (default: a directory of the user's under java.io.tmpdir). */
  public static final String CACHE_DIR = HostVerdicts.DIRECTORY;

  /** How long a verdict kept on this host is taken (default 1d); {@code 0} keeps none. */
  public static final String CACHE_TTL = HostVerdicts.TTL;

  private StoreTrust() {}

  /**
   * The report of the store behind an S3A filesystem, taken as {@link StoreVerdicts} says (this
   * process's memory, the job's driver, this host, else a check now with the probes under {@code
   * under}); refused when a guarantee cannot be given. The report is passed on to the tasks of the
   * jobs this thread submits next ({@link JobVerdicts}).
   *
   * @param who what is about to write, for the error: "job job_1 on s3a://b/t/"
   * @return the report, or null when the check is switched off
   */
  public static StoreReport require(FileSystem fs, String under, Configuration conf, String who)
      throws java.io.IOException {
    return require(fs, under, conf, who, null);
  }

  /**
   * As {@link #require(FileSystem, String, Configuration, String)}, and puts the verdict into a
   * job's configuration for the job's tasks.
   *
   * @param jobConf the job's configuration, or null
   */
  public static StoreReport require(
      FileSystem fs, String under, Configuration conf, String who, Configuration jobConf)
      throws java.io.IOException {
    StoreVerdicts.Taken verdict = take(fs, under, conf, who, jobConf);
    return verdict == null ? null : verdict.report();
  }

  /**
   * As {@link #require(FileSystem, String, Configuration, String)}, for a caller that writes again
   * and again: how many more milliseconds the verdict it stood on is taken for. While that time
   * lasts and {@link #generation()} stays the same, the caller may write without asking again.
   *
   * @return the milliseconds left; {@link Long#MAX_VALUE} when the check is switched off
   */
  public static long requireForMillis(FileSystem fs, String under, Configuration conf, String who)
      throws java.io.IOException {
    StoreVerdicts.Taken verdict = take(fs, under, conf, who, null);
    if (verdict == null) {
      return Long.MAX_VALUE;
    }
    long age = System.currentTimeMillis() - verdict.recordedAtMillis();
    return Math.max(0, HostVerdicts.of(conf).maxAgeMillis() - age);
  }

  private static StoreVerdicts.Taken take(
      FileSystem fs, String under, Configuration conf, String who, Configuration jobConf)
      throws java.io.IOException {
    if (!conf.getBoolean(CHECK, true) || !(fs instanceof S3AFileSystem s3a)) {
      return null;
    }
    S3Client client = s3a.getS3AInternals().getAmazonS3Client("writeonce store check");
    String endpoint = StoreCheck.endpointOf(client, fs);
    StoreVerdicts.Taken verdict;
    try {
      // A check that got no answer throws, so that nothing is remembered and the next write
      // checks again.
      verdict = StoreVerdicts.PROCESS.take(client, s3a.getBucket(), endpoint, under, conf);
    } catch (java.io.UncheckedIOException e) {
      throw new java.io.IOException(
          who + ": the job wrote nothing. " + e.getCause().getMessage(), e);
    } catch (RuntimeException e) {
      // A probe the store failed (a 5xx past the retries): no verdict, nothing remembered.
      throw new java.io.IOException(
          who
              + ": the job wrote nothing. The store check of "
              + endpoint
              + " failed: "
              + e.getMessage(),
          e);
    }
    JobVerdicts.publish(verdict);
    if (jobConf != null) {
      JobVerdicts.carry(jobConf, verdict);
    }
    refuseBroken(verdict.report(), trusted(conf), who);
    return verdict;
  }

  /**
   * A number that changes whenever a verdict of this process is taken afresh, discarded or
   * forgotten: a caller that took a verdict may stand on it while the number stays the same.
   */
  public static long generation() {
    return StoreVerdicts.PROCESS.generation();
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
    StoreVerdicts.PROCESS.remember(endpoint, report);
  }

  /**
   * Keeps what a check run now found, in this process and on this host, replacing any verdict kept
   * before: {@code writeonce check-store}.
   */
  public static void refresh(StoreReport report, Configuration conf) {
    StoreVerdicts.PROCESS.refresh(report, conf);
  }

  /** The report this process holds for an endpoint, if it took one. */
  public static java.util.Optional<StoreReport> known(String endpoint) {
    return StoreVerdicts.PROCESS.known(endpoint);
  }

  /** Forgets the report of one endpoint here and on this host: the next write checks again. */
  public static void forget(String endpoint) {
    StoreVerdicts.PROCESS.forget(endpoint, new Configuration());
  }

  /** Notes the Server header the store at an endpoint answered with ({@link StoreVerdicts}). */
  public static void observedServer(String endpoint, String server) {
    StoreVerdicts.PROCESS.observedServer(endpoint, server);
  }

  /**
   * Notes an answer to a request resting on a capability that its verdict did not predict: the
   * verdict is discarded and the next write checks the store again.
   */
  public static void mispredicted(
      String endpoint, String bucket, Capability capability, String answer) {
    StoreVerdicts.PROCESS.mispredicted(StoreCheck.normalized(endpoint), bucket, capability, answer);
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
}
