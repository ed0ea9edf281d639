package dev.writeonce.shim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.testing.s3.Handling;
import dev.writeonce.core.testing.s3.MemoryS3;
import dev.writeonce.core.testing.s3.MemoryS3ClientFactory;
import dev.writeonce.core.testing.s3.MemoryS3Settings;
import dev.writeonce.core.testing.s3.RequestHook;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.lib.output.FileOutputCommitter;
import org.apache.hadoop.mapreduce.task.JobContextImpl;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The two Spark shapes whose requests per file the shim must keep low, replayed as Spark's default
 * commit protocol drives FileOutputCommitter v1: tasks of one file each, and a dynamic partition
 * overwrite (files staged under {@code .spark-staging-<job>}, merged there by the job commit, then
 * each partition deleted and the staged one renamed into place). Counted by the store.
 */
class SparkShapesCostTest {

  private static final String BUCKET = "bucket";

  private final MemoryS3 store = new MemoryS3();
  private final List<String> trace = Collections.synchronizedList(new ArrayList<>());
  private String endpoint;
  private Configuration conf;

  @BeforeEach
  void start() {
    store.setMinimumPartSize(0);
    endpoint =
        MemoryS3ClientFactory.register(
            store,
            (RequestHook)
                request -> {
                  trace.add(
                      request.operation()
                          + " "
                          + (request.key() == null && !request.keys().isEmpty()
                              ? request.keys().get(0) + " +" + (request.keys().size() - 1)
                              : request.key()));
                  return Handling.PROCEED;
                });
    conf = MemoryS3Settings.s3aConfiguration(endpoint);
    conf.set("fs.s3a.impl", RenameShimFileSystem.class.getName());
    conf.setBoolean("fs.s3a.impl.disable.cache", false);
  }

  @AfterEach
  void stop() throws IOException {
    FileSystem.closeAll();
    MemoryS3ClientFactory.unregister(endpoint);
  }

  private JobConf job(Path output) {
    JobConf job = new JobConf(conf);
    job.set("mapreduce.output.fileoutputformat.outputdir", output.toString());
    job.setInt("mapreduce.fileoutputcommitter.algorithm.version", 1);
    return job;
  }

  /**
   * Runs the tasks of a job on two threads, as Spark's {@code local[2]}: each creates its files
   * under its work path without overwriting (as Parquet does), reads each file's status after
   * closing it (as Spark's statistics do), and commits.
   */
  private void runTasks(JobConf job, JobID id, Path output, int tasks, List<String> files)
      throws Exception {
    java.util.concurrent.ExecutorService threads =
        java.util.concurrent.Executors.newFixedThreadPool(2);
    try {
      List<java.util.concurrent.Future<?>> running = new ArrayList<>();
      for (int t = 0; t < tasks; t++) {
        int index = t;
        running.add(
            threads.submit(
                () -> {
                  runTask(job, id, output, index, files);
                  return null;
                }));
      }
      for (java.util.concurrent.Future<?> task : running) {
        task.get();
      }
    } finally {
      threads.shutdownNow();
    }
  }

  private void runTask(JobConf job, JobID id, Path output, int t, List<String> files)
      throws IOException {
    TaskAttemptContext task =
        new TaskAttemptContextImpl(job, new TaskAttemptID(new TaskID(id, TaskType.MAP, t), 0));
    FileOutputCommitter committer = new FileOutputCommitter(output, task);
    committer.setupTask(task);
    for (String file : files) {
      Path path = new Path(committer.getWorkPath(), file.replace("{t}", Integer.toString(t)));
      FileSystem fs = path.getFileSystem(job);
      try (FSDataOutputStream out = fs.create(path, false)) {
        out.write(path.getName().getBytes(StandardCharsets.UTF_8));
      }
      assertThat(fs.getFileStatus(path).getLen()).isEqualTo(path.getName().length());
    }
    if (committer.needsTaskCommit(task)) {
      committer.commitTask(task);
    }
  }

  private Map<String, Long> counts(List<String> requests) {
    Map<String, Long> counts = new TreeMap<>();
    for (String request : requests) {
      counts.merge(request.substring(0, request.indexOf(' ')), 1L, Long::sum);
    }
    return counts;
  }

  private static long total(Map<String, Long> counts) {
    return counts.values().stream().mapToLong(Long::longValue).sum();
  }

  /**
   * Per file: the upload's creation, its part and the record at close; the record's move in the
   * task commit; the completion. Per task: FileOutputCommitter's check of the committed task's
   * path. Per job: a few listings, the marker, {@code _SUCCESS}, two DeleteObjects.
   */
  @Test
  void tasksOfOneFileEachCostSixRequestsPerFileAndOneListPerTask() throws Exception {
    int tasks = 100;
    Path output = new Path("s3a://" + BUCKET + "/out");
    JobConf job = job(output);
    JobID id = new JobID("202611260000", 1);
    JobContext context = new JobContextImpl(job, id);
    FileOutputCommitter committer = new FileOutputCommitter(output, context);
    trace.clear();

    committer.setupJob(context);
    runTasks(job, id, output, tasks, List.of("part-{t}.parquet"));
    committer.commitJob(context);

    Map<String, Long> counts = counts(trace);
    assertThat(store.objects(BUCKET, "out/")).hasSize(tasks + 1);
    assertThat(counts.get("PutObject")).as("%s", counts).isEqualTo(2L * tasks + 2);
    assertThat(counts.get("ListObjectsV2")).as("%s", counts).isLessThanOrEqualTo(tasks + 4L);
    assertThat(counts.get("DeleteObjects")).as("%s", counts).isLessThanOrEqualTo(2);
    assertThat(total(counts) / (double) tasks)
        .as("requests per file: %s", counts)
        .isLessThanOrEqualTo(6.1);
  }

  /**
   * Per file: as above; the job commit's merge into the staging directory moves the file in this
   * JVM's view only, and the rename into place completes it and deletes its records. Per partition:
   * Spark's delete of the old one and the rename of the staged one.
   */
  @Test
  void aDynamicPartitionOverwriteCostsUnderSixRequestsPerFile() throws Exception {
    Map<String, Long> counts = dynamicPartitionOverwrite(false);
    assertThat(counts.get("DeleteObjects")).as("%s", counts).isLessThanOrEqualTo(12);
    assertThat(counts.getOrDefault("GetObject", 0L))
        .as("records known to this JVM")
        .isLessThanOrEqualTo(1);
    assertThat(total(counts) / (double) (TASKS * PARTITIONS.size()))
        .as("requests per file: %s", counts)
        .isLessThanOrEqualTo(6.0);
  }

  /**
   * The files the job commit moved in this JVM's view only must survive the close of every file
   * system instance before Spark's driver renames them into place.
   */
  @Test
  void aDynamicPartitionOverwriteKeepsItsFilesWhenEveryInstanceClosesAfterTheJobCommit()
      throws Exception {
    dynamicPartitionOverwrite(true);
    assertThat(store.objects(BUCKET, "out/part=3/")).hasSize(TASKS);
  }

  /**
   * Between the job commit and Spark's renames the staged files exist in this JVM's view only:
   * every listing call of the file system must show the same directory, whichever a caller uses.
   */
  @Test
  void everyListingCallShowsTheSameStagingDirectoryWhileFilesAreMovedInViewOnly() throws Exception {
    Path staging = new Path("s3a://" + BUCKET + "/out/.spark-staging-6f1c2d3e");
    List<String> checked = new ArrayList<>();
    dynamicPartitionOverwrite(
        false,
        fs -> {
          for (Path directory : List.of(staging, new Path(staging, "part=0"))) {
            Map<String, Long> listed = entries(fs.listStatus(directory));
            assertThat(entries(toArray(fs.listStatusIterator(directory))))
                .as("listStatusIterator of %s", directory)
                .isEqualTo(listed);
            assertThat(entries(toArray(fs.listLocatedStatus(directory))))
                .as("listLocatedStatus of %s", directory)
                .isEqualTo(listed);
            Map<String, Long> files = new TreeMap<>(listed);
            files.values().removeIf(length -> length < 0);
            assertThat(entries(toArray(fs.listFiles(directory, false))))
                .as("listFiles of %s", directory)
                .isEqualTo(files);
            Map<String, Long> all = filesUnder(fs, directory);
            assertThat(entries(toArray(fs.listFiles(directory, true))))
                .as("listFiles of %s, recursive", directory)
                .isEqualTo(all);
            org.apache.hadoop.fs.ContentSummary summary = fs.getContentSummary(directory);
            assertThat(summary.getFileCount())
                .as("files under %s", directory)
                .isEqualTo(all.size());
            assertThat(summary.getLength())
                .as("length under %s", directory)
                .isEqualTo(all.values().stream().mapToLong(Long::longValue).sum());
            checked.add(directory.getName());
          }
          Map<String, Long> partition = filesUnder(fs, new Path(staging, "part=0"));
          assertThat(partition).hasSize(TASKS);
          partition.forEach(
              (file, length) ->
                  assertThat(length)
                      .as("the length written to %s", file)
                      .isEqualTo(file.substring(file.lastIndexOf('/') + 1).length()));
        });
    assertThat(checked).hasSize(2);
  }

  /**
   * A path that is a file moved in view only, and the path where its record stays stored.
   * getFileStatus says "file" for the first and "absent" for the second; every listing call must
   * agree with it (Hadoop lists a file as itself, and a missing path fails), and with each other.
   */
  @Test
  void aFileMovedInViewOnlyIsListedAsItselfAndWhereItsRecordStaysAsMissing() throws Exception {
    Path staging = new Path("s3a://" + BUCKET + "/out/.spark-staging-6f1c2d3e");
    Path moved = new Path(staging, "part=0/part-0.parquet");
    Path stored =
        new Path(staging, "_temporary/0/task_202611260000_0002_m_000000/part=0/part-0.parquet");
    Map<Path, List<String>> seen = new TreeMap<>();
    dynamicPartitionOverwrite(
        false,
        fs -> {
          for (Path path : List.of(moved, stored)) {
            List<String> answers = new ArrayList<>();
            answers.add(
                "getFileStatus " + describe(() -> new FileStatus[] {fs.getFileStatus(path)}));
            answers.add("listStatus " + describe(() -> fs.listStatus(path)));
            answers.add(
                "listStatusIterator " + describe(() -> toArray(fs.listStatusIterator(path))));
            answers.add("listLocatedStatus " + describe(() -> toArray(fs.listLocatedStatus(path))));
            answers.add("listFiles " + describe(() -> toArray(fs.listFiles(path, false))));
            answers.add("listFiles recursive " + describe(() -> toArray(fs.listFiles(path, true))));
            seen.put(path, answers);
          }
        });
    org.assertj.core.api.SoftAssertions soft = new org.assertj.core.api.SoftAssertions();
    // The moved file: a file of its length; every listing shows it.
    soft.assertThat(seen.get(moved))
        .as("%s", seen.get(moved))
        .allSatisfy(
            answer ->
                assertThat(answer)
                    .endsWith("{/out/.spark-staging-6f1c2d3e/part=0/part-0.parquet=14}"));
    // Its stored record: absent; every listing fails as for a missing path.
    soft.assertThat(seen.get(stored))
        .as("%s", seen.get(stored))
        .allSatisfy(answer -> assertThat(answer).endsWith("FileNotFoundException"));
    soft.assertAll();
  }

  @FunctionalInterface
  private interface Listing {
    FileStatus[] list() throws IOException;
  }

  private static String describe(Listing listing) {
    try {
      return entries(listing.list()).toString();
    } catch (IOException e) {
      return e.getClass().getSimpleName();
    }
  }

  /** Each listed path with its length, -1 for a directory. */
  private static Map<String, Long> entries(FileStatus[] statuses) {
    Map<String, Long> entries = new TreeMap<>();
    for (FileStatus status : statuses) {
      entries.put(status.getPath().toUri().getPath(), status.isDirectory() ? -1L : status.getLen());
    }
    return entries;
  }

  private static FileStatus[] toArray(RemoteIterator<? extends FileStatus> iterator)
      throws IOException {
    List<FileStatus> statuses = new ArrayList<>();
    while (iterator.hasNext()) {
      statuses.add(iterator.next());
    }
    return statuses.toArray(new FileStatus[0]);
  }

  /** The files under a directory, walked with listStatus. */
  private static Map<String, Long> filesUnder(FileSystem fs, Path directory) throws IOException {
    Map<String, Long> files = new TreeMap<>();
    for (FileStatus status : fs.listStatus(directory)) {
      if (status.isDirectory()) {
        files.putAll(filesUnder(fs, status.getPath()));
      } else {
        files.put(status.getPath().toUri().getPath(), status.getLen());
      }
    }
    return files;
  }

  private static final int TASKS = 20;
  private static final List<String> PARTITIONS = List.of("part=0", "part=1", "part=2", "part=3");

  /** Spark's dynamic partition overwrite of 4 of 8 partitions; the requests it sent. */
  private Map<String, Long> dynamicPartitionOverwrite(boolean closeAfterJobCommit)
      throws Exception {
    return dynamicPartitionOverwrite(closeAfterJobCommit, fs -> {});
  }

  /** Something done between the job commit and Spark's renames, through the file system. */
  @FunctionalInterface
  private interface AfterJobCommit {
    void run(FileSystem fs) throws IOException;
  }

  private Map<String, Long> dynamicPartitionOverwrite(
      boolean closeAfterJobCommit, AfterJobCommit afterJobCommit) throws Exception {
    Path output = new Path("s3a://" + BUCKET + "/out");
    // The table, written through the shim a moment before: its job commit's listings are fresh.
    JobConf first = job(output);
    JobID firstId = new JobID("202611260000", 1);
    JobContext firstContext = new JobContextImpl(first, firstId);
    FileOutputCommitter firstCommitter = new FileOutputCommitter(output, firstContext);
    firstCommitter.setupJob(firstContext);
    List<String> oldFiles = new ArrayList<>();
    for (int p = 0; p < 8; p++) {
      oldFiles.add("part=" + p + "/old-{t}.parquet");
    }
    runTasks(first, firstId, output, TASKS, oldFiles);
    firstCommitter.commitJob(firstContext);
    assertThat(store.objects(BUCKET, "out/part=7/")).hasSize(TASKS);

    Path staging = new Path(output, ".spark-staging-6f1c2d3e");
    JobConf job = job(staging);
    JobID id = new JobID("202611260000", 2);
    JobContext context = new JobContextImpl(job, id);
    FileOutputCommitter committer = new FileOutputCommitter(staging, context);
    List<String> files = new ArrayList<>();
    for (String partition : PARTITIONS) {
      files.add(partition + "/part-{t}.parquet");
    }
    trace.clear();

    committer.setupJob(context);
    runTasks(job, id, staging, TASKS, files);
    committer.commitJob(context);
    if (closeAfterJobCommit) {
      FileSystem.closeAll();
    }
    // Spark's HadoopMapReduceCommitProtocol, after the job commit, for each partition written.
    FileSystem fs = output.getFileSystem(job);
    afterJobCommit.run(fs);
    for (String partition : PARTITIONS) {
      Path finalPartition = new Path(output, partition);
      if (!fs.delete(finalPartition, true) && !fs.exists(finalPartition.getParent())) {
        fs.mkdirs(finalPartition.getParent());
      }
      assertThat(fs.rename(new Path(staging, partition), finalPartition)).isTrue();
    }
    fs.delete(staging, true);

    Map<String, Long> counts = counts(trace);
    for (String partition : PARTITIONS) {
      assertThat(store.objects(BUCKET, "out/" + partition + "/")).hasSize(TASKS);
    }
    assertThat(store.objects(BUCKET, "out/part=7/")).hasSize(TASKS);
    assertThat(store.objects(BUCKET, "out/.spark-staging-6f1c2d3e/")).isEmpty();
    assertThat(store.openUploads(BUCKET)).isEmpty();
    return counts;
  }
}
