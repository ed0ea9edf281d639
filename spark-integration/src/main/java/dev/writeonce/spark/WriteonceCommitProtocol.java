package dev.writeonce.spark;

import dev.writeonce.core.committer.CommitterProviders;
import dev.writeonce.core.committer.ConflictPolicy;
import dev.writeonce.core.committer.MultipartOutputCommitter;
import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.json.ManifestFormats;
import dev.writeonce.core.model.ConflictMode;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.model.TaskManifest;
import dev.writeonce.core.publish.Generations;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.apache.spark.internal.io.FileCommitProtocol;
import org.apache.spark.internal.io.FileNameSpec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Option;
import scala.collection.immutable.Seq;

/**
 * Spark's commit protocol for this library's committers: {@code
 * spark.sql.sources.commitProtocolClass=dev.writeonce.spark.WriteonceCommitProtocol}, with {@code
 * spark.hadoop.writeonce.committer} set to {@code directory} (staging, the default) or {@code
 * magic}.
 *
 * <p>Each task's pending uploads travel to the driver inside its task commit message, as a task
 * manifest in JSON: nothing per task is written to the store, and no cluster filesystem is needed.
 * Spark's output-commit coordinator lets one attempt per partition commit. The driver commits
 * through the job manifest. Overwrites (Spark's {@code deleteWithJob}) and dynamic partition
 * overwrite delete old objects only after the commit point, so readers never see a half-replaced
 * table.
 */
public class WriteonceCommitProtocol extends FileCommitProtocol implements Serializable {

  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(WriteonceCommitProtocol.class);

  private final String jobId;
  private final String path;
  private final boolean dynamicPartitionOverwrite;

  /**
   * Set by the driver's job setup in metastore publish mode and carried to tasks with the protocol:
   * the table's root, and the partition path of each current partition location.
   */
  private String publishRoot;

  private HashMap<String, String> locationFragments;

  /** Driver side, in metastore publish mode. */
  private transient MetastorePublication publication;

  /** Driver side: the job finished its commit, so a later failure has nothing to abort. */
  private transient volatile boolean jobFinished;

  /** Driver side: manifests of committed tasks, for abort; prefixes Spark asked to delete. */
  private transient List<TaskManifest> committedTasks;

  private transient TreeSet<String> deferredDeletes;
  private transient MultipartOutputCommitter driver;

  /** Task side: the committer of the running attempt. */
  private transient MultipartOutputCommitter task;

  public WriteonceCommitProtocol(String jobId, String path, boolean dynamicPartitionOverwrite) {
    this.jobId = jobId;
    this.path = path;
    this.dynamicPartitionOverwrite = dynamicPartitionOverwrite;
  }

  public WriteonceCommitProtocol(String jobId, String path) {
    this(jobId, path, false);
  }

  private static MultipartOutputCommitter committer(Path output, TaskAttemptContext context)
      throws IOException {
    String name = CommitterProviders.nameIn(context.getConfiguration());
    if (name.equals("partitioned")) {
      name = "directory"; // Spark decides partition overwrites itself: see commitJob.
    }
    return (MultipartOutputCommitter)
        CommitterProviders.find(name, WriteonceCommitProtocol.class.getClassLoader())
            .create(output, context);
  }

  /**
   * A task context for the driver's committer, which needs one only for its configuration; its job
   * id carries Spark's, so log lines of the driver name the job.
   */
  private TaskAttemptContext driverContext(JobContext job) {
    String tracker = "spark" + jobId.replaceAll("[^A-Za-z0-9]", "");
    return new TaskAttemptContextImpl(
        job.getConfiguration(), new TaskAttemptID(tracker, 0, TaskType.MAP, 0, 0));
  }

  /**
   * Driver-side state, made on first use: Spark calls {@link #deleteWithJob} before {@link
   * #setupJob}, and transient fields are null after the protocol is deserialized.
   */
  private synchronized List<TaskManifest> committedTasks() {
    if (committedTasks == null) {
      committedTasks = new ArrayList<>();
    }
    return committedTasks;
  }

  private synchronized TreeSet<String> deferredDeletes() {
    if (deferredDeletes == null) {
      deferredDeletes = new TreeSet<>();
    }
    return deferredDeletes;
  }

  /** Where the committers write: the table's root in publish mode, else the path Spark gave. */
  private Path destinationPath() {
    return new Path(publishRoot != null ? publishRoot : path);
  }

  @Override
  public void setupJob(JobContext job) {
    try {
      // Spark's write id is unique per write: the job's records go under it, and it names
      // this run of the job.
      job.getConfiguration().set(MultipartOutputCommitter.RECORDS_JOB_ID, jobId);
      job.getConfiguration().set(MultipartOutputCommitter.JOB_UUID, jobId);
      if (MetastorePublication.requested(job.getConfiguration())) {
        publication =
            MetastorePublication.forStatement(job.getConfiguration(), jobId, path).orElse(null);
        if (publication != null) {
          publishRoot = publication.rootPath();
          locationFragments = publication.locationFragments();
        }
      }
      TaskAttemptContext context = driverContext(job);
      driver = committer(destinationPath(), context);
      driver.setupJob(context);
      if (publication != null) {
        // Before any task writes: the generation is this run's, so that a driver that dies
        // leaves nothing in it that no record names.
        publication.claim(driver.storeGateway());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(
          "setting up job " + jobId + " for " + path + ": " + e.getMessage(), e);
    }
  }

  @Override
  public void setupTask(TaskAttemptContext context) {
    try {
      // The task's records (its intent) go under this write's id, where the driver looks.
      context.getConfiguration().set(MultipartOutputCommitter.RECORDS_JOB_ID, jobId);
      task = committer(destinationPath(), context);
      task.setupTask(context);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Older Spark code paths call this form; it names files as the other does. */
  @Override
  @SuppressWarnings("deprecation")
  public String newTaskTempFile(TaskAttemptContext context, Option<String> dir, String ext) {
    return newTaskTempFile(context, dir, FileNameSpec.apply("", ext));
  }

  @Override
  public String newTaskTempFile(TaskAttemptContext context, Option<String> dir, FileNameSpec spec) {
    int split = context.getTaskAttemptID().getTaskID().getId();
    String name =
        String.format(Locale.ROOT, "%spart-%05d-%s%s", spec.prefix(), split, jobId, spec.suffix());
    Path base;
    try {
      base = task.getWorkPath();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    String relative = dir.isDefined() ? dir.get() + "/" + name : name;
    if (publishRoot != null) {
      relative = Generations.runDir(jobId) + relative;
    }
    return new Path(base, relative).toString();
  }

  /** Older Spark code paths call this form; it names files as the other does. */
  @Override
  @SuppressWarnings("deprecation")
  public String newTaskTempFileAbsPath(TaskAttemptContext context, String absoluteDir, String ext) {
    return newTaskTempFileAbsPath(context, absoluteDir, FileNameSpec.apply("", ext));
  }

  @Override
  public String newTaskTempFileAbsPath(
      TaskAttemptContext context, String absoluteDir, FileNameSpec spec) {
    String fragment =
        locationFragments == null
            ? null
            : locationFragments.get(MetastorePublication.normalized(absoluteDir));
    if (fragment != null) {
      // A partition published earlier: its new files go to this run's generation.
      return newTaskTempFile(context, Option.apply(fragment), spec);
    }
    throw new UnsupportedOperationException(
        "partitions at custom locations ("
            + absoluteDir
            + ") are outside the destination "
            + path
            + ": the writeonce commit protocol commits only below its destination; write this"
            + " table with spark.sql.sources.commitProtocolClass unset");
  }

  @Override
  public TaskCommitMessage commitTask(TaskAttemptContext context) {
    TaskManifest committed = CoordinatedTaskCommit.commit(task, context);
    TaskManifest ours =
        new TaskManifest(
            jobId, committed.taskAttemptId(), committed.uploads(), committed.statistics());
    return new TaskCommitMessage(ManifestFormats.toJson(ours));
  }

  @Override
  public void abortTask(TaskAttemptContext context) {
    try {
      if (task != null) {
        task.abortTask(context);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void onTaskCommit(TaskCommitMessage message) {
    committedTasks().add(manifestOf(message));
  }

  /**
   * Overwrites ask to delete the destination, or a partition, before the job writes. The delete
   * waits until the commit point: until then readers keep seeing the old data, and an aborted job
   * leaves it in place.
   */
  @Override
  public boolean deleteWithJob(FileSystem fs, Path target, boolean recursive) {
    Destination destination = Destination.of(new Path(path).toUri());
    Destination deleted = Destination.of(fs.makeQualified(target).toUri());
    if (recursive
        && deleted.bucket().equals(destination.bucket())
        && deleted.prefix().startsWith(destination.prefix())) {
      deferredDeletes().add(deleted.prefix());
      // In metastore publish mode (decided at job setup, after this call) nothing is deleted:
      // the metastore is pointed at the new generation instead.
      LOG.info("Job {}: {} is replaced when the job commits", jobId, deleted);
      return true;
    }
    return super.deleteWithJob(fs, target, recursive);
  }

  @Override
  public void commitJob(JobContext job, Seq<TaskCommitMessage> messages) {
    List<TaskManifest> manifests = new ArrayList<>(messages.size());
    scala.collection.Iterator<TaskCommitMessage> each = messages.iterator();
    while (each.hasNext()) {
      manifests.add(manifestOf(each.next()));
    }
    if (publication != null) {
      commitAndPublish(manifests);
      return;
    }
    try {
      CommitterConfig config = CommitterConfig.from(job.getConfiguration());
      Destination destination = Destination.of(new Path(path).toUri());
      TreeSet<String> replaced = new TreeSet<>(deferredDeletes());
      if (dynamicPartitionOverwrite) {
        replaced.addAll(ConflictPolicy.partitionsWritten(destination, manifests));
      } else if (config.conflictMode() == ConflictMode.REPLACE) {
        replaced.add(destination.prefix());
      }
      // Fail mode is checked again at commit, under a claim on the destination.
      ConflictMode mode =
          !replaced.isEmpty()
              ? ConflictMode.REPLACE
              : config.conflictMode() == ConflictMode.FAIL
                  ? ConflictMode.FAIL
                  : ConflictMode.APPEND;
      driver.commitJob(jobId, manifests, mode, List.copyOf(replaced));
    } catch (IOException e) {
      throw new UncheckedIOException(
          "committing job " + jobId + " to " + path + ": " + e.getMessage(), e);
    }
  }

  /**
   * Publish mode: the job commits through its manifest into its own generation, replacing nothing
   * in place, then the metastore is pointed at it.
   */
  private void commitAndPublish(List<TaskManifest> manifests) {
    Destination root = Destination.of(destinationPath().toUri());
    Set<String> written = new TreeSet<>();
    for (TaskManifest manifest : manifests) {
      manifest.uploads().forEach(u -> written.add(Generations.fragmentOf(root, jobId, u.key())));
    }
    try {
      // Renewed at once, and it must be: no other statement took the generation for abandoned
      // while this job ran, so the files about to land in it stay recorded.
      publication.claim(driver.storeGateway());
      driver.commitJob(jobId, manifests, ConflictMode.APPEND, List.of());
      jobFinished = true;
      publication.publish(driver.storeGateway(), written);
    } catch (IOException e) {
      throw new UncheckedIOException(
          "committing job " + jobId + " to " + path + ": " + e.getMessage(), e);
    }
  }

  @Override
  public void abortJob(JobContext job) {
    if (jobFinished) {
      if (publication == null) {
        LOG.info("Job {}: its commit finished before the failure; nothing to abort", jobId);
        return;
      }
    }
    try {
      MultipartOutputCommitter committer =
          driver != null ? driver : committer(destinationPath(), driverContext(job));
      if (!jobFinished) {
        committer.abortJob(jobId, committedTasks());
      }
      if (publication != null) {
        // Its generation, unless a metastore call was made (its answer may have been lost).
        publication.discardUnpublished(committer.storeGateway());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(
          "aborting job " + jobId + " on " + path + ": " + e.getMessage(), e);
    }
  }

  private TaskManifest manifestOf(TaskCommitMessage message) {
    try {
      return ManifestFormats.taskManifestFromJson(
          (byte[]) message.obj(), "task commit message of job " + jobId);
    } catch (FormatException e) {
      throw new UncheckedIOException(e);
    }
  }
}
