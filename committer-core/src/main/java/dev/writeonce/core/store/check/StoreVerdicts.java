package dev.writeonce.core.store.check;

import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import org.apache.hadoop.conf.Configuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.HeadBucketRequest;

/**
 * Where a process takes the verdict on a store from, cheapest first, so that a store is checked
 * once per host and day rather than once per process:
 *
 * <ol>
 *   <li>this process's memory: no request;
 *   <li>the verdict its job carries ({@link JobVerdicts}), made by the job's driver: no request;
 *   <li>the verdict kept on this host ({@link HostVerdicts}), younger than its TTL: one HeadBucket,
 *       which must answer with the {@code Server} header the verdict recorded;
 *   <li>a fresh {@link StoreCheck}, then kept in memory and on this host.
 * </ol>
 *
 * A verdict is discarded, in memory and on this host, when the store answers with another {@code
 * Server} header than it recorded or answers a guarantee-bearing request in a way it did not
 * predict ({@link #mispredicted}); the next write checks the store again.
 */
public final class StoreVerdicts {

  private static final Logger LOG = LoggerFactory.getLogger(StoreVerdicts.class);

  /** The verdicts of this process. */
  static final StoreVerdicts PROCESS = new StoreVerdicts(System::currentTimeMillis);

  /** Where a verdict came from, for the log and for tests. */
  enum Source {
    MEMORY,
    JOB,
    HOST,
    CHECK
  }

  /** A verdict and where this process took it from. */
  record Taken(StoreReport report, Source source) {}

  private final LongSupplier localClock;
  private final Map<String, StoreReport> known = new ConcurrentHashMap<>();
  private final Set<String> logged = ConcurrentHashMap.newKeySet();

  /** The host caches this process consulted, per endpoint: a discard removes the verdict there. */
  private final Map<String, Set<HostVerdicts>> consulted = new ConcurrentHashMap<>();

  /** Endpoints whose verdict was discarded for another Server header: once per process each. */
  private final Set<String> identityDiscarded = ConcurrentHashMap.newKeySet();

  StoreVerdicts(LongSupplier localClock) {
    this.localClock = localClock;
  }

  /**
   * The verdict on the store a client reaches at an endpoint, taken from the cheapest source that
   * has one.
   *
   * @param under the prefix a fresh check's probes go under
   * @throws java.io.UncheckedIOException when a fresh check got no answer: nothing is kept
   */
  Taken take(S3Client client, String bucket, String endpoint, String under, Configuration conf) {
    Source[] source = {Source.MEMORY};
    StoreReport report =
        known.computeIfAbsent(
            endpoint,
            e -> {
              Taken taken = takeOutsideMemory(client, bucket, e, under, conf);
              source[0] = taken.source();
              logOnce(e, taken);
              return taken.report();
            });
    return new Taken(report, source[0]);
  }

  private Taken takeOutsideMemory(
      S3Client client, String bucket, String endpoint, String under, Configuration conf) {
    HostVerdicts host = host(endpoint, conf);
    // A job's verdict is as fresh as its driver's; one copied into a later job's configuration
    // ages like a kept one.
    Optional<StoreReport> carried =
        JobVerdicts.carried(conf, endpoint)
            .filter(recorded -> host.fresh(recorded.recordedAtMillis(), localClock.getAsLong()))
            .map(VerdictFormat.Recorded::report);
    if (carried.isPresent()) {
      return new Taken(carried.get(), Source.JOB);
    }
    Optional<StoreReport> kept = host.read(endpoint, localClock.getAsLong());
    if (kept.isPresent()) {
      Optional<String> server = serverNow(client, bucket);
      if (server.isPresent() && server.get().equals(kept.get().server())) {
        return new Taken(kept.get(), Source.HOST);
      }
      LOG.info(
          "Store at {} answers as '{}', its verdict kept in {} was made for '{}': checking it"
              + " again",
          endpoint,
          server.orElse("(no answer)"),
          host.directory(),
          kept.get().server());
    }
    StoreReport fresh = new StoreCheck(client, bucket, endpoint, under).run(LOG::debug);
    host.write(fresh, localClock.getAsLong());
    return new Taken(fresh, Source.CHECK);
  }

  /** The Server header of a HeadBucket's answer ("" when the store sends none). */
  private static Optional<String> serverNow(S3Client client, String bucket) {
    try {
      return Optional.of(
          client
              .headBucket(HeadBucketRequest.builder().bucket(bucket).build())
              .sdkHttpResponse()
              .firstMatchingHeader("Server")
              .orElse(""));
    } catch (RuntimeException e) {
      LOG.debug("HeadBucket of {} for the store's identity failed: {}", bucket, e.toString());
      return Optional.empty();
    }
  }

  private HostVerdicts host(String endpoint, Configuration conf) {
    HostVerdicts host = HostVerdicts.of(conf);
    consulted.computeIfAbsent(endpoint, e -> ConcurrentHashMap.newKeySet()).add(host);
    return host;
  }

  /** Keeps a report in memory, as a check run by hand or at a store's start. */
  void remember(String endpoint, StoreReport report) {
    String key = StoreCheck.normalized(endpoint);
    known.put(key, report);
    logOnce(key, new Taken(report, Source.CHECK));
  }

  /** Keeps a fresh report in memory and on this host: what {@code writeonce check-store} found. */
  void refresh(StoreReport report, Configuration conf) {
    remember(report.endpoint(), report);
    host(report.endpoint(), conf).write(report, localClock.getAsLong());
  }

  Optional<StoreReport> known(String endpoint) {
    return Optional.ofNullable(known.get(StoreCheck.normalized(endpoint)));
  }

  /** Forgets an endpoint's verdict in memory and in every host cache this process used. */
  void forget(String endpoint) {
    String key = StoreCheck.normalized(endpoint);
    known.remove(key);
    logged.remove(key);
    Set<HostVerdicts> hosts = consulted.getOrDefault(key, Set.of());
    hosts.forEach(host -> host.discard(key));
  }

  /**
   * Notes the Server header of an answer from an endpoint: one that differs from the verdict's
   * discards it (once per endpoint and process, so that a store whose answers alternate between two
   * headers is not checked before every write).
   */
  void observedServer(String endpoint, String server) {
    StoreReport report = known.get(endpoint);
    if (report == null || report.server().equals(server) || !identityDiscarded.add(endpoint)) {
      return;
    }
    LOG.warn(
        "Store at {} now answers as '{}', its verdict was made for '{}': the next write checks"
            + " it again",
        endpoint,
        server,
        report.server());
    forget(endpoint);
  }

  /**
   * Discards an endpoint's verdict after the store answered a request that rests on a capability in
   * a way the verdict did not predict (an error answer to a condition it honoured).
   */
  void mispredicted(String endpoint, Capability capability, String answer) {
    StoreReport report = known.get(endpoint);
    if (report == null || report.verdict(capability) != Verdict.HONOURED) {
      return;
    }
    LOG.warn(
        "Store at {}: {} was {} when checked, and now the store {}: the next write checks it"
            + " again",
        endpoint,
        capability.id(),
        Verdict.HONOURED.id(),
        answer);
    forget(endpoint);
  }

  private void logOnce(String endpoint, Taken taken) {
    if (!logged.add(endpoint)) {
      return;
    }
    StoreReport report = taken.report();
    LOG.info(
        "Store at {} ({}) {}: {}",
        endpoint,
        report.server().isEmpty() ? "no Server header" : report.server(),
        switch (taken.source()) {
          case CHECK, MEMORY -> "checked with " + report.requests() + " requests";
          case JOB -> "as its job's driver checked it";
          case HOST -> "as this host checked it (HeadBucket confirmed the Server header)";
        },
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
