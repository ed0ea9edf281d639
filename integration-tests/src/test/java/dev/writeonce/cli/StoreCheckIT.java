package dev.writeonce.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.writeonce.core.errors.UntrustedStoreException;
import dev.writeonce.core.store.check.Capability;
import dev.writeonce.core.store.check.StoreReport;
import dev.writeonce.core.store.check.StoreTrust;
import dev.writeonce.core.store.check.Verdict;
import dev.writeonce.teststore.BucketView;
import dev.writeonce.teststore.EachStore;
import dev.writeonce.teststore.S3Api;
import dev.writeonce.teststore.StoreChecks;
import dev.writeonce.teststore.StoreRelay;
import dev.writeonce.teststore.StoreRelay.Alteration;
import dev.writeonce.teststore.StoreRelay.Request;
import dev.writeonce.teststore.TestStore;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code writeonce check-store} on each real store, and, capability by capability, a store that
 * silently ignores a condition, played by a proxy that drops the header (signing the request again)
 * or fakes what the store did: the check detects it, and the committers refuse the store or take
 * their documented fallback.
 */
@EachStore
class StoreCheckIT {

  private static final ObjectMapper JSON = new ObjectMapper();

  private final TestStore store;

  StoreCheckIT(TestStore store) {
    this.store = store;
  }

  @TempDir Path scratch;

  private StoreRelay proxy;
  private String bucket;
  private BucketView view;

  @BeforeEach
  void startProxy() throws Exception {
    proxy = StoreRelay.start(store.endpoint());
    Configuration settings = store.configure(new Configuration(false));
    proxy.signingWith(
        settings.get("fs.s3a.access.key"),
        settings.get("fs.s3a.secret.key"),
        settings.get("fs.s3a.endpoint.region"));
    // The proxy plays a store of its own: the committers check it before they trust it.
    StoreTrust.forget(proxy.endpoint().toString());
    bucket = store.newBucket("check");
    view = new BucketView(store, bucket);
  }

  @AfterEach
  void stopProxy() throws Exception {
    StoreTrust.forget(proxy.endpoint().toString());
    proxy.close();
    FileSystem.closeAll();
  }

  // ---- the check on the real store ----

  @Test
  void checkStoreReportsEveryCapabilityAsTheStoreTreatsItAndLeavesNothingBehind() throws Exception {
    Run run = checkStore(store.endpoint().toString(), "--json");

    assertThat(run.exit()).as(run.output()).isEqualTo(Main.OK);
    JsonNode report = JSON.readTree(run.stdout());
    assertThat(report.get("guaranteesHold").asBoolean()).isTrue();
    Map<String, String> verdicts = new TreeMap<>();
    report
        .get("capabilities")
        .forEach(c -> verdicts.put(c.get("id").asText(), c.get("verdict").asText()));
    assertThat(verdicts).hasSize(Capability.values().length);
    // What each store does with a DELETE whose If-Match names another ETag.
    String expected = store.name().equals("seaweedfs") ? "honoured" : "ignored";
    if (!store.name().equals("external")) {
      assertThat(verdicts).containsEntry("delete-if-match", expected);
    }
    for (Capability capability : Capability.values()) {
      if (capability.reliance() == Capability.Reliance.REQUIRED) {
        assertThat(verdicts).containsEntry(capability.id(), "honoured");
      }
    }
    assertThat(report.get("probeRequests").asInt()).isBetween(50, 80);
    assertThat(view.keys("")).as("the probes are removed").isEmpty();
    if (StoreChecks.of(store).verdict(Capability.LIST_UPLOADS_BY_PREFIX) == Verdict.HONOURED) {
      assertThat(view.openUploadsUnder("")).as("no upload is left open").isEmpty();
    }
  }

  @Test
  void theReportPrintsATableForPeopleWithTheSameExitCode() throws Exception {
    Run run = checkStore(store.endpoint().toString());

    assertThat(run.exit()).as(run.output()).isEqualTo(Main.OK);
    assertThat(run.stdout())
        .contains("CAPABILITY", "put-if-none-match", "honoured", "delete-if-match")
        .contains("every guarantee holds");
  }

  // ---- a store that ignores a condition a guarantee rests on: the committers refuse it ----

  @Test
  void ignoredIfNoneMatchOnPutIsDetectedAndTheCommitterRefusesTheStore() throws Exception {
    proxy.alter(Request::isPutObject, new Alteration.DropHeader("If-None-Match"));
    assertRefused(Capability.PUT_IF_NONE_MATCH);
  }

  @Test
  void ignoredIfMatchOnPutIsDetectedAndTheCommitterRefusesTheStore() throws Exception {
    proxy.alter(Request::isPutObject, new Alteration.DropHeader("If-Match"));
    assertRefused(Capability.PUT_IF_MATCH);
  }

  @Test
  void aCompletionThatSucceedsAfterItsAbortIsDetectedAndTheCommitterRefusesTheStore()
      throws Exception {
    // The abort never reaches the store: the upload stays completable, as on a store that
    // answers an abort and keeps the upload.
    proxy.alter(
        r -> r.operation() == S3Api.ABORT_MULTIPART_UPLOAD && r.target().contains("aborted"),
        new Alteration.FakeAnswer(204));
    assertRefused(Capability.COMPLETE_AFTER_ABORT);
  }

  @Test
  void aListingThatMissesAFreshWriteIsDetectedAndTheCommitterRefusesTheStore() throws Exception {
    proxy.alter(
        listingOf("listed"),
        new Alteration.RewriteAnswer(body -> body.replaceAll("(?s)<Contents>.*?</Contents>", "")));
    assertRefused(Capability.LIST_AFTER_WRITE);
  }

  @Test
  void aListingThatKeepsADeletedObjectIsDetectedAndTheCommitterRefusesTheStore() throws Exception {
    proxy.alter(
        r -> r.method().equals("DELETE") && r.path().endsWith("/listed/one"),
        new Alteration.FakeAnswer(204));
    assertRefused(Capability.LIST_AFTER_DELETE);
  }

  @Test
  void aPageThatEndsEarlyWithoutSayingSoIsDetectedAndTheCommitterRefusesTheStore()
      throws Exception {
    proxy.alter(
        listingOf("paged"),
        new Alteration.RewriteAnswer(
            body ->
                body.replace(
                    "<IsTruncated>true</IsTruncated>", "<IsTruncated>false</IsTruncated>")));
    assertRefused(Capability.DELIMITED_PAGES);
  }

  @Test
  void aCheckThatGetsNoAnswerIsNeverRememberedAndTheNextJobChecksAgain() throws Exception {
    proxy.inject(r -> true, StoreRelay.Fault.RESET_BEFORE, 10_000);
    Run run = checkStore(proxy.endpoint().toString());
    assertThat(run.exit()).as(run.output()).isEqualTo(Main.FAILED);

    assertThatThrownBy(() -> runJob(throughProxy()))
        .hasMessageContaining("the job wrote nothing")
        .hasMessageContaining("got no answer from the store");
    assertThat(StoreTrust.known(proxy.endpoint().toString())).isEmpty();

    proxy.heal();
    runJob(throughProxy());
    assertThat(StoreTrust.known(proxy.endpoint().toString())).isPresent();
    assertThat(view.keys("out/part-")).hasSize(CommitCrashDriver.TASKS);
  }

  // ---- a store that ignores a condition with a fallback: the committers take it ----

  @Test
  void ignoredIfMatchOnDeleteIsDetectedAndTheJobCommitsThroughTheReadBackFallback()
      throws Exception {
    proxy.alter(r -> r.method().equals("DELETE"), new Alteration.DropHeader("If-Match"));
    assertFallback(Capability.DELETE_IF_MATCH);
  }

  @Test
  void aCompletionAnsweredWithoutItsEtagIsDetectedAndTheJobConfirmsByHead() throws Exception {
    proxy.alter(
        Request::isCompleteUpload,
        new Alteration.RewriteAnswer(
            body -> body.replaceAll("<ETag>[^<]*</ETag>", "<ETag></ETag>")));
    assertFallback(Capability.COMPLETED_ETAG);
  }

  @Test
  void uploadsMissingFromAPrefixListingAreDetectedAndLeftToTheLifecycleRule() throws Exception {
    proxy.alter(
        r -> r.operation() == S3Api.LIST_MULTIPART_UPLOADS && r.target().contains("dir%2F"),
        new Alteration.RewriteAnswer(body -> body.replaceAll("(?s)<Upload>.*?</Upload>", "")));
    assertFallback(Capability.LIST_UPLOADS_BY_PREFIX);
  }

  @Test
  void ignoredIfNoneMatchOnCompleteIsDetectedAndChangesNothingTheLibraryDoes() throws Exception {
    proxy.alter(Request::isCompleteUpload, new Alteration.DropHeader("If-None-Match"));
    assertFallback(Capability.COMPLETE_IF_NONE_MATCH);
  }

  @Test
  void aCapabilityTrustedByTheUserLetsTheJobRunAtTheirOwnRisk() throws Exception {
    proxy.alter(Request::isPutObject, new Alteration.DropHeader("If-Match"));
    Configuration conf = throughProxy();
    conf.set(StoreTrust.TRUST, Capability.PUT_IF_MATCH.id());

    runJob(conf);

    assertThat(view.keys("out/part-")).hasSize(CommitCrashDriver.TASKS);
    assertThat(view.keys("out/")).contains("out/_SUCCESS");
  }

  @Test
  void theShimRefusesToTurnARenameIntoCompletionsOnAStoreThatIgnoresIfNoneMatch() throws Exception {
    proxy.alter(Request::isPutObject, new Alteration.DropHeader("If-None-Match"));
    Configuration conf = throughProxy();
    conf.set("fs.s3a.impl", "dev.writeonce.shim.RenameShimFileSystem");
    store.emptyObjectSettings().forEach(conf::set);
    org.apache.hadoop.fs.Path attempt =
        new org.apache.hadoop.fs.Path(view.uri("out/_temporary/0/_temporary/attempt_1/part-0"));
    FileSystem fs = attempt.getFileSystem(conf);
    try (var out = fs.create(attempt)) {
      out.write("row\n".getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    assertThatThrownBy(
            () -> fs.rename(attempt, new org.apache.hadoop.fs.Path(view.uri("out/part-0"))))
        .isInstanceOf(UntrustedStoreException.class)
        .hasMessageContaining("rename shim")
        .hasMessageContaining(Capability.PUT_IF_NONE_MATCH.id());
    assertThat(view.keys("out/part-")).as("nothing published").isEmpty();
  }

  // ---- helpers ----

  private static Predicate<Request> listingOf(String dir) {
    return r ->
        r.operation() == S3Api.LIST_OBJECTS
            && r.has("list-type=2")
            && r.target().contains("%2F" + dir + "%2F");
  }

  /** The check sees the capability broken; a job through the proxy is refused, nothing written. */
  private void assertRefused(Capability capability) throws Exception {
    Run run = checkStore(proxy.endpoint().toString(), "--json");
    assertThat(proxy.altered()).as("the proxy altered a probe").isPositive();
    assertThat(run.exit()).as(run.output()).isEqualTo(CheckStoreCommand.UNTRUSTED);
    JsonNode found = capability(JSON.readTree(run.stdout()), capability);
    assertThat(found.get("verdict").asText()).isEqualTo(Verdict.IGNORED.id());
    assertThat(found.get("breaksGuarantee").asBoolean()).isTrue();
    assertThat(run.stderr()).contains(capability.id(), StoreTrust.TRUST);

    StoreTrust.forget(proxy.endpoint().toString());
    assertThatThrownBy(() -> runJob(throughProxy()))
        .isInstanceOf(UntrustedStoreException.class)
        .hasMessageContaining(capability.id())
        .hasMessageContaining(StoreTrust.TRUST + "=" + capability.id())
        .hasMessageContaining("nothing written");
    assertThat(view.keys("out/")).as("nothing of the job in the destination").isEmpty();
  }

  /** The check sees the capability not honoured, without refusing; a job through the proxy runs. */
  private void assertFallback(Capability capability) throws Exception {
    Run run = checkStore(proxy.endpoint().toString(), "--json");
    assertThat(proxy.altered()).as("the proxy altered a probe").isPositive();
    assertThat(run.exit()).as(run.output()).isEqualTo(Main.OK);
    JsonNode found = capability(JSON.readTree(run.stdout()), capability);
    assertThat(found.get("verdict").asText()).isIn(Verdict.IGNORED.id(), Verdict.REFUSED.id());
    assertThat(found.get("breaksGuarantee").asBoolean()).isFalse();

    StoreTrust.forget(proxy.endpoint().toString());
    runJob(throughProxy());
    StoreReport report = StoreTrust.known(proxy.endpoint().toString()).orElseThrow();
    assertThat(report.verdict(capability)).isIn(Verdict.IGNORED, Verdict.REFUSED);
    List<String> expected = new ArrayList<>();
    for (int task = 0; task < CommitCrashDriver.TASKS; task++) {
      expected.add("out/" + CommitCrashDriver.fileName(task));
    }
    assertThat(view.keys("out/part-")).containsExactlyElementsOf(expected);
    assertThat(view.keys("out/")).contains("out/_SUCCESS");
    assertThat(view.openUploads(expected)).isEmpty();
  }

  private static JsonNode capability(JsonNode report, Capability capability) {
    for (JsonNode entry : report.get("capabilities")) {
      if (entry.get("id").asText().equals(capability.id())) {
        return entry;
      }
    }
    throw new AssertionError("no " + capability.id() + " in " + report);
  }

  private Configuration throughProxy() {
    return CommitCrashDriver.throughProxy(store, proxy.endpoint(), scratch);
  }

  private void runJob(Configuration conf) throws Exception {
    CommitCrashDriver.runJob(conf, view.uri("out/"));
  }

  private record Run(int exit, String stdout, String stderr) {
    String output() {
      return stdout + stderr;
    }
  }

  private Run checkStore(String endpoint, String... more) {
    Map<String, String> settings = new TreeMap<>();
    store.configure(new Configuration(false)).forEach(e -> settings.put(e.getKey(), e.getValue()));
    settings.put("fs.s3a.endpoint", endpoint);
    settings.put("fs.s3a.impl.disable.cache", "true");
    List<String> args = new ArrayList<>(List.of("check-store", view.uri("table/")));
    settings.forEach((key, value) -> args.add("--conf=" + key + "=" + value));
    args.addAll(List.of(more));
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int exit =
        Main.run(
            new PrintWriter(out, true), new PrintWriter(err, true), args.toArray(new String[0]));
    return new Run(exit, out.toString(), err.toString());
  }
}
