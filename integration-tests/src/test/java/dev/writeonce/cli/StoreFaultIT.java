package dev.writeonce.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.teststore.BucketView;
import dev.writeonce.teststore.EachStore;
import dev.writeonce.teststore.StoreRelay;
import dev.writeonce.teststore.StoreRelay.Fault;
import dev.writeonce.teststore.StoreRelay.Request;
import dev.writeonce.teststore.TestStore;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Store faults between the committer and a real store, injected by {@link StoreRelay}: answers of
 * 500 and 503, connections reset before a request reaches the store or after it acted, and delays,
 * during task commit and job commit. The job either succeeds with exactly its output, or fails and
 * {@code writeonce recover} converges to all or nothing; nothing is lost or duplicated, and no
 * upload stays open.
 */
@EachStore
class StoreFaultIT {

  private final TestStore store;

  StoreFaultIT(TestStore store) {
    this.store = store;
  }

  private TestStore store() {
    return store;
  }

  @TempDir Path scratch;

  private StoreRelay proxy;
  private String bucket;
  private BucketView view;

  @BeforeEach
  void startProxy() throws Exception {
    proxy = StoreRelay.start(store().endpoint());
    bucket = store().newBucket("faults");
    view = new BucketView(store(), bucket);
  }

  @AfterEach
  void stopProxy() throws Exception {
    proxy.close();
    FileSystem.closeAll();
  }

  private Configuration throughProxy() {
    return CommitCrashDriver.throughProxy(store, proxy.endpoint(), scratch);
  }

  private void runJob(Configuration conf) throws Exception {
    CommitCrashDriver.runJob(conf, view.uri("out/"));
  }

  private List<String> expectedKeys() {
    List<String> keys = new ArrayList<>();
    for (int task = 0; task < CommitCrashDriver.TASKS; task++) {
      keys.add("out/" + CommitCrashDriver.fileName(task));
    }
    return keys;
  }

  private void assertAllOutputOnceAndNoOpenUpload() throws Exception {
    assertThat(view.keys("out/part-")).containsExactlyElementsOf(expectedKeys());
    for (int task = 0; task < CommitCrashDriver.TASKS; task++) {
      assertThat(view.read(expectedKeys().get(task))).isEqualTo(CommitCrashDriver.content(task));
    }
    assertThat(view.openUploads(expectedKeys())).isEmpty();
    assertThat(view.keys("out/_writeonce/")).isEmpty();
  }

  private String recover(String... more) {
    Map<String, String> settings = new TreeMap<>();
    store()
        .configure(new Configuration(false))
        .forEach(e -> settings.put(e.getKey(), e.getValue()));
    List<String> args = new ArrayList<>(List.of("recover", view.uri("out/"), "--min-age=0s"));
    settings.forEach((key, value) -> args.add("--conf=" + key + "=" + value));
    args.addAll(List.of(more));
    StringWriter out = new StringWriter();
    int exit =
        Main.run(
            new PrintWriter(out, true), new PrintWriter(out, true), args.toArray(new String[0]));
    return exit + "\n" + out;
  }

  @Test
  void transientFaultsInTaskAndJobCommitAreRidOutAndEveryFileAppearsOnce() throws Exception {
    proxy
        .inject(Request::isUploadPart, Fault.STATUS_503, 2)
        .inject(Request::isUploadPart, Fault.RESET_BEFORE, 2)
        .inject(Request::isPutObject, Fault.STATUS_500, 1)
        .inject(Request::isCompleteUpload, Fault.STATUS_503, 1)
        .inject(Request::isCompleteUpload, Fault.DELAY_2S, 2)
        .inject(Request::isCompleteUpload, Fault.RESET_AFTER_STORE_ACTED, 2);

    runJob(throughProxy());

    assertThat(proxy.injected()).isEqualTo(10);
    assertAllOutputOnceAndNoOpenUpload();
    assertThat(view.keys("out/")).contains("out/_SUCCESS");
  }

  @Test
  void aJobCommitThatKeepsFailingAfterItsCommitPointIsFinishedByRecover() throws Exception {
    // Three completions go through, then every completion fails: the job dies committed.
    Configuration conf = throughProxy();
    conf.setInt("writeonce.commit.threads", 1);
    int[] completions = {0};
    proxy.inject(
        r -> r.isCompleteUpload() && ++completions[0] > 3, Fault.STATUS_500, Integer.MAX_VALUE);

    assertThatThrownBy(() -> runJob(conf)).hasMessageContaining("out/");
    assertThat(view.keys("out/part-")).hasSizeLessThan(CommitCrashDriver.TASKS);

    proxy.heal();
    String recover = recover();
    assertThat(recover).as(recover).startsWith("0\n").contains("finish committed job");
    assertAllOutputOnceAndNoOpenUpload();
  }

  @Test
  void aTaskCommitThatKeepsFailingFailsTheJobAndRecoverLeavesNothing() throws Exception {
    // Uploads pass; the fifth task manifest PUT and every PUT after it fail.
    int[] puts = {0};
    proxy.inject(r -> r.isPutObject() && ++puts[0] > 4, Fault.STATUS_503, Integer.MAX_VALUE);

    assertThatThrownBy(() -> runJob(throughProxy())).isInstanceOf(Exception.class);

    proxy.heal();
    // The store refused every write, so the driver could not even mark its lease released when
    // it gave the job up: the operator, who saw the job fail, says the driver is gone.
    assertThat(recover()).contains("leave live job job_2026112223_0001");
    String recover = recover("--ignore-lease-of=job_2026112223_0001");
    assertThat(recover).as(recover).startsWith("0\n");
    // An abort fence, and the intent of the attempt whose task commit failed, stand for the
    // retention: a later recovery aborts what that attempt might still add.
    assertThat(view.keys("out/"))
        .as("nothing of the failed job but its abort fence and an intent")
        .allMatch(
            key ->
                key.startsWith("out/_writeonce/jobs/")
                    && (key.endsWith("/manifest.json") || key.contains("/intents/")));
    assertThat(view.openUploads(expectedKeys())).as("open uploads").isEmpty();
  }
}
