package dev.writeonce.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.committer.WriteonceCommitterFactory;
import dev.writeonce.magic.MagicS3AFileSystem;
import dev.writeonce.teststore.S3Api;
import dev.writeonce.teststore.TestStore;
import dev.writeonce.teststore.TestStores;
import dev.writeonce.teststore.Traffic;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitter;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitterFactory;
import org.apache.hadoop.mapreduce.task.JobContextImpl;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.apache.hadoop.util.VersionInfo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A benchmark, not a test: the same task workload through Hadoop's own S3A magic committer and
 * through this library's, alternating, in one run on one MinIO. It writes requests per file and
 * task and job commit times to {@code docs/benchmarks/magic-committer.md}. Run it with
 *
 * <pre>
 * mvn -B install -DskipTests
 * mvn -B verify -pl integration-tests -Dit.stores=minio -Dit.test=MagicCommitterBenchmark
 * </pre>
 */
class MagicCommitterBenchmark {

  private static final int TASKS = 8;
  private static final int FILES_PER_TASK = 16;
  private static final int FILE_BYTES = 256 * 1024;
  private static final int ROUNDS = 3;

  @TempDir Path scratch;

  private record Run(
      String committer, Traffic traffic, long taskCommitNanos, long jobCommitNanos) {}

  private final TestStore store = TestStores.minio();

  private Configuration hadoopMagic(String bucket) {
    Configuration conf = store.configure(new Configuration());
    conf.set(
        "mapreduce.outputcommitter.factory.scheme.s3a",
        "org.apache.hadoop.fs.s3a.commit.S3ACommitterFactory");
    conf.set("fs.s3a.committer.name", "magic");
    conf.setBoolean("fs.s3a.committer.magic.enabled", true);
    conf.set("mapreduce.output.fileoutputformat.outputdir", "s3a://" + bucket + "/out");
    return conf;
  }

  private Configuration writeonceMagic(String bucket) {
    Configuration conf = store.configure(new Configuration());
    conf.set(
        "mapreduce.outputcommitter.factory.scheme.s3a", WriteonceCommitterFactory.class.getName());
    conf.set(WriteonceCommitterFactory.COMMITTER, "magic");
    conf.set("fs.s3a.impl", MagicS3AFileSystem.class.getName());
    conf.set("mapreduce.output.fileoutputformat.outputdir", "s3a://" + bucket + "/out");
    return conf;
  }

  /** Runs TASKS tasks of FILES_PER_TASK files through Hadoop's committer protocol. */
  private Run run(String name, Configuration conf, int round) throws Exception {
    JobID jobId = new JobID("2026112299", round);
    org.apache.hadoop.fs.Path out =
        new org.apache.hadoop.fs.Path(conf.get("mapreduce.output.fileoutputformat.outputdir"));
    JobContext job = new JobContextImpl(conf, jobId);
    TaskAttemptContext jobAttempt = attempt(conf, jobId, 0);
    PathOutputCommitter driver = PathOutputCommitterFactory.createCommitter(out, jobAttempt);
    byte[] data = new byte[FILE_BYTES];
    Arrays.fill(data, (byte) 'x');

    Traffic before = store.meter().read();
    driver.setupJob(job);
    long taskCommit = 0;
    for (int task = 0; task < TASKS; task++) {
      TaskAttemptContext context = attempt(conf, jobId, task);
      PathOutputCommitter committer = PathOutputCommitterFactory.createCommitter(out, context);
      committer.setupTask(context);
      for (int f = 0; f < FILES_PER_TASK; f++) {
        org.apache.hadoop.fs.Path file =
            new org.apache.hadoop.fs.Path(committer.getWorkPath(), "part-" + task + "-" + f);
        try (OutputStream stream = file.getFileSystem(conf).create(file, false)) {
          stream.write(data);
        }
      }
      long start = System.nanoTime();
      committer.commitTask(context);
      taskCommit += System.nanoTime() - start;
    }
    long start = System.nanoTime();
    driver.commitJob(job);
    long jobCommit = System.nanoTime() - start;
    Traffic traffic = store.meter().read().minus(before);
    return new Run(name, traffic, taskCommit, jobCommit);
  }

  private static TaskAttemptContext attempt(Configuration conf, JobID job, int task) {
    return new TaskAttemptContextImpl(
        conf, new TaskAttemptID(job.getJtIdentifier(), job.getId(), TaskType.MAP, task, 0));
  }

  @Test
  void hadoopMagicAgainstWriteonceMagic() throws Exception {
    List<Run> runs = new ArrayList<>();
    for (int round = 1; round <= ROUNDS; round++) {
      runs.add(run("hadoop magic", hadoopMagic(store.newBucket("bench-hadoop")), round));
      runs.add(run("writeonce magic", writeonceMagic(store.newBucket("bench-writeonce")), round));
    }
    for (Run run : runs) {
      assertThat(run.traffic().requests(S3Api.COMPLETE_MULTIPART_UPLOAD))
          .as("%s completed every file", run.committer())
          .isEqualTo(TASKS * FILES_PER_TASK);
    }
    write(runs);
  }

  /** Medians of each committer's rounds, and their ratios. */
  private static String summary(List<Run> runs, int files) {
    double[] hadoop = medians(runs, "hadoop", files);
    double[] ours = medians(runs, "writeonce", files);
    return String.format(
        Locale.ROOT,
        "%nMedians: requests per file %.2f (Hadoop) and %.2f (writeonce), %.1fx fewer; task"
            + " commits %.0f ms and %.0f ms, %.1fx faster; job commit %.0f ms and %.0f ms.%n",
        hadoop[0],
        ours[0],
        hadoop[0] / ours[0],
        hadoop[1],
        ours[1],
        hadoop[1] / ours[1],
        hadoop[2],
        ours[2]);
  }

  private static double[] medians(List<Run> runs, String prefix, int files) {
    List<Run> mine = runs.stream().filter(r -> r.committer().startsWith(prefix)).toList();
    return new double[] {
      median(
          mine.stream().mapToDouble(r -> r.traffic().totalRequests() / (double) files).toArray()),
      median(mine.stream().mapToDouble(r -> r.taskCommitNanos() / 1e6).toArray()),
      median(mine.stream().mapToDouble(r -> r.jobCommitNanos() / 1e6).toArray())
    };
  }

  private static double median(double[] values) {
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    return sorted[sorted.length / 2];
  }

  private void write(List<Run> runs) throws IOException {
    int files = TASKS * FILES_PER_TASK;
    StringBuilder md = new StringBuilder();
    md.append("# Magic committers compared\n\n");
    md.append("Hadoop's S3A magic committer (hadoop-aws ")
        .append(VersionInfo.getVersion())
        .append(", `fs.s3a.committer.name=magic`) against this library's magic committer, in one")
        .append(" run on one local MinIO, alternating, ")
        .append(ROUNDS)
        .append(" rounds each. Workload: ")
        .append(TASKS)
        .append(" tasks of ")
        .append(FILES_PER_TASK)
        .append(" files of ")
        .append(FILE_BYTES / 1024)
        .append(" KiB (")
        .append(files)
        .append(" files), driven through Hadoop's committer protocol. Requests are MinIO's own")
        .append(" counts from job setup to the end of job commit.\n\n");
    md.append(
            "| committer | round | requests | requests per file | PUT | HEAD | LIST | GET | DELETE")
        .append(" | COPY | task commits, ms (sum) | job commit, ms |\n");
    md.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    int round = 0;
    for (Run run : runs) {
      Traffic t = run.traffic();
      round = run.committer().startsWith("hadoop") ? round + 1 : round;
      md.append(
          String.format(
              Locale.ROOT,
              "| %s | %d | %d | %.2f | %d | %d | %d | %d | %d | %d | %.0f | %.0f |%n",
              run.committer(),
              round,
              t.totalRequests(),
              t.totalRequests() / (double) files,
              t.requests(S3Api.PUT_OBJECT),
              t.requests(S3Api.HEAD_OBJECT),
              t.requests(S3Api.LIST_OBJECTS),
              t.requests(S3Api.GET_OBJECT),
              t.requests(S3Api.DELETE_OBJECT) + t.requests(S3Api.DELETE_OBJECTS),
              t.requests(S3Api.COPY_OBJECT),
              run.taskCommitNanos() / 1e6,
              run.jobCommitNanos() / 1e6));
    }
    md.append(summary(runs, files));
    md.append("\nEvery run also sends one CreateMultipartUpload, one UploadPart and one")
        .append(
            " CompleteMultipartUpload per file; the columns above show where the rest goes.\n\n");
    md.append("Machine: ")
        .append(Runtime.getRuntime().availableProcessors())
        .append(" cores, Java ")
        .append(System.getProperty("java.version"))
        .append(", ")
        .append(LocalDate.now())
        .append(". Made by `MagicCommitterBenchmark`:\n\n```\nmvn -B install -DskipTests\n")
        .append(
            "mvn -B verify -pl integration-tests -Dit.stores=minio -Dit.test=MagicCommitterBenchmark\n```\n");
    Path docs = Path.of(System.getProperty("writeonce.project.root", ".."), "docs", "benchmarks");
    Files.createDirectories(docs);
    Files.writeString(docs.resolve("magic-committer.md"), md.toString());
  }
}
