package dev.writeonce.core.store.check;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.errors.UntrustedStoreException;
import dev.writeonce.core.store.S3StoreGateway;
import dev.writeonce.core.testing.s3.Handling;
import dev.writeonce.core.testing.s3.MemoryS3;
import dev.writeonce.core.testing.s3.MemoryS3Client;
import dev.writeonce.core.testing.s3.RequestHook;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * Where a process takes its verdict on a store from. Each {@link StoreVerdicts} instance is one
 * process; the host's disk is a temporary directory; the store is the in-memory S3, whose request
 * counts say what each process paid.
 */
class StoreVerdictsTest {

  private static final String ENDPOINT = "http://store.test:9000";
  private static final String BUCKET = "b";

  @TempDir Path host;

  private final MemoryS3 s3 = new MemoryS3();
  private final MemoryS3Client client = new MemoryS3Client(s3, RequestHook.NONE);
  private final AtomicLong localClock = new AtomicLong(System.currentTimeMillis());
  private Configuration conf;

  @BeforeEach
  void setUp() {
    s3.createBucket(BUCKET);
    s3.setServerHeader("MinIO");
    conf = new Configuration(false);
    conf.set(StoreTrust.CACHE_DIR, host.resolve("verdicts").toString());
    conf.set(StoreTrust.CACHE_TTL, "1d");
  }

  private StoreVerdicts newProcess() {
    return new StoreVerdicts(localClock::get);
  }

  private long requests() {
    return s3.requestCounts().values().stream().mapToLong(Long::longValue).sum();
  }

  /** One process taking the verdict: its source, and the requests it sent. */
  private record Take(StoreVerdicts.Taken taken, long requests) {}

  private Take take(StoreVerdicts process) {
    long before = requests();
    StoreVerdicts.Taken taken = process.take(client, BUCKET, ENDPOINT, "t/", conf);
    return new Take(taken, requests() - before);
  }

  @Test
  void theFirstProcessOfAHostChecksAndTheNextTakesItsVerdictWithOneHeadBucket() {
    Take first = take(newProcess());
    Take next = take(newProcess());

    assertThat(first.taken().source()).isEqualTo(StoreVerdicts.Source.CHECK);
    assertThat(first.requests()).isEqualTo(first.taken().report().requests()).isGreaterThan(50);
    assertThat(next.taken().source()).isEqualTo(StoreVerdicts.Source.HOST);
    assertThat(next.requests()).isEqualTo(1);
    assertThat(next.taken().report()).isEqualTo(first.taken().report());
    assertThat(s3.keys(BUCKET)).as("the probes are gone").isEmpty();
  }

  @Test
  void aProcessTakesItsVerdictFromMemoryWithNoRequest() {
    StoreVerdicts process = newProcess();
    take(process);

    Take again = take(process);

    assertThat(again.taken().source()).isEqualTo(StoreVerdicts.Source.MEMORY);
    assertThat(again.requests()).isZero();
  }

  @Test
  void aChangedServerHeaderMakesTheNextProcessCheckAfresh() {
    take(newProcess());
    s3.setServerHeader("MinIO/RELEASE.2026-10-01");

    Take next = take(newProcess());

    assertThat(next.taken().source()).isEqualTo(StoreVerdicts.Source.CHECK);
    assertThat(next.requests()).isEqualTo(1 + next.taken().report().requests());
    assertThat(next.taken().report().server()).isEqualTo("MinIO/RELEASE.2026-10-01");
    assertThat(take(newProcess()).requests()).as("the fresh verdict is kept").isEqualTo(1);
  }

  @Test
  void aVerdictOlderThanItsTtlIsCheckedAgain() {
    conf.set(StoreTrust.CACHE_TTL, "2h");
    take(newProcess());
    localClock.addAndGet(TimeUnit.HOURS.toMillis(2) - 1);
    assertThat(take(newProcess()).taken().source()).isEqualTo(StoreVerdicts.Source.HOST);

    localClock.addAndGet(2);

    assertThat(take(newProcess()).taken().source()).isEqualTo(StoreVerdicts.Source.CHECK);
  }

  @Test
  void aTtlOfZeroKeepsNothingOnTheHost() {
    conf.set(StoreTrust.CACHE_TTL, "0");
    take(newProcess());

    assertThat(take(newProcess()).taken().source()).isEqualTo(StoreVerdicts.Source.CHECK);
    assertThat(host.resolve("verdicts")).doesNotExist();
  }

  @Test
  void aVerdictTheJobCarriesIsTakenWithNoRequestAndOnlyForItsEndpoint() {
    StoreVerdicts.Taken driver = take(newProcess()).taken();
    Configuration job = new Configuration(conf);
    job.set(StoreTrust.CACHE_TTL, "0");
    JobVerdicts.carry(job, driver);
    conf = job;

    Take executor = take(newProcess());

    assertThat(executor.taken().source()).isEqualTo(StoreVerdicts.Source.JOB);
    assertThat(executor.requests()).isZero();
    Take elsewhere =
        new Take(
            newProcess().take(client, BUCKET, "http://other.test:9000", "t/", job),
            /* not counted */ 0);
    assertThat(elsewhere.taken().source()).isEqualTo(StoreVerdicts.Source.CHECK);
  }

  @Test
  void aVerdictCopiedIntoALaterJobAgesLikeAKeptOne() {
    StoreVerdicts.Taken driver = take(newProcess()).taken();
    Configuration job = new Configuration(conf);
    job.set(StoreTrust.CACHE_TTL, "0");
    JobVerdicts.carry(job, driver);
    conf = job;

    localClock.addAndGet(TimeUnit.DAYS.toMillis(1) + TimeUnit.MINUTES.toMillis(1));

    assertThat(take(newProcess()).taken().source()).isEqualTo(StoreVerdicts.Source.CHECK);
  }

  @Test
  void aVerdictFileOthersMayWriteIsNeverTaken() throws Exception {
    take(newProcess());
    try (Stream<Path> files = Files.list(host.resolve("verdicts"))) {
      for (Path file : files.toList()) {
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-rw-rw-"));
      }
    }

    assertThat(take(newProcess()).taken().source()).isEqualTo(StoreVerdicts.Source.CHECK);
  }

  @Test
  void aVerdictWrittenByAnotherReleaseOfTheCheckIsCheckedAgain() throws Exception {
    take(newProcess());
    try (Stream<Path> files = Files.list(host.resolve("verdicts"))) {
      for (Path file : files.toList()) {
        Files.writeString(
            file, Files.readString(file).replace("\"delimited-pages\"", "\"a-future-probe\""));
      }
    }

    assertThat(take(newProcess()).taken().source()).isEqualTo(StoreVerdicts.Source.CHECK);
  }

  @Test
  void anAnswerFromAnotherServerDiscardsTheVerdictInMemoryAndOnTheHost() {
    StoreVerdicts process = newProcess();
    take(process);

    process.observedServer(ENDPOINT, "MinIO");
    assertThat(process.known(ENDPOINT)).isPresent();
    process.observedServer(ENDPOINT, "Ceph Object Gateway");

    assertThat(process.known(ENDPOINT)).isEmpty();
    assertThat(take(newProcess()).taken().source()).isEqualTo(StoreVerdicts.Source.CHECK);
  }

  @Test
  void aConditionalWriteRefusedWhereTheVerdictSaidHonouredDiscardsTheVerdict() {
    // A store that now answers a write on key "t/lock" with 501, as one that does not implement
    // the condition.
    MemoryS3Client refusing =
        new MemoryS3Client(
            s3,
            request -> {
              if (request.operation().equals("PutObject") && "t/lock".equals(request.key())) {
                throw (S3Exception)
                    S3Exception.builder()
                        .statusCode(501)
                        .awsErrorDetails(
                            AwsErrorDetails.builder()
                                .errorCode("NotImplemented")
                                .errorMessage("A header you provided implies functionality")
                                .build())
                        .build();
              }
              return Handling.PROCEED;
            });
    S3StoreGateway gateway = S3StoreGateway.forClient(refusing, BUCKET);
    String endpoint = StoreCheck.endpointOf(refusing, null);
    StoreReport report = take(newProcess()).taken().report();
    StoreTrust.remember(endpoint, report);
    try {
      assertThatThrownBy(() -> gateway.putObject("t/lock", new byte[] {1}, true))
          .isInstanceOf(StoreException.class);

      assertThat(StoreTrust.known(endpoint)).isEmpty();
    } finally {
      StoreTrust.forget(endpoint);
    }
  }

  @Test
  void aConditionalWriteThatFailsItsConditionKeepsTheVerdict() throws Exception {
    S3StoreGateway gateway = S3StoreGateway.forClient(client, BUCKET);
    String endpoint = StoreCheck.endpointOf(client, null);
    StoreTrust.remember(endpoint, take(newProcess()).taken().report());
    try {
      gateway.putObject("t/lock", new byte[] {1}, true);
      assertThatThrownBy(() -> gateway.putObject("t/lock", new byte[] {2}, true))
          .isInstanceOf(StoreException.class);

      assertThat(StoreTrust.known(endpoint)).isPresent();
    } finally {
      StoreTrust.forget(endpoint);
    }
  }

  // ---- What a hostile review of the verdicts found, each kept as the behaviour that holds now.

  /**
   * A client of a store that ignores If-None-Match on PUT (a 200 and an overwrite) in the buckets
   * the predicate names.
   */
  private static S3Client ignoringIfNoneMatch(S3Client delegate, Predicate<String> inBucket) {
    return (S3Client)
        Proxy.newProxyInstance(
            S3Client.class.getClassLoader(),
            new Class<?>[] {S3Client.class},
            (proxy, method, args) -> {
              if (method.getName().equals("putObject")
                  && args != null
                  && args.length == 2
                  && args[1] instanceof RequestBody body) {
                PutObjectRequest request;
                if (args[0] instanceof PutObjectRequest built) {
                  request = built;
                } else {
                  PutObjectRequest.Builder builder = PutObjectRequest.builder();
                  @SuppressWarnings("unchecked")
                  Consumer<PutObjectRequest.Builder> build =
                      (Consumer<PutObjectRequest.Builder>) args[0];
                  build.accept(builder);
                  request = builder.build();
                }
                return delegate.putObject(
                    inBucket.test(request.bucket())
                        ? request.toBuilder().ifNoneMatch(null).build()
                        : request,
                    body);
              }
              try {
                return method.invoke(delegate, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
            });
  }

  private static S3Exception s3Error(int status, String code) {
    return (S3Exception)
        S3Exception.builder()
            .statusCode(status)
            .awsErrorDetails(AwsErrorDetails.builder().errorCode(code).errorMessage(code).build())
            .build();
  }

  @Test
  void aVerdictMadeOnOneBucketIsNeverTakenForAnotherBucketOfTheEndpoint() {
    s3.createBucket("b2");
    S3Client b2Ignores = ignoringIfNoneMatch(client, "b2"::equals);
    newProcess().take(b2Ignores, BUCKET, ENDPOINT, "t/", conf);

    StoreVerdicts.Taken b2 = newProcess().take(b2Ignores, "b2", ENDPOINT, "t/", conf);

    assertThat(b2.source()).isEqualTo(StoreVerdicts.Source.CHECK);
    assertThat(b2.report().bucket()).isEqualTo("b2");
    assertThatThrownBy(() -> StoreTrust.refuseBroken(b2.report(), Set.of(), "job on b2"))
        .isInstanceOf(UntrustedStoreException.class)
        .hasMessageContaining("put-if-none-match");
  }

  @Test
  void aVerdictDiscardedForAnotherServerHeaderIsNotTakenBackFromTheJob() {
    StoreVerdicts.Taken driver = take(newProcess()).taken();
    Configuration job = new Configuration(conf);
    JobVerdicts.carry(job, driver);
    conf = job;
    StoreVerdicts executor = newProcess();
    assertThat(take(executor).taken().source()).isEqualTo(StoreVerdicts.Source.JOB);

    s3.setServerHeader("Ceph Object Gateway (squid)");
    executor.observedServer(ENDPOINT, "Ceph Object Gateway (squid)");
    Take again = take(executor);

    assertThat(again.taken().source()).isEqualTo(StoreVerdicts.Source.CHECK);
    assertThat(again.requests()).isGreaterThan(50);
    assertThat(again.taken().report().server()).isEqualTo("Ceph Object Gateway (squid)");
  }

  @Test
  void aSecondChangeOfServerHeaderInOneProcessIsNoticedToo() {
    StoreVerdicts process = newProcess();
    take(process);
    s3.setServerHeader("MinIO-behind-proxy");
    process.observedServer(ENDPOINT, "MinIO-behind-proxy");
    assertThat(take(process).taken().source()).isEqualTo(StoreVerdicts.Source.CHECK);

    s3.setServerHeader("SeaweedFS 3.80");
    process.observedServer(ENDPOINT, "SeaweedFS 3.80");

    assertThat(process.known(ENDPOINT)).isEmpty();
    assertThat(take(process).taken().report().server()).isEqualTo("SeaweedFS 3.80");
  }

  @Test
  void aStoreWhoseNodesAnswerWithTwoServerHeadersCostsOneCheckPerHost() {
    // A rolling upgrade behind a round-robin balancer: answers alternate between two headers.
    AtomicInteger sequence = new AtomicInteger();
    MemoryS3Client balanced =
        new MemoryS3Client(
            s3,
            request -> {
              s3.setServerHeader(
                  sequence.getAndIncrement() % 2 == 0
                      ? "Ceph Object Gateway (reef)"
                      : "Ceph Object Gateway (squid)");
              return Handling.PROCEED;
            });
    long before = requests();
    long checkCost = 0;
    for (int i = 0; i < 20; i++) {
      StoreVerdicts process = newProcess();
      StoreVerdicts.Taken taken = process.take(balanced, BUCKET, ENDPOINT, "t/", conf);
      checkCost = Math.max(checkCost, taken.report().requests());
      // The job's writes are answered by both nodes.
      process.observedServer(ENDPOINT, "Ceph Object Gateway (reef)");
      process.observedServer(ENDPOINT, "Ceph Object Gateway (squid)");
      process.take(balanced, BUCKET, ENDPOINT, "t/", conf);
    }

    assertThat(requests() - before).isEqualTo(checkCost + 19 * 1);
  }

  @Test
  void aCarriedVerdictAgesFromItsCheckNotFromWhenItWasCarried() {
    localClock.addAndGet(-TimeUnit.HOURS.toMillis(23));
    take(newProcess());
    localClock.addAndGet(TimeUnit.HOURS.toMillis(23));
    StoreVerdicts.Taken driver = take(newProcess()).taken();
    assertThat(driver.source()).isEqualTo(StoreVerdicts.Source.HOST);
    Configuration job = new Configuration(conf);
    JobVerdicts.carry(job, driver);
    conf = job;

    localClock.addAndGet(TimeUnit.HOURS.toMillis(2));

    assertThat(take(newProcess()).taken().source()).isEqualTo(StoreVerdicts.Source.CHECK);
  }

  @Test
  void aLongRunningProcessTakesItsVerdictAgainOnceItIsOlderThanTheTtl() {
    StoreVerdicts driver = newProcess();
    take(driver);
    localClock.addAndGet(TimeUnit.DAYS.toMillis(10));

    StoreVerdicts.Taken later = take(driver).taken();

    assertThat(later.source()).isEqualTo(StoreVerdicts.Source.CHECK);
    Configuration job = new Configuration(conf);
    JobVerdicts.carry(job, later);
    conf = job;
    assertThat(take(newProcess()).taken().recordedAtMillis()).isEqualTo(localClock.get());
  }

  @Test
  void aRefusalFromOneThrottledProbeIsNotKeptForTheHostsOtherProcesses() {
    AtomicBoolean throttledOnce = new AtomicBoolean();
    MemoryS3Client throttling =
        new MemoryS3Client(
            s3,
            request ->
                request.operation().equals("PutObject")
                        && request.key().endsWith("/created")
                        && throttledOnce.compareAndSet(false, true)
                    ? Handling.FAIL_UNSENT
                    : Handling.PROCEED);
    StoreVerdicts.Taken first = newProcess().take(throttling, BUCKET, ENDPOINT, "t/", conf);
    assertThat(first.report().verdict(Capability.PUT_IF_NONE_MATCH)).isEqualTo(Verdict.REFUSED);

    StoreVerdicts.Taken later = take(newProcess()).taken();

    assertThat(later.source()).isEqualTo(StoreVerdicts.Source.CHECK);
    assertThat(later.report().brokenGuarantees(Set.of())).isEmpty();
  }

  @Test
  void anExpiredTokenOnAConditionalWriteKeepsTheVerdict() {
    String endpoint = StoreCheck.endpointOf(client, null);
    StoreTrust.remember(endpoint, take(newProcess()).taken().report());
    try {
      MemoryS3Client expired =
          new MemoryS3Client(
              s3,
              request -> {
                if (request.operation().equals("PutObject") && "t/lock".equals(request.key())) {
                  throw s3Error(400, "ExpiredToken");
                }
                return Handling.PROCEED;
              });
      assertThatThrownBy(
              () ->
                  S3StoreGateway.forClient(expired, BUCKET).putObject("t/lock", new byte[1], true))
          .isInstanceOf(StoreException.class);

      assertThat(StoreTrust.known(endpoint)).isPresent();
    } finally {
      StoreTrust.forget(endpoint);
    }
  }

  @Test
  void theVerdictATaskCarriesIsSmall() {
    StoreVerdicts.Taken taken = take(newProcess()).taken();
    Configuration job = new Configuration(false);

    JobVerdicts.carry(job, taken);

    String carried = job.getRaw(JobVerdicts.nameOf(ENDPOINT, BUCKET));
    assertThat(carried.length()).isLessThan(800);
    assertThat(VerdictFormat.read(carried).orElseThrow().report().findings())
        .extracting(StoreReport.Finding::verdict)
        .isEqualTo(taken.report().findings().stream().map(StoreReport.Finding::verdict).toList());
  }

  @Test
  void forgetRemovesTheVerdictKeptOnTheHostWhicheverProcessTookIt() {
    take(newProcess());

    newProcess().forget(ENDPOINT, conf);

    StoreVerdicts operator = new StoreVerdicts(localClock::get);
    assertThat(take(operator).taken().source()).isEqualTo(StoreVerdicts.Source.CHECK);
  }

  @Test
  void spellingsOfOneEndpointShareItsVerdict() {
    take(newProcess());

    for (String spelling :
        List.of("http://STORE.test:9000", "HTTP://store.test:9000/", "http://store.test:9000//")) {
      assertThat(newProcess().take(client, BUCKET, spelling, "t/", conf).source())
          .as(spelling)
          .isEqualTo(StoreVerdicts.Source.HOST);
    }
    assertThat(StoreCheck.normalized("https://Store.Test:443/")).isEqualTo("https://store.test");
    assertThat(StoreCheck.normalized("http://store.test:80")).isEqualTo("http://store.test");
  }

  @Test
  void aSymlinkedVerdictFileIsNotTaken() throws Exception {
    take(newProcess());
    Path dir = host.resolve("verdicts");
    Path file;
    try (Stream<Path> files = Files.list(dir)) {
      file = files.filter(p -> p.toString().endsWith(".json")).findFirst().orElseThrow();
    }
    Path elsewhere = host.resolve("elsewhere.json");
    Files.move(file, elsewhere);
    Files.createSymbolicLink(file, elsewhere);

    assertThat(take(newProcess()).taken().source()).isEqualTo(StoreVerdicts.Source.CHECK);
  }

  @Test
  void aLocalClockThatWentBackTakesNoVerdictFromTheFuture() {
    take(newProcess());
    localClock.addAndGet(-TimeUnit.HOURS.toMillis(1));

    assertThat(take(newProcess()).taken().source()).isEqualTo(StoreVerdicts.Source.CHECK);
  }

  @Test
  void aTruncatedVerdictOrOneForAnotherEndpointIsNotTaken() throws Exception {
    take(newProcess());
    Path file;
    try (Stream<Path> files = Files.list(host.resolve("verdicts"))) {
      file = files.filter(p -> p.toString().endsWith(".json")).findFirst().orElseThrow();
    }
    String whole = Files.readString(file);
    Files.writeString(file, whole.substring(0, whole.length() / 2));
    assertThat(take(newProcess()).taken().source()).isEqualTo(StoreVerdicts.Source.CHECK);
    whole = Files.readString(file);
    Files.writeString(file, whole.replace(ENDPOINT, "http://other.test:9000"));
    assertThat(take(newProcess()).taken().source()).isEqualTo(StoreVerdicts.Source.CHECK);

    Configuration job = new Configuration(conf);
    job.set(
        JobVerdicts.nameOf("http://other.test:9000", BUCKET),
        job.getRaw(JobVerdicts.nameOf(ENDPOINT, BUCKET)) == null
            ? VerdictFormat.write(take(newProcess()).taken().report(), localClock.get(), false)
            : "");
    assertThat(JobVerdicts.carried(job, "http://other.test:9000", BUCKET)).isEmpty();
  }

  @Test
  void aRefusalIsRefusedWhenItComesFromTheJob() {
    S3Client ignores = ignoringIfNoneMatch(client, b -> true);
    StoreVerdicts.Taken driver = newProcess().take(ignores, BUCKET, ENDPOINT, "t/", conf);
    Configuration job = new Configuration(conf);
    JobVerdicts.carry(job, driver);

    StoreVerdicts.Taken task = newProcess().take(ignores, BUCKET, ENDPOINT, "t/", job);

    assertThat(task.source()).isEqualTo(StoreVerdicts.Source.JOB);
    assertThatThrownBy(() -> StoreTrust.refuseBroken(task.report(), Set.of(), "task"))
        .isInstanceOf(UntrustedStoreException.class);
    assertThat(host.resolve("verdicts")).as("a refusal is never kept on the host").doesNotExist();
  }

  @Test
  void aReportRememberedForEveryBucketTravelsAsTheVerdictOfTheBucketWritten() {
    StoreVerdicts driver = newProcess();
    driver.remember(ENDPOINT, take(newProcess()).taken().report());

    StoreVerdicts.Taken taken = driver.take(client, "b2", ENDPOINT, "t/", conf);
    Configuration job = new Configuration(false);
    JobVerdicts.carry(job, taken);

    assertThat(taken.source()).isEqualTo(StoreVerdicts.Source.MEMORY);
    assertThat(JobVerdicts.carried(job, ENDPOINT, "b2")).isPresent();
    assertThat(JobVerdicts.carried(job, ENDPOINT, BUCKET)).isEmpty();
  }

  @Test
  void theGenerationChangesWithEveryVerdictTakenOrDiscardedAndNotWithOneFromMemory() {
    StoreVerdicts process = newProcess();
    long start = process.generation();
    take(process);
    long taken = process.generation();
    take(process);
    assertThat(process.generation()).as("from memory").isEqualTo(taken);

    process.observedServer(ENDPOINT, "Ceph Object Gateway (squid)");

    assertThat(taken).isGreaterThan(start);
    assertThat(process.generation()).isGreaterThan(taken);
  }
}
