package dev.writeonce.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.teststore.S3Api;
import dev.writeonce.teststore.TestStore;
import dev.writeonce.teststore.Traffic;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.JobStatus;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitter;
import org.apache.hadoop.mapreduce.task.JobContextImpl;
import org.junit.jupiter.api.Test;

/**
 * The committer contract for the staging directory committer, and its uploads of files as they
 * close.
 */
class DirectoryCommitterIT extends AbstractCommitterContractIT {

  private static final List<String> FILES =
      List.of("day=1/part-0", "day=1/part-1", "day=2/part-0", "day=3/part-0");

  DirectoryCommitterIT(TestStore store) {
    super(store);
  }

  @Override
  protected String committerName() {
    return "directory";
  }

  private Configuration uploadingOnClose() {
    Configuration conf = protocolConf();
    conf.set(CommitterConfig.UPLOAD_ON_CLOSE, "true");
    conf.set(CommitterConfig.UPLOAD_ON_CLOSE_MIN_SIZE, "0");
    return conf;
  }

  private List<String> keys() {
    return FILES.stream().map(f -> "out/" + f).toList();
  }

  private PathOutputCommitter setUpTask(Configuration conf, TaskAttemptContext context)
      throws Exception {
    PathOutputCommitter committer = committer(conf, context);
    committer.setupTask(context);
    return committer;
  }

  /** Waits until every file has an open upload: they started as the files closed. */
  private void awaitOpenUploads() throws InterruptedException {
    for (int i = 0; i < 200 && view.openUploads(keys()).size() < FILES.size(); i++) {
      Thread.sleep(50);
    }
    assertThat(view.openUploads(keys())).as("uploads open before task commit").hasSize(4);
  }

  @Test
  void filesAreUploadedOnceAsTheyCloseBeforeTheTaskCommitsAtThreeRequestsEach() throws Exception {
    Configuration conf = uploadingOnClose();
    JobContext job = new JobContextImpl(conf, jobId);
    committer(conf, attempt(conf, 0, 0)).setupJob(job);
    TaskAttemptContext context = attempt(conf, 0, 0);
    PathOutputCommitter committer = setUpTask(conf, context);

    Traffic before = store().meter().read();
    for (String file : FILES) {
      writeOutput(context, committer, file, "rows of " + file + "\n");
    }
    awaitOpenUploads();
    committer.commitTask(context);
    Traffic task = store().meter().read().minus(before);
    committer(conf, attempt(conf, 0, 0)).commitJob(job);

    // Each file was uploaded once, as it closed: the task commit uploaded none again.
    assertThat(task.requests(S3Api.CREATE_MULTIPART_UPLOAD))
        .as("task: %s", task)
        .isEqualTo(FILES.size());
    // Per file its create and part and at most one intent (shared when files close together);
    // the task manifest and one read of the job record. The test's own listings aside.
    long listings = task.requests(S3Api.LIST_MULTIPART_UPLOADS);
    assertThat(task.totalRequests() - listings)
        .as("task requests: %s", task)
        .isLessThanOrEqualTo(3L * FILES.size() + 2);
    for (String file : FILES) {
      assertThat(view.read("out/" + file)).isEqualTo("rows of " + file + "\n");
    }
    assertThat(view.openUploads(keys())).isEmpty();
    assertThat(view.keys("out/_writeonce/")).isEmpty();
  }

  @Test
  void uploadsStartedAsFilesClosedAreAbortedWithTheTaskAndNothingIsVisible() throws Exception {
    Configuration conf = uploadingOnClose();
    JobContext job = new JobContextImpl(conf, jobId);
    committer(conf, attempt(conf, 0, 0)).setupJob(job);
    TaskAttemptContext context = attempt(conf, 0, 0);
    PathOutputCommitter committer = setUpTask(conf, context);
    Traffic before = store().meter().read();
    for (String file : FILES) {
      writeOutput(context, committer, file, "rows of " + file + "\n");
    }
    committer.abortTask(context);
    committer(conf, attempt(conf, 0, 0)).abortJob(job, JobStatus.State.FAILED);
    Traffic traffic = store().meter().read().minus(before);

    // Uploads not yet started when the task aborted are never created.
    assertThat(traffic.requests(S3Api.ABORT_MULTIPART_UPLOAD))
        .as("every upload created is aborted: %s", traffic)
        .isEqualTo(traffic.requests(S3Api.CREATE_MULTIPART_UPLOAD));
    assertThat(traffic.requests(S3Api.COMPLETE_MULTIPART_UPLOAD)).isZero();
    assertThat(view.openUploads(keys())).isEmpty();
    assertThat(view.keys("out/")).noneMatch(k -> k.startsWith("out/day="));
  }
}
