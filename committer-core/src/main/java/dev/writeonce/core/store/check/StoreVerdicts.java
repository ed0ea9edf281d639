package dev.writeonce.core.store.check;

import java.nio.file.Path;
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
 * Where a process takes the verdict on a bucket of a store from, cheapest first, so that a store is
 * checked once per host and day rather than once per process:
 *
 * <ol>
 *   <li>this process's memory: no request;
 *   <li>the verdict its job carries ({@link JobVerdicts}), made by the job's driver: no request;
 *   <li>the verdict kept on this host ({@link HostVerdicts}): one HeadBucket, which must answer
 *       with the {@code Server} header the verdict recorded;
 *   <li>a fresh {@link StoreCheck}, then kept in memory and, when it leaves every guarantee
 *       standing, on this host.
 * </ol>
 *
 * A verdict is made for one bucket at one endpoint and taken for no other, and every source ages: a
 * verdict is taken for {@link HostVerdicts#fresh its TTL} from its check, wherever it travelled. It
 * is discarded when the store answers with another {@code Server} header than it recorded, or
 * answers a guarantee-bearing request in a way it did not predict ({@link #mispredicted}); the next
 * write then checks the store, taking nothing from its job or its host.
 */
public final class StoreVerdicts {

  private static final Logger LOG = LoggerFactory.getLogger(StoreVerdicts.class);

  /** The verdicts of this process. */
  static final StoreVerdicts PROCESS = new StoreVerdicts(System::currentTimeMillis);

  /** The bucket of a verdict remembered for every bucket of its endpoint ({@link #remember}). */
  private static final String ANY_BUCKET = "*";

  /** Where a verdict came from, for the log and for tests. */
  enum Source {
    MEMORY,
    JOB,
    HOST,
    CHECK
  }

  /**
   * A verdict, when its check ran on this host's clock (or the clock of the host that ran it), and
   * where this process took it from.
   */
  record Taken(StoreReport report, long recordedAtMillis, Source source) {}

  private final LongSupplier localClock;
  private final Map<String, Taken> known = new ConcurrentHashMap<>();
  private final Set<String> logged = ConcurrentHashMap.newKeySet();

  /** The host directories this process used: a discard or forget removes the verdict there. */
  private final Set<Path> hostDirectories = ConcurrentHashMap.newKeySet();

  /** Verdicts discarded here: the next take checks the store, whatever its job or host carry. */
  private final Set<String> discarded = ConcurrentHashMap.newKeySet();

  /**
   * The changes of Server header and the mispredicted capabilities that discarded a verdict, each
   * acted on once per process: a store whose nodes answer with two headers in turn costs at most
   * two checks, not one per write.
   */
  private final Set<String> discardsSeen = ConcurrentHashMap.newKeySet();

  /** Changed by every verdict taken from outside memory, discarded or forgotten. */
  private final java.util.concurrent.atomic.AtomicLong generation =
      new java.util.concurrent.atomic.AtomicLong();

  long generation() {
    return generation.get();
  }

  StoreVerdicts(LongSupplier localClock) {
    this.localClock = localClock;
  }

  private static String keyOf(String endpoint, String bucket) {
    return StoreCheck.normalized(endpoint) + " " + bucket;
  }

  /**
   * The verdict on one bucket of the store a client reaches at an endpoint, taken from the cheapest
   * source that has a fresh one.
   *
   * @param under the prefix a fresh check's probes go under
   * @throws java.io.UncheckedIOException when a fresh check got no answer: nothing is kept
   */
  Taken take(S3Client client, String bucket, String endpoint, String under, Configuration conf) {
    String normalized = StoreCheck.normalized(endpoint);
    String key = keyOf(normalized, bucket);
    HostVerdicts host = host(conf);
    long now = localClock.getAsLong();
    Taken held = known.get(key);
    if (held == null) {
      held = known.get(keyOf(normalized, ANY_BUCKET));
      if (held != null) {
        // Remembered for every bucket of the endpoint: from here on it speaks for this one.
        held =
            new Taken(
                forBucket(held.report(), normalized, bucket),
                held.recordedAtMillis(),
                held.source());
      }
    }
    if (held != null && host.fresh(held.recordedAtMillis(), now)) {
      return new Taken(held.report(), held.recordedAtMillis(), Source.MEMORY);
    }
    Taken[] taken = {null};
    known.compute(
        key,
        (k, current) -> {
          if (current != null && host.fresh(current.recordedAtMillis(), localClock.getAsLong())) {
            taken[0] = new Taken(current.report(), current.recordedAtMillis(), Source.MEMORY);
            return current;
          }
          Taken fresh = takeOutsideMemory(client, bucket, normalized, under, conf, host);
          generation.incrementAndGet();
          taken[0] = fresh;
          logOnce(k, fresh);
          return fresh;
        });
    return taken[0];
  }

  private Taken takeOutsideMemory(
      S3Client client,
      String bucket,
      String endpoint,
      String under,
      Configuration conf,
      HostVerdicts host) {
    String key = keyOf(endpoint, bucket);
    long now = localClock.getAsLong();
    if (!discarded.contains(key)) {
      Optional<VerdictFormat.Recorded> carried =
          JobVerdicts.carried(conf, endpoint, bucket)
              .filter(recorded -> host.fresh(recorded.recordedAtMillis(), now));
      if (carried.isPresent()) {
        return new Taken(carried.get().report(), carried.get().recordedAtMillis(), Source.JOB);
      }
      Optional<VerdictFormat.Recorded> kept = host.read(endpoint, bucket, now);
      if (kept.isPresent()) {
        Optional<String> server = serverNow(client, bucket);
        if (server.isPresent() && kept.get().report().answeredAs(server.get())) {
          return new Taken(kept.get().report(), kept.get().recordedAtMillis(), Source.HOST);
        }
        LOG.info(
            "Store at {} answers as '{}', its verdict kept in {} was made for '{}': checking it"
                + " again",
            endpoint,
            server.orElse("(no answer)"),
            host.directory(),
            kept.get().report().server());
      }
    }
    StoreReport fresh = new StoreCheck(client, bucket, endpoint, under).run(LOG::debug);
    long checkedAt = localClock.getAsLong();
    discarded.remove(key);
    keepOnHost(host, fresh, checkedAt);
    return new Taken(fresh, checkedAt, Source.CHECK);
  }

  private static StoreReport forBucket(StoreReport report, String endpoint, String bucket) {
    return new StoreReport(
        endpoint,
        bucket,
        report.server(),
        report.checkedAtMillis(),
        report.requests(),
        report.findings());
  }

  /**
   * Keeps a verdict on the host only when it leaves every guarantee standing: a refusal may come
   * from one throttled probe, and should cost one process its job, not every process of the host
   * for a day.
   */
  private static void keepOnHost(HostVerdicts host, StoreReport report, long checkedAt) {
    if (report.brokenGuarantees(Set.of()).isEmpty()) {
      host.write(report, checkedAt);
    }
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

  private HostVerdicts host(Configuration conf) {
    HostVerdicts host = HostVerdicts.of(conf);
    hostDirectories.add(host.directory());
    return host;
  }

  /**
   * Keeps a report in memory for every bucket of its endpoint, as a check run by hand or at a
   * store's start.
   */
  void remember(String endpoint, StoreReport report) {
    String key = keyOf(endpoint, ANY_BUCKET);
    Taken taken = new Taken(report, localClock.getAsLong(), Source.CHECK);
    known.put(key, taken);
    generation.incrementAndGet();
    logOnce(key, taken);
  }

  /** Keeps a fresh report in memory and on this host: what {@code writeonce check-store} found. */
  void refresh(StoreReport report, Configuration conf) {
    long now = localClock.getAsLong();
    String key = keyOf(report.endpoint(), report.bucket());
    known.put(key, new Taken(report, now, Source.CHECK));
    generation.incrementAndGet();
    discarded.remove(key);
    HostVerdicts host = host(conf);
    HostVerdicts.discard(host.directory(), report.endpoint(), report.bucket());
    keepOnHost(host, report, now);
  }

  /** The report this process holds for an endpoint, for any bucket. */
  Optional<StoreReport> known(String endpoint) {
    String prefix = StoreCheck.normalized(endpoint) + " ";
    return known.entrySet().stream()
        .filter(e -> e.getKey().startsWith(prefix))
        .map(e -> e.getValue().report())
        .findFirst();
  }

  /**
   * Forgets an endpoint's verdicts, for every bucket, in memory and on this host (the directory the
   * configuration names and every one this process used): the next write checks again.
   */
  void forget(String endpoint, Configuration conf) {
    String normalized = StoreCheck.normalized(endpoint);
    for (String key : Set.copyOf(known.keySet())) {
      if (key.startsWith(normalized + " ")) {
        discard(key);
      }
    }
    Set<Path> directories = new java.util.HashSet<>(hostDirectories);
    directories.add(HostVerdicts.of(conf).directory());
    directories.forEach(directory -> HostVerdicts.discardAll(directory, normalized));
  }

  /** Drops one verdict here and on the hosts this process used, and takes no carried copy. */
  private void discard(String key) {
    Taken dropped = known.remove(key);
    logged.remove(key);
    discarded.add(key);
    // After the removal: a caller that reads the new generation finds the verdict gone.
    generation.incrementAndGet();
    if (dropped != null) {
      for (Path directory : hostDirectories) {
        HostVerdicts.discard(directory, dropped.report().endpoint(), dropped.report().bucket());
      }
    }
  }

  /**
   * Notes the Server header of an answer from an endpoint: a verdict that recorded another one is
   * discarded (each change of header once per process).
   */
  void observedServer(String endpoint, String server) {
    String prefix = StoreCheck.normalized(endpoint) + " ";
    for (Map.Entry<String, Taken> entry : known.entrySet()) {
      StoreReport report = entry.getValue().report();
      if (entry.getKey().startsWith(prefix)
          && !report.answeredAs(server)
          && discardsSeen.add(entry.getKey() + " server " + report.server() + " -> " + server)) {
        LOG.warn(
            "Store at {} now answers as '{}', its verdict was made for '{}': the next write checks"
                + " it again",
            endpoint,
            server,
            report.server());
        discard(entry.getKey());
      }
    }
  }

  /**
   * Discards a bucket's verdict after the store answered a request that rests on a capability in a
   * way the verdict did not predict (an error answer to a condition it honoured); once per
   * capability and process.
   */
  void mispredicted(String endpoint, String bucket, Capability capability, String answer) {
    String key = keyOf(endpoint, bucket);
    Taken held = known.get(key);
    if (held == null) {
      key = keyOf(endpoint, ANY_BUCKET);
      held = known.get(key);
    }
    if (held == null
        || held.report().verdict(capability) != Verdict.HONOURED
        || !discardsSeen.add(key + " " + capability.id())) {
      return;
    }
    LOG.warn(
        "Store at {}: {} was {} when checked, and now the store {}: the next write checks it"
            + " again",
        endpoint,
        capability.id(),
        Verdict.HONOURED.id(),
        answer);
    discard(key);
  }

  private void logOnce(String key, Taken taken) {
    if (!logged.add(key)) {
      return;
    }
    StoreReport report = taken.report();
    LOG.info(
        "Store at {} ({}), bucket {}, {}: {}",
        report.endpoint(),
        report.server().isEmpty() ? "no Server header" : report.server(),
        report.bucket(),
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
          report.endpoint(),
          finding.capability().title(),
          finding.verdict().id(),
          finding.answer(),
          finding.capability().withoutIt());
    }
  }
}
