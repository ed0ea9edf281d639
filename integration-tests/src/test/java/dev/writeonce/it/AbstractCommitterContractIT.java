package dev.writeonce.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.committer.MultipartOutputCommitter;
import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.engine.JobCommitEngine;
import dev.writeonce.core.engine.JobCommitRequest;
import dev.writeonce.core.errors.ErrorKind;
import dev.writeonce.core.json.SuccessDataFormat;
import dev.writeonce.core.model.ConflictMode;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.model.Etags;
import dev.writeonce.core.model.SuccessData;
import dev.writeonce.core.model.TaskManifest;
import dev.writeonce.core.model.UploadPart;
import dev.writeonce.core.store.RequestType;
import dev.writeonce.core.store.S3StoreGateway;
import dev.writeonce.core.store.StoreGateway;
import dev.writeonce.core.testing.FaultInjectingStore;
import dev.writeonce.core.testing.PendingUploads;
import dev.writeonce.teststore.BucketView;
import dev.writeonce.teststore.EachStore;
import dev.writeonce.teststore.S3Api;
import dev.writeonce.teststore.TestStore;
import dev.writeonce.teststore.Traffic;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.JobStatus;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitter;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitterFactory;
import org.apache.hadoop.mapreduce.task.JobContextImpl;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A committer with real Hadoop MapReduce jobs (LocalJobRunner) and, where the runner cannot produce
 * the situation (task retries, a job abort after task commits), Hadoop's committer protocol driven
 * step by step. Every count comes from the store's own meter. One subclass per committer; each runs
 * on every selected store.
 */
@EachStore
abstract class AbstractCommitterContractIT {

  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(AbstractCommitterContractIT.class);

  /** Per output file: CreateMultipartUpload, UploadPart (one part), CompleteMultipartUpload. */
  static final int REQUESTS_PER_FILE = 3;

  /**
   * Per task: the PUT of its intent before its uploads (staging), the PUT of its manifest and one
   * GET of the job record at task commit, and the GET of the manifest at job commit.
   */
  static final int REQUESTS_PER_TASK = 4;

  /**
   * Per job: FileOutputFormat's output check (HEAD + LIST), the LIST for unfinished jobs and the
   * PUT of the job record at setup, the GET and PUT (committing) of the job record and the LIST of
   * task manifests at commit, the PUT of the job manifest, the GET and PUT of _SUCCESS, the PUT of
   * the job record (finished), the LIST and two DeleteObjects of the job's records.
   */
  static final int REQUESTS_PER_JOB = 15;

  private final TestStore store;

  AbstractCommitterContractIT(TestStore store) {
    this.store = store;
  }

  protected TestStore store() {
    return store;
  }

  /** The value of writeonce.committer under test. */
  protected abstract String committerName();

  /** A MapReduce configuration for the committer under test. */
  protected Configuration jobConfiguration() {
    return MapReduceJobs.configuration(store(), committerName(), scratch);
  }

  @TempDir Path scratch;

  private String bucket;
  BucketView view;
  private FileSystem fs;
  private StoreGateway gateway;

  @BeforeEach
  void setUp() throws IOException {
    bucket = store().newBucket("staging");
    view = new BucketView(store(), bucket);
    fs =
        FileSystem.newInstance(
            URI.create("s3a://" + bucket + "/"), store().configure(new Configuration()));
    gateway = S3StoreGateway.forFileSystem(fs);
  }

  @AfterEach
  void tearDown() throws IOException {
    fs.close();
  }

  private List<String> lines(List<String> keys) throws IOException {
    List<String> all = new ArrayList<>();
    for (String key : keys) {
      all.addAll(Arrays.asList(view.read(key).split("\n")));
    }
    all.sort(null);
    return all;
  }

  private static List<String> sorted(List<String> lines) {
    List<String> copy = new ArrayList<>(lines);
    copy.sort(null);
    return copy;
  }

  @Test
  void eightMapTasksThroughTheFactoryWriteEveryByteOnce() throws Exception {
    List<String> input = MapReduceJobs.writeInput(scratch.resolve("in"), 8, 500, false);
    Configuration conf = jobConfiguration();
    Job job = MapReduceJobs.copyJob(conf, scratch.resolve("in"), view.uri("out"));

    Traffic before = store().meter().read();
    assertThat(job.waitForCompletion(false)).as("job succeeded").isTrue();
    Traffic traffic = store().meter().read().minus(before);
    LOG.info(
        "{}: 8-task MapReduce job through the {} committer: {}",
        store().name(),
        committerName(),
        traffic);

    List<String> outputs = view.keys("out/part-");
    assertThat(outputs).hasSize(8);
    assertThat(lines(outputs)).isEqualTo(sorted(input));
    long outputBytes = outputs.stream().mapToLong(view::size).sum();

    assertThat(traffic.requests(S3Api.COPY_OBJECT)).isZero();
    assertThat(traffic.requests(S3Api.COMPLETE_MULTIPART_UPLOAD)).isEqualTo(8);
    assertThat(traffic.totalRequests())
        .as("requests: %s", traffic)
        .isLessThanOrEqualTo(REQUESTS_PER_FILE * 8L + REQUESTS_PER_TASK * 8L + REQUESTS_PER_JOB);
    assertThat(traffic.bytesReceived()).isGreaterThanOrEqualTo(outputBytes);
    assertThat(view.openUploads(outputs)).isEmpty();
    List<String> outputAndSuccess = new ArrayList<>(outputs);
    outputAndSuccess.add("out/_SUCCESS");
    assertThat(view.keys("out/"))
        .as("the output and _SUCCESS, nothing else")
        .containsExactlyInAnyOrderElementsOf(outputAndSuccess);

    SuccessData success =
        SuccessDataFormat.fromJson(
            view.read("out/_SUCCESS").getBytes(StandardCharsets.UTF_8), "_SUCCESS");
    assertThat(success.committer()).isEqualTo(committerName());
    assertThat(success.filenames()).hasSize(8).allMatch(n -> n.startsWith(view.uri("out/part-m-")));
    assertThat(success.metrics())
        .containsEntry("writeonce.files", 8L)
        .containsEntry("writeonce.bytes", outputBytes);
    assertThat(success.counters()).containsEntry("writeonce.requests.complete_upload", 8L);
  }

  // ---- Hadoop's committer protocol, step by step ----

  final JobID jobId = new JobID("2026112201", 3);

  Configuration protocolConf() {
    Configuration conf = jobConfiguration();
    conf.set("mapreduce.output.fileoutputformat.outputdir", view.uri("out"));
    return conf;
  }

  PathOutputCommitter committer(Configuration conf, TaskAttemptContext context) throws IOException {
    return PathOutputCommitterFactory.createCommitter(
        new org.apache.hadoop.fs.Path(view.uri("out")), context);
  }

  TaskAttemptContext attempt(Configuration conf, int task, int attempt) {
    return new TaskAttemptContextImpl(
        conf,
        new TaskAttemptID(jobId.getJtIdentifier(), jobId.getId(), TaskType.MAP, task, attempt));
  }

  /**
   * Writes a file at the committer's work path through Hadoop's FileSystem, as a task does: with
   * the task's own configuration, where the committer registers its work path's file system.
   */
  static void writeOutput(
      TaskAttemptContext task, PathOutputCommitter committer, String name, String text)
      throws IOException {
    org.apache.hadoop.fs.Path file = new org.apache.hadoop.fs.Path(committer.getWorkPath(), name);
    try (OutputStream out = file.getFileSystem(task.getConfiguration()).create(file, false)) {
      out.write(text.getBytes(StandardCharsets.UTF_8));
    }
  }

  @Test
  void aTaskThatFailsItsFirstAttemptAndSucceedsOnRetryAppearsExactlyOnce() throws Exception {
    Configuration conf = protocolConf();
    JobContext job = new JobContextImpl(conf, jobId);
    committer(conf, attempt(conf, 0, 0)).setupJob(job);

    TaskAttemptContext first = attempt(conf, 0, 0);
    PathOutputCommitter failing = committer(conf, first);
    failing.setupTask(first);
    writeOutput(first, failing, "part-m-00000", "first attempt\n");
    failing.abortTask(first);

    TaskAttemptContext retry = attempt(conf, 0, 1);
    PathOutputCommitter retried = committer(conf, retry);
    retried.setupTask(retry);
    writeOutput(retry, retried, "part-m-00000", "second attempt\n");
    retried.commitTask(retry);
    committer(conf, attempt(conf, 0, 0)).commitJob(job);

    assertThat(view.keys("out/part-")).containsExactly("out/part-m-00000");
    assertThat(view.read("out/part-m-00000")).isEqualTo("second attempt\n");
    assertThat(view.openUploads(List.of("out/part-m-00000"))).isEmpty();
  }

  /** Sets a job up, commits one task that writes one file, and commits the job. */
  private void runOneTaskJob(Configuration conf, JobID id, String name, String text)
      throws IOException {
    JobContext job = new JobContextImpl(conf, id);
    TaskAttemptContext context =
        new TaskAttemptContextImpl(
            conf, new TaskAttemptID(id.getJtIdentifier(), id.getId(), TaskType.MAP, 0, 0));
    committer(conf, context).setupJob(job);
    PathOutputCommitter committer = committer(conf, context);
    committer.setupTask(context);
    writeOutput(context, committer, name, text);
    committer.commitTask(context);
    committer(conf, context).commitJob(job);
  }

  /**
   * A restarted application master whose earlier attempt finished the job: its records are gone and
   * a later job's _SUCCESS names the later job, which names this one among the jobs before it. The
   * restart is refused as already finished and writes nothing.
   */
  @Test
  void aRestartedApplicationMasterWhoseJobFinishedBeforeALaterJobIsRefusedAsFinished()
      throws Exception {
    runOneTaskJob(protocolConf(), jobId, "part-m-00000", "first job\n");
    JobID later = new JobID("2026112201", 4);
    runOneTaskJob(protocolConf(), later, "part-m-00001", "later job\n");
    List<String> before = view.keys("out/");
    assertThat(before)
        .as("the output and _SUCCESS, nothing else")
        .containsExactly("out/_SUCCESS", "out/part-m-00000", "out/part-m-00001");
    SuccessData success =
        SuccessDataFormat.fromJson(
            view.read("out/_SUCCESS").getBytes(StandardCharsets.UTF_8), "_SUCCESS");
    assertThat(success.jobId()).isEqualTo(later.toString());
    assertThat(success.finishedJobs())
        .extracting(dev.writeonce.core.model.FinishedJob::jobId)
        .containsExactly(jobId.toString());

    Configuration conf = protocolConf();
    conf.setInt("mapreduce.job.application.attempt.id", 1);
    JobContext restarted = new JobContextImpl(conf, jobId);
    Traffic start = store().meter().read();
    assertThatThrownBy(() -> committer(conf, attempt(conf, 0, 1)).setupJob(restarted))
        .isInstanceOf(dev.writeonce.core.errors.JobAlreadyFinishedException.class);
    Traffic restart = store().meter().read().minus(start);

    assertThat(restart.requests(S3Api.PUT_OBJECT)).isZero();
    assertThat(restart.requests(S3Api.CREATE_MULTIPART_UPLOAD)).isZero();
    assertThat(restart.requests(S3Api.COMPLETE_MULTIPART_UPLOAD)).isZero();
    assertThat(view.keys("out/")).isEqualTo(before);
    assertThat(view.read("out/part-m-00000")).isEqualTo("first job\n");
  }

  @Test
  void aNewJobFailsOnACommittedButUnfinishedJobOrFinishesItFirstWhenConfigured() throws Exception {
    Destination out = Destination.of(view.uri("out/"));
    List<String> earlier = List.of("out/earlier-0", "out/earlier-1", "out/earlier-2");
    TaskManifest task =
        PendingUploads.task(gateway, "job_earlier_0001", "attempt_earlier_m_000000_0", earlier);
    FaultInjectingStore crashing =
        new FaultInjectingStore(gateway).failFrom(RequestType.COMPLETE_UPLOAD, 2, ErrorKind.FATAL);
    assertThatThrownBy(
            () ->
                new JobCommitEngine(crashing, CommitterConfig.defaults(), out)
                    .commit(
                        new JobCommitRequest(
                            "job_earlier_0001",
                            committerName(),
                            ConflictMode.APPEND,
                            List.of(task),
                            List.of())))
        .as("the earlier job stops after its commit point")
        .isInstanceOf(IOException.class);

    Configuration conf = protocolConf();
    // One run of the new job, whose setup is tried three times.
    conf.set(MultipartOutputCommitter.JOB_UUID, "run-of-the-new-job");
    JobContext job = new JobContextImpl(conf, jobId);
    committer(conf, attempt(conf, 0, 0)).setupJob(job);
    // A job committed moments ago is left to its own driver; once idle long enough, it is not.
    conf.set(CommitterConfig.RECOVERY_STALE_AFTER, "0s");
    assertThatThrownBy(() -> committer(conf, attempt(conf, 0, 0)).setupJob(job))
        .hasMessageContaining("job_earlier_0001")
        .hasMessageContaining("writeonce recover " + out)
        .hasMessageContaining(CommitterConfig.RECOVERY_ON_SETUP + "=recover");
    assertThat(view.keys("out/earlier-")).hasSize(1);

    conf.set(CommitterConfig.RECOVERY_ON_SETUP, "recover");
    JobContext recovering = new JobContextImpl(conf, jobId);
    committer(conf, attempt(conf, 0, 0)).setupJob(recovering);
    TaskAttemptContext context = attempt(conf, 0, 0);
    PathOutputCommitter committer = committer(conf, context);
    committer.setupTask(context);
    writeOutput(context, committer, "part-m-00000", "new job\n");
    committer.commitTask(context);
    committer(conf, attempt(conf, 0, 0)).commitJob(recovering);

    assertThat(view.keys("out/")).containsAll(earlier).contains("out/part-m-00000");
    assertThat(view.openUploads(earlier)).isEmpty();
    assertThat(view.keys("out/_writeonce/")).isEmpty();
  }

  @Test
  void jobAbortAfterSomeTaskCommitsLeavesNothingVisibleAndNoOpenUpload() throws Exception {
    Configuration conf = protocolConf();
    JobContext job = new JobContextImpl(conf, jobId);
    committer(conf, attempt(conf, 0, 0)).setupJob(job);
    List<String> keys = new ArrayList<>();
    for (int task = 0; task < 3; task++) {
      TaskAttemptContext context = attempt(conf, task, 0);
      PathOutputCommitter committer = committer(conf, context);
      committer.setupTask(context);
      writeOutput(context, committer, "part-m-0000" + task, "task " + task + "\n");
      committer.commitTask(context);
      keys.add("out/part-m-0000" + task);
    }

    Traffic before = store().meter().read();
    committer(conf, attempt(conf, 0, 0)).abortJob(job, JobStatus.State.FAILED);
    Traffic abort = store().meter().read().minus(before);

    assertThat(abort.requests(S3Api.ABORT_MULTIPART_UPLOAD)).isEqualTo(3);
    assertThat(abort.requests(S3Api.COMPLETE_MULTIPART_UPLOAD)).isZero();
    assertThat(view.keys("out/")).isEmpty();
    assertThat(view.openUploads(keys)).isEmpty();
  }

  @Test
  void a200MiBTaskOutputGoesUpInPartsAndCompletesWithTheMultipartEtag() throws Exception {
    Configuration conf = protocolConf();
    conf.set(CommitterConfig.PART_SIZE, "64M");
    JobContext job = new JobContextImpl(conf, jobId);
    TaskAttemptContext context = attempt(conf, 0, 0);
    PathOutputCommitter committer = committer(conf, context);
    committer.setupJob(job);
    committer.setupTask(context);
    org.apache.hadoop.fs.Path file =
        new org.apache.hadoop.fs.Path(committer.getWorkPath(), "part-m-00000");
    long size = 200L << 20;

    Traffic before = store().meter().read();
    List<UploadPart> expectedParts;
    try (OutputStream out = file.getFileSystem(conf).create(file, false)) {
      expectedParts = writeBigFile(out, size, 64 << 20);
    }
    committer.commitTask(context);
    Traffic written = store().meter().read().minus(before);
    committer.commitJob(job);

    assertThat(written.bytesReceived())
        .as("bytes the store received")
        .isBetween(size, size + size / 100);
    assertThat(view.size("out/part-m-00000")).isEqualTo(size);
    String etag =
        Etags.unquote(
            store().adminClient().headObject(b -> b.bucket(bucket).key("out/part-m-00000")).eTag());
    assertThat(etag).isEqualTo(Etags.multipartEtag(expectedParts).orElseThrow()).endsWith("-4");
    assertThat(md5OfObject("out/part-m-00000")).isEqualTo(md5OfFile(expectedParts));
  }

  private static List<UploadPart> writeBigFile(OutputStream out, long size, int partSize)
      throws Exception {
    List<UploadPart> parts = new ArrayList<>();
    byte[] block = new byte[1 << 20];
    {
      MessageDigest part = MessageDigest.getInstance("MD5");
      long inPart = 0;
      for (long written = 0; written < size; written += block.length) {
        Arrays.fill(block, (byte) (written >>> 20));
        out.write(block);
        part.update(block);
        inPart += block.length;
        if (inPart == partSize || written + block.length == size) {
          parts.add(
              new UploadPart(parts.size() + 1, HexFormat.of().formatHex(part.digest()), inPart));
          inPart = 0;
        }
      }
    }
    return parts;
  }

  /** The MD5 of the whole content, from the blocks the file was made of. */
  private static String md5OfFile(List<UploadPart> parts) throws Exception {
    MessageDigest md5 = MessageDigest.getInstance("MD5");
    byte[] block = new byte[1 << 20];
    long total = parts.stream().mapToLong(UploadPart::size).sum();
    for (long written = 0; written < total; written += block.length) {
      Arrays.fill(block, (byte) (written >>> 20));
      md5.update(block);
    }
    return HexFormat.of().formatHex(md5.digest());
  }

  private String md5OfObject(String key) throws Exception {
    MessageDigest md5 = MessageDigest.getInstance("MD5");
    try (InputStream in = store().adminClient().getObject(b -> b.bucket(bucket).key(key))) {
      byte[] buffer = new byte[1 << 16];
      for (int n; (n = in.read(buffer)) > 0; ) {
        md5.update(buffer, 0, n);
      }
    }
    return HexFormat.of().formatHex(md5.digest());
  }
}
