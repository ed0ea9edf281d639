package dev.writeonce.it;

import static dev.writeonce.core.testing.PendingUploads.contentOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.engine.CommitResult;
import dev.writeonce.core.engine.JobCommitEngine;
import dev.writeonce.core.engine.JobCommitRequest;
import dev.writeonce.core.engine.JobLayout;
import dev.writeonce.core.engine.JobRecords;
import dev.writeonce.core.errors.ErrorKind;
import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.model.ConflictMode;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.TaskManifest;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.RequestType;
import dev.writeonce.core.store.S3StoreGateway;
import dev.writeonce.core.store.StoreGateway;
import dev.writeonce.core.testing.FaultInjectingStore;
import dev.writeonce.core.testing.PendingUploads;
import dev.writeonce.teststore.EachStore;
import dev.writeonce.teststore.S3Api;
import dev.writeonce.teststore.TestStore;
import dev.writeonce.teststore.Traffic;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The job-commit engine against a real store, with the store's own counters as the witness. One
 * subclass per store; each runs every test here.
 */
@EachStore
class EngineContractIT {

  private static final int TASKS = 10;
  private static final int FILES_PER_TASK = 100;
  private static final int FILES = TASKS * FILES_PER_TASK;
  private static final int BIG_FILE = 5 * 1024 * 1024 + 100;

  private final TestStore store;

  EngineContractIT(TestStore store) {
    this.store = store;
  }

  private TestStore store() {
    return store;
  }

  private String bucket;
  private final List<FileSystem> fileSystems = new ArrayList<>();
  private StoreGateway gateway;
  private Destination dest;
  private ExecutorService pool;

  @BeforeEach
  void setUp() throws IOException {
    bucket = store().newBucket("engine");
    gateway = newGateway();
    dest = Destination.of("s3a://" + bucket + "/output/");
    pool = Executors.newFixedThreadPool(16);
  }

  @AfterEach
  void tearDown() throws IOException {
    pool.shutdownNow();
    for (FileSystem fs : fileSystems) {
      fs.close();
    }
  }

  /** A gateway over a new S3AFileSystem instance, as a new driver process would have. */
  private StoreGateway newGateway() throws IOException {
    Configuration conf = store().configure(new Configuration());
    FileSystem fs = FileSystem.newInstance(URI.create("s3a://" + bucket + "/"), conf);
    fileSystems.add(fs);
    return S3StoreGateway.forFileSystem(fs);
  }

  private static CommitterConfig config() {
    return CommitterConfig.defaults();
  }

  private static byte[] bigContent() {
    byte[] data = new byte[BIG_FILE];
    for (int i = 0; i < data.length; i++) {
      data[i] = (byte) (i * 31 + 7);
    }
    return data;
  }

  private byte[] expectedContent(String key) {
    return key.endsWith("part-0000-0000") ? bigContent() : contentOf(key);
  }

  /**
   * Creates the pending uploads of a job as its tasks would: TASKS x FILES_PER_TASK files, one of
   * them large enough to need two parts of the stores' 5 MiB minimum.
   */
  private List<TaskManifest> writeTasks(String jobId, int tasks, int filesPerTask)
      throws Exception {
    List<Future<TaskManifest>> futures = new ArrayList<>();
    for (int t = 0; t < tasks; t++) {
      int task = t;
      futures.add(
          pool.submit(
              () -> {
                String attempt = "attempt_" + jobId + "_m_" + String.format("%06d", task) + "_0";
                List<PendingUpload> uploads = new ArrayList<>();
                for (int f = 0; f < filesPerTask; f++) {
                  String key = dest.keyOf(String.format("part-%04d-%04d", task, f));
                  uploads.add(
                      key.endsWith("part-0000-0000")
                          ? PendingUploads.uploadInParts(
                              gateway, key, bigContent(), 5 << 20, attempt)
                          : PendingUploads.upload(gateway, key, contentOf(key), attempt));
                }
                return new TaskManifest(jobId, attempt, uploads, Map.of());
              }));
    }
    List<TaskManifest> manifests = new ArrayList<>();
    for (Future<TaskManifest> future : futures) {
      manifests.add(future.get());
    }
    return manifests;
  }

  private static JobCommitRequest request(String jobId, List<TaskManifest> tasks) {
    return new JobCommitRequest(jobId, "engine-it", ConflictMode.APPEND, tasks, List.of());
  }

  private List<String> visibleOutput() throws IOException {
    return gateway.listObjects(dest.prefix()).stream()
        .map(ObjectInfo::key)
        .filter(k -> k.contains("/part-"))
        .toList();
  }

  /** Everything under the destination but the job's output: after a finished job, _SUCCESS. */
  private List<String> allButOutput() throws IOException {
    return gateway.listObjects(dest.prefix()).stream()
        .map(ObjectInfo::key)
        .filter(k -> !k.contains("/part-"))
        .toList();
  }

  /** Upload ids still open, asked key by key: MinIO lists uploads of exact keys only. */
  private List<String> openUploads(List<TaskManifest> tasks) throws Exception {
    List<Future<Integer>> counts = new ArrayList<>();
    for (TaskManifest task : tasks) {
      for (PendingUpload upload : task.uploads()) {
        counts.add(pool.submit(() -> gateway.listUploads(upload.key()).size()));
      }
    }
    List<String> open = new ArrayList<>();
    int i = 0;
    for (TaskManifest task : tasks) {
      for (PendingUpload upload : task.uploads()) {
        if (counts.get(i++).get() > 0) {
          open.add(upload.key());
        }
      }
    }
    return open;
  }

  private void assertEveryFileReadsBack(List<TaskManifest> tasks) throws Exception {
    List<Future<String>> mismatches = new ArrayList<>();
    for (TaskManifest task : tasks) {
      for (PendingUpload upload : task.uploads()) {
        mismatches.add(
            pool.submit(
                () -> {
                  byte[] actual = gateway.getObject(upload.key()).orElse(null);
                  return Arrays.equals(actual, expectedContent(upload.key())) ? null : upload.key();
                }));
      }
    }
    List<String> wrong = new ArrayList<>();
    for (Future<String> mismatch : mismatches) {
      if (mismatch.get() != null) {
        wrong.add(mismatch.get());
      }
    }
    assertThat(wrong).as("objects missing or with wrong bytes").isEmpty();
  }

  @Test
  void thousandPendingUploadsCommitWithOneCompletionEachAndNoCopyOrDataGet() throws Exception {
    String jobId = "job_commit_1000";
    List<TaskManifest> tasks = writeTasks(jobId, TASKS, FILES_PER_TASK);
    assertThat(visibleOutput()).as("nothing visible before the commit").isEmpty();

    Traffic before = store().meter().read();
    CommitResult result =
        new JobCommitEngine(gateway, config(), dest).commit(request(jobId, tasks));
    Traffic commit = store().meter().read().minus(before);

    assertThat(result.files()).isEqualTo(FILES);
    assertThat(commit.requests(S3Api.COMPLETE_MULTIPART_UPLOAD)).isEqualTo(FILES);
    assertThat(commit.requests(S3Api.COPY_OBJECT)).isZero();
    assertThat(commit.requests(S3Api.UPLOAD_PART)).isZero();
    // Per job, not per file: the PUTs of the manifest, _SUCCESS and the finished record; the GET
    // of the _SUCCESS it replaces, none of data; one LIST, one bulk DELETE of records and the
    // DELETE of the job record.
    assertThat(commit.requests(S3Api.PUT_OBJECT)).isEqualTo(3);
    assertThat(commit.requests(S3Api.GET_OBJECT)).isEqualTo(1);
    assertThat(commit.totalRequests()).isLessThanOrEqualTo(FILES + 7L);
    assertThat(visibleOutput()).hasSize(FILES);
    assertEveryFileReadsBack(tasks);
    assertThat(openUploads(tasks)).isEmpty();
    assertThat(allButOutput()).containsExactly(dest.keyOf("_SUCCESS"));
    assertThat(gateway.getObject(dest.keyOf("_SUCCESS"))).isPresent();
  }

  @Test
  void aCrashAfterSomeCompletionsIsFinishedByANewEngineFromTheManifestAlone() throws Exception {
    String jobId = "job_crash_1000";
    List<TaskManifest> tasks = writeTasks(jobId, TASKS, FILES_PER_TASK);
    int crashAfter = 400;
    FaultInjectingStore failing =
        new FaultInjectingStore(gateway)
            .failFrom(RequestType.COMPLETE_UPLOAD, crashAfter + 1, ErrorKind.FATAL);

    assertThatThrownBy(
            () -> new JobCommitEngine(failing, config(), dest).commit(request(jobId, tasks)))
        .hasMessageContaining("injected fault");
    int survivors = visibleOutput().size();
    assertThat(survivors).isEqualTo(crashAfter);

    // A new process: a new filesystem, gateway and engine, and nothing but the job id.
    StoreGateway fresh = newGateway();
    CommitResult resumed = new JobCommitEngine(fresh, config(), dest).resume(jobId).orElseThrow();

    assertThat(resumed.completed() + resumed.confirmed()).isEqualTo(FILES);
    assertThat(visibleOutput()).hasSize(FILES);
    assertEveryFileReadsBack(tasks);
    assertThat(openUploads(tasks)).isEmpty();
    assertThat(allButOutput()).containsExactly(dest.keyOf("_SUCCESS"));
  }

  @Test
  void aJobCommittedThroughChunksFromStoredTaskManifestsIsFinishedAfterACrashFromTheChunks()
      throws Exception {
    String jobId = "job_chunks_1000";
    List<TaskManifest> tasks = writeTasks(jobId, TASKS, FILES_PER_TASK);
    JobLayout layout = new JobLayout(dest);
    JobRecords records = new JobRecords(gateway, layout);
    List<String> keys = new ArrayList<>();
    for (TaskManifest task : tasks) {
      records.saveTaskManifest(task);
      keys.add(layout.taskManifestKey(jobId, task.taskAttemptId()));
    }
    CommitterConfig chunked = config().withManifestChunkUploads(300);
    FaultInjectingStore failing =
        new FaultInjectingStore(gateway)
            .failFrom(RequestType.COMPLETE_UPLOAD, 401, ErrorKind.FATAL);
    JobCommitRequest request =
        new JobCommitRequest(
            jobId, "engine-it", ConflictMode.APPEND, List.of(), List.of(), null, keys);

    Traffic before = store().meter().read();
    assertThatThrownBy(() -> new JobCommitEngine(failing, chunked, dest).commit(request))
        .hasMessageContaining("injected fault");
    Traffic commit = store().meter().read().minus(before);
    // Four chunks of at most 300 and the manifest written; the task manifests read once each,
    // and chunks read again only to complete them (the failed finish and its one retry).
    assertThat(commit.requests(S3Api.GET_OBJECT)).isBetween((long) TASKS, TASKS + 8L);
    assertThat(commit.requests(S3Api.PUT_OBJECT)).isEqualTo(5);
    assertThat(visibleOutput()).hasSize(400);
    assertThat(records.loadJobManifest(jobId).orElseThrow().chunks()).hasSize(4);

    StoreGateway fresh = newGateway();
    CommitResult resumed = new JobCommitEngine(fresh, chunked, dest).resume(jobId).orElseThrow();

    // Ceph RGW answers a repeated completion as done: it counts as completed there, not confirmed.
    assertThat(resumed.completed() + resumed.confirmed()).isEqualTo(FILES);
    assertThat(resumed.completed()).isGreaterThanOrEqualTo(FILES - 400);
    assertThat(store().meter().read().minus(before).requests(S3Api.COPY_OBJECT)).isZero();
    assertThat(visibleOutput()).hasSize(FILES);
    assertEveryFileReadsBack(tasks);
    assertThat(openUploads(tasks)).isEmpty();
    assertThat(allButOutput()).containsExactly(dest.keyOf("_SUCCESS"));
  }

  @Test
  void abortBeforeTheCommitPointLeavesNoObjectAndNoOpenUpload() throws Exception {
    String jobId = "job_abort";
    List<TaskManifest> tasks = writeTasks(jobId, 3, 20);
    JobCommitEngine engine = new JobCommitEngine(gateway, config(), dest);
    engine.records().saveTaskManifest(tasks.get(0));

    Traffic before = store().meter().read();
    engine.abort(jobId, tasks.subList(1, 3), true); // its own driver's, before committing
    Traffic abort = store().meter().read().minus(before);

    assertThat(abort.requests(S3Api.ABORT_MULTIPART_UPLOAD)).isEqualTo(60);
    assertThat(abort.requests(S3Api.COMPLETE_MULTIPART_UPLOAD)).isZero();
    assertThat(gateway.listObjects(dest.prefix())).isEmpty();
    assertThat(openUploads(tasks)).isEmpty();
  }

  @Test
  void badManifestsAreRefusedNamingTheFileAndNothingIsCompletedOrDeleted() throws Exception {
    String jobId = "job_bad_manifest";
    List<TaskManifest> tasks = writeTasks(jobId, 1, 5);
    JobCommitEngine engine = new JobCommitEngine(gateway, config(), dest);
    String manifestKey = engine.layout().jobManifestKey(jobId);
    String manifestUri = dest.uriOf(manifestKey);
    String valid =
        new String(
            dev.writeonce.core.json.ManifestFormats.toJson(
                new dev.writeonce.core.model.JobManifest(
                    jobId,
                    dest,
                    ConflictMode.APPEND,
                    "engine-it",
                    0,
                    tasks.get(0).uploads(),
                    List.of())),
            StandardCharsets.UTF_8);
    String firstKey = tasks.get(0).uploads().get(0).key();
    Map<String, String> variants =
        Map.of(
            "outside the destination", valid.replace(firstKey, "elsewhere/stolen-key"),
            "not valid JSON", valid.substring(0, valid.length() / 2),
            "not valid JSON ", "\u0000garbage\u00ff{{{",
            "unsupported writeonce.job-manifest version 9",
                valid.replace("\"version\" : 1", "\"version\" : 9"));

    Traffic before = store().meter().read();
    for (Map.Entry<String, String> variant : variants.entrySet()) {
      gateway.putObject(manifestKey, variant.getValue().getBytes(StandardCharsets.UTF_8), false);
      assertThatThrownBy(() -> new JobCommitEngine(gateway, config(), dest).resume(jobId))
          .as(variant.getKey())
          .isInstanceOf(FormatException.class)
          .hasMessageContaining(manifestUri)
          .hasMessageContaining(variant.getKey().trim());
    }
    Traffic refused = store().meter().read().minus(before);

    assertThat(refused.requests(S3Api.COMPLETE_MULTIPART_UPLOAD)).isZero();
    assertThat(refused.requests(S3Api.DELETE_OBJECT)).isZero();
    assertThat(refused.requests(S3Api.DELETE_OBJECTS)).isZero();
    assertThat(refused.requests(S3Api.ABORT_MULTIPART_UPLOAD)).isZero();
    assertThat(openUploads(tasks)).hasSize(5);

    gateway.deleteObjects(List.of(manifestKey));
    engine.abort(jobId, tasks);
    assertThat(openUploads(tasks)).isEmpty();
  }
}
