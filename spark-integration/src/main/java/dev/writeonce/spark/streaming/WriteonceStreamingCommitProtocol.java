package dev.writeonce.spark.streaming;

import dev.writeonce.core.committer.CommitterProviders;
import dev.writeonce.core.committer.MultipartOutputCommitter;
import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.json.ManifestFormats;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.TaskManifest;
import dev.writeonce.core.store.StoreGateway;
import dev.writeonce.core.store.check.StoreTrust;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.apache.spark.internal.io.FileCommitProtocol;
import org.apache.spark.internal.io.FileNameSpec;
import org.apache.spark.sql.execution.streaming.ManifestFileCommitProtocol;
import org.apache.spark.sql.execution.streaming.sinks.FileStreamSinkLog;
import org.apache.spark.sql.execution.streaming.sinks.SinkFileStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Option;
import scala.collection.immutable.Seq;

/**
 * Structured Streaming's file sink without a visible file of a batch that did not commit: {@code
 * spark.sql.streaming.commitProtocolClass=dev.writeonce.spark.streaming.WriteonceStreamingCommitProtocol},
 * with {@link WriteonceCheckpointFileManager} as the checkpoint file manager.
 *
 * <p>Tasks write their files as multipart uploads that nothing completes (this library's directory
 * committer: local files, uploaded as parts at task commit). The driver then, per batch:
 *
 * <ol>
 *   <li>records the batch's uploads under {@code <sink>/_writeonce/streaming/<batch>-<run>.json},
 *       so that a driver that dies from here on leaves nothing no record names;
 *   <li>adds the batch's entry to the sink log, written with {@code If-None-Match: *} by the
 *       checkpoint file manager: the commit point, won by exactly one run of the query;
 *   <li>completes the uploads, then removes the record and the tasks' intents.
 * </ol>
 *
 * <p>A run that loses the entry to another run, or whose batch fails before it, aborts its uploads:
 * no file of it ever becomes visible, to the log's readers or to readers of the directory. A run
 * that dies after it won leaves its record, and the next batch of the query (any run) completes its
 * uploads: the log lists them, so they are decided. A record whose batch the log gives to another
 * run is rolled back; a record of a batch the log does not hold yet is left to its run, which may
 * still win it.
 */
public class WriteonceStreamingCommitProtocol extends ManifestFileCommitProtocol {

  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(WriteonceStreamingCommitProtocol.class);

  /** Spark's setting that names this class. */
  public static final String SETTING = "spark.sql.streaming.commitProtocolClass";

  /** Where the batches' records are kept, under the sink. */
  static final String RECORDS = "_writeonce/streaming/";

  private final String path;

  /** Where runs' ids come from: random; a simulation draws them from its seed to replay it. */
  static volatile java.util.function.Supplier<UUID> runIds = UUID::randomUUID;

  /** This run of the batch: in the files' names, the record's name and the tasks' records. */
  private final String run = runIds.get().toString();

  private long batchId = -1;

  private transient FileStreamSinkLog fileLog;

  /** Driver side: the committer whose store the batch's uploads are completed or aborted in. */
  private transient MultipartOutputCommitter driver;

  private transient List<TaskManifest> committedTasks;

  /** Driver side: this JVM knew of no record of another run when the batch began. */
  private transient boolean settledBefore;

  /** Driver side: the sink's changes in this JVM once this batch began. */
  private transient long changesAtSetup;

  /** Driver side: the batch was lost to another run and its uploads and records are gone. */
  private transient volatile boolean discarded;

  /** Driver side: the batch's log entry was sent, so only the log decides its uploads. */
  private transient volatile boolean logAttempted;

  /** Driver side: the batch's log entry is this run's, so its uploads must be completed. */
  private transient volatile boolean won;

  /** Task side: the committer of the running attempt. */
  private transient MultipartOutputCommitter task;

  public WriteonceStreamingCommitProtocol(String jobId, String path) {
    super(jobId, path);
    this.path = path;
  }

  @Override
  public void setupManifestOptions(FileStreamSinkLog fileLog, long batchId) {
    super.setupManifestOptions(fileLog, batchId);
    this.fileLog = fileLog;
    this.batchId = batchId;
  }

  /** The tasks' records: one job id per run of a batch. */
  private String recordsJobId() {
    return recordsJobId(batchId, run);
  }

  static String recordsJobId(long batch, String run) {
    return "stream-" + batch + "-" + run;
  }

  private String recordKey(Destination sink) {
    return sink.prefix() + RECORDS + batchId + "-" + run + ".json";
  }

  private static MultipartOutputCommitter committer(Path output, TaskAttemptContext context)
      throws IOException {
    return (MultipartOutputCommitter)
        CommitterProviders.find(
                "directory", WriteonceStreamingCommitProtocol.class.getClassLoader())
            .create(output, context);
  }

  @Override
  public void setupJob(JobContext job) {
    if (fileLog == null) {
      throw new IllegalStateException(
          SETTING
              + "="
              + getClass().getName()
              + " serves Structured Streaming's file sink only; "
              + path
              + " was written without the sink's log");
    }
    String manager = job.getConfiguration().getTrimmed(WriteonceCheckpointFileManager.SETTING, "");
    if (!manager.equals(WriteonceCheckpointFileManager.class.getName())) {
      throw new IllegalStateException(
          "batch "
              + batchId
              + " of the sink "
              + path
              + ": "
              + SETTING
              + " needs "
              + WriteonceCheckpointFileManager.SETTING
              + "="
              + WriteonceCheckpointFileManager.class.getName()
              + " (it is "
              + (manager.isEmpty() ? "unset" : manager)
              + "): the batch's log entry is its commit point only when it is written with"
              + " If-None-Match. Nothing was written.");
    }
    job.getConfiguration().set(MultipartOutputCommitter.RECORDS_JOB_ID, recordsJobId());
    job.getConfiguration().set(MultipartOutputCommitter.JOB_UUID, run);
    try {
      TaskAttemptContext context = driverContext(job);
      driver = committer(new Path(path), context);
      StoreTrust.require(
          new Path(path).getFileSystem(job.getConfiguration()),
          Destination.of(new Path(path).toUri()).prefix(),
          job.getConfiguration(),
          "batch " + batchId + " of the streaming sink " + path,
          job.getConfiguration());
      Destination sink = Destination.of(new Path(path).toUri());
      new StreamingRecords(driver.storeGateway(), sink).settle(run, false);
      // From here this run leaves records until its batch ends well: should it fail, the next
      // settle of this JVM lists them.
      settledBefore = StreamingRecords.isSettled(sink);
      StreamingRecords.unsettled(sink);
      changesAtSetup = StreamingRecords.changes(sink);
    } catch (IOException e) {
      throw new UncheckedIOException(
          "setting up batch " + batchId + " of the streaming sink " + path + ": " + e.getMessage(),
          e);
    }
    committedTasks = new ArrayList<>();
  }

  private TaskAttemptContext driverContext(JobContext job) {
    return new TaskAttemptContextImpl(
        job.getConfiguration(), new TaskAttemptID("stream" + batchId, 0, TaskType.MAP, 0, 0));
  }

  @Override
  public void setupTask(TaskAttemptContext context) {
    try {
      context.getConfiguration().set(MultipartOutputCommitter.RECORDS_JOB_ID, recordsJobId());
      context.getConfiguration().set(MultipartOutputCommitter.JOB_UUID, run);
      task = committer(new Path(path), context);
      task.setupTask(context);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public String newTaskTempFile(TaskAttemptContext context, Option<String> dir, FileNameSpec spec) {
    int split = context.getTaskAttemptID().getTaskID().getId();
    String name =
        String.format(Locale.ROOT, "%spart-%05d-%s%s", spec.prefix(), split, run, spec.suffix());
    try {
      Path base = task.getWorkPath();
      return new Path(base, dir.isDefined() ? dir.get() + "/" + name : name).toString();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public String newTaskTempFileAbsPath(
      TaskAttemptContext context, String absoluteDir, FileNameSpec spec) {
    throw new UnsupportedOperationException(
        "files outside the sink's directory (" + absoluteDir + ") are not written by " + SETTING);
  }

  @Override
  public FileCommitProtocol.TaskCommitMessage commitTask(TaskAttemptContext context) {
    TaskManifest committed = dev.writeonce.spark.CoordinatedTaskCommit.commit(task, context);
    return new FileCommitProtocol.TaskCommitMessage(ManifestFormats.toJson(committed));
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
  public void onTaskCommit(FileCommitProtocol.TaskCommitMessage message) {
    committedTasks.add(manifestOf(message));
  }

  @Override
  public void commitJob(JobContext job, Seq<FileCommitProtocol.TaskCommitMessage> messages) {
    List<PendingUpload> uploads = new ArrayList<>();
    java.util.Set<String> attempts = new java.util.HashSet<>();
    scala.collection.Iterator<FileCommitProtocol.TaskCommitMessage> each = messages.iterator();
    while (each.hasNext()) {
      TaskManifest manifest = manifestOf(each.next());
      uploads.addAll(manifest.uploads());
      attempts.add(manifest.taskAttemptId());
    }
    Destination sink = Destination.of(new Path(path).toUri());
    try {
      StoreGateway store = driver.storeGateway();
      TaskManifest record = new TaskManifest(recordsJobId(), "batch-" + batchId, uploads, Map.of());
      // The name carries this run's id: no other writer, and a retry writes the same bytes.
      store.putObject(recordKey(sink), ManifestFormats.toJson(record), false);
      logAttempted = true;
      boolean added;
      try {
        added = fileLog.add(batchId, statuses(sink, uploads, job));
      } catch (RuntimeException e) {
        if (!lostToAnotherRun(e)) {
          // No answer: abortJob and the next settle decide by the log, never by this failure.
          throw e;
        }
        added = false;
      }
      if (!added) {
        // The entry exists: this run's own write whose answer was lost, or another run's. Only the
        // entry itself tells, and only another run's entry lets this run's uploads go.
        StreamingRecords.Owner owner = new StreamingRecords(store, sink).ownerOfEntry(batchId, run);
        if (owner == StreamingRecords.Owner.OTHER_RUN
            || owner == StreamingRecords.Owner.EMPTY && !uploads.isEmpty()) {
          throw lost(store, sink, uploads);
        }
        if (owner != StreamingRecords.Owner.THIS_RUN && owner != StreamingRecords.Owner.EMPTY) {
          throw new IllegalStateException(
              "batch "
                  + batchId
                  + " of the streaming sink "
                  + path
                  + ": whether its log entry is this run's could not be read ("
                  + owner
                  + "); its record stays, and the query's next start completes or discards its"
                  + " files as the log says");
        }
      }
      won = true;
      StreamingRecords.complete(store, sink, batchId, uploads);
      try {
        StreamingRecords.removeAfterCommit(
            store, sink, recordKey(sink), recordsJobId(), run, attempts, uploads);
      } catch (IOException | RuntimeException e) {
        // The batch is committed: its cleanup is not its outcome. What is left is recorded, and
        // the next opening of the sink removes it.
        StreamingRecords.unsettled(sink);
        LOG.warn(
            "Batch {} of {} is committed; its records were not all removed: {}",
            batchId,
            path,
            e.toString());
        return;
      }
      LOG.info("Batch {} of {}: {} files committed", batchId, path, uploads.size());
      if (settledBefore) {
        StreamingRecords.settledAgain(sink, changesAtSetup);
      } else {
        settleAfterCommit(store, sink);
      }
    } catch (IOException e) {
      StreamingRecords.unsettled(sink);
      throw new UncheckedIOException(
          "committing batch " + batchId + " of the streaming sink " + path + ": " + e.getMessage(),
          e);
    } catch (RuntimeException e) {
      StreamingRecords.unsettled(sink);
      throw e;
    }
  }

  /**
   * Records of this batch by runs that lost it are decided now that the log holds it. The batch is
   * committed: a failure here is logged, and the next batch or start of the query settles them.
   */
  private void settleAfterCommit(StoreGateway store, Destination sink) {
    try {
      new StreamingRecords(store, sink).settle(run, false);
    } catch (IOException | RuntimeException e) {
      StreamingRecords.unsettled(sink);
      LOG.warn(
          "Batch {} of {} is committed; the records of other runs were not settled: {}",
          batchId,
          path,
          e.toString());
    }
  }

  /**
   * Another run holds the batch's log entry: Spark's error for two runs, or the manager's cause.
   */
  private static boolean lostToAnotherRun(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof org.apache.hadoop.fs.FileAlreadyExistsException
          || t instanceof java.util.ConcurrentModificationException) {
        return true;
      }
    }
    return false;
  }

  /** Aborts this run's uploads and removes its records; the batch is another run's. */
  private IllegalStateException lost(StoreGateway store, Destination sink, List<PendingUpload> mine)
      throws IOException {
    StreamingRecords.abortRun(store, sink, recordsJobId(), run, mine);
    StreamingRecords.remove(store, sink, recordKey(sink), recordsJobId());
    discarded = true;
    return new IllegalStateException(
        "batch "
            + batchId
            + " of the streaming sink "
            + path
            + " was committed by another run of the query; this run's "
            + mine.size()
            + " files were discarded and none became visible. Two runs of one query must not"
            + " share a checkpoint location: stop one of them.");
  }

  private SinkFileStatus[] statuses(Destination sink, List<PendingUpload> uploads, JobContext job)
      throws IOException {
    Path root = new Path(path);
    long blockSize = root.getFileSystem(job.getConfiguration()).getDefaultBlockSize(root);
    long now = System.currentTimeMillis();
    SinkFileStatus[] statuses = new SinkFileStatus[uploads.size()];
    for (int i = 0; i < statuses.length; i++) {
      PendingUpload upload = uploads.get(i);
      statuses[i] =
          new SinkFileStatus(
              // A partition directory may hold an escaped '%' or a space.
              StreamingRecords.listedPath(sink, upload.key()),
              upload.length(),
              false,
              now,
              1,
              blockSize,
              FileStreamSinkLog.ADD_ACTION());
    }
    return statuses;
  }

  @Override
  public void abortJob(JobContext job) {
    if (won) {
      StreamingRecords.unsettled(Destination.of(new Path(path).toUri()));
      LOG.warn(
          "Batch {} of {}: its log entry is this run's; its record stays, and the next batch"
              + " completes its files",
          batchId,
          path);
      return;
    }
    if (driver == null || discarded) {
      return; // set up failed before anything was written, or the loss was cleaned up already
    }
    Destination sink = Destination.of(new Path(path).toUri());
    try {
      StoreGateway store = driver.storeGateway();
      if (logAttempted) {
        // The entry may be this run's, or may still arrive: only another run's lets go.
        StreamingRecords.Owner owner = new StreamingRecords(store, sink).ownerOfEntry(batchId, run);
        boolean anotherRuns =
            owner == StreamingRecords.Owner.OTHER_RUN
                || owner == StreamingRecords.Owner.EMPTY && !knownUploads().isEmpty();
        if (!anotherRuns) {
          StreamingRecords.unsettled(sink);
          LOG.warn(
              "Batch {} of {}: its log entry was sent and is {}; its record stays, and the"
                  + " query's next start completes or discards its files as the log says",
              batchId,
              path,
              owner);
          return;
        }
      }
      StreamingRecords.abortRun(store, sink, recordsJobId(), run, knownUploads());
      StreamingRecords.remove(store, sink, recordKey(sink), recordsJobId());
    } catch (IOException e) {
      throw new UncheckedIOException(
          "aborting batch " + batchId + " of the streaming sink " + path + ": " + e.getMessage(),
          e);
    }
  }

  /** The uploads of the tasks that committed, as the driver heard of them. */
  private List<PendingUpload> knownUploads() {
    List<PendingUpload> known = new ArrayList<>();
    if (committedTasks != null) {
      committedTasks.forEach(manifest -> known.addAll(manifest.uploads()));
    }
    return known;
  }

  private TaskManifest manifestOf(FileCommitProtocol.TaskCommitMessage message) {
    try {
      return ManifestFormats.taskManifestFromJson(
          (byte[]) message.obj(), "task commit message of batch " + batchId);
    } catch (FormatException e) {
      throw new UncheckedIOException(e);
    }
  }
}
