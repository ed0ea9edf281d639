package dev.writeonce.core.store.check;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.store.S3StoreGateway;
import dev.writeonce.core.testing.s3.Handling;
import dev.writeonce.core.testing.s3.MemoryS3;
import dev.writeonce.core.testing.s3.MemoryS3Client;
import dev.writeonce.core.testing.s3.RequestHook;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
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
    StoreReport driver = take(newProcess()).taken().report();
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
    StoreReport driver = take(newProcess()).taken().report();
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
}
