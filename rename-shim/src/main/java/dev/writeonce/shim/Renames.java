package dev.writeonce.shim;

import dev.writeonce.core.model.PendingFile;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.store.KeyProbe;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.StoreGateway;
import dev.writeonce.core.upload.UploadCompletion;
import dev.writeonce.core.work.Tasks;
import dev.writeonce.core.work.WorkerPool;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import org.apache.hadoop.fs.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Renames of what lies under temporary directories. Between temporary locations a rename moves
 * records only; into a file's predicted final key it completes the file's upload (queued, for a
 * file of a job commit's round: {@link CompletionQueue}); anywhere else it is a miss, which {@link
 * ShimMisses} completes and copies, or which is refused ({@link ShimConfig#ON_MISS}). Each rename
 * reports what it changed to its {@link Operation}.
 */
final class Renames {

  private static final Logger LOG = LoggerFactory.getLogger(Renames.class);

  private final StoreGateway gateway;
  private final String bucket;
  private final ShimConfig shim;
  private final Predicate<String> temporary;
  private final PendingRecords records;
  private final KnownKeys known;
  private final SeenListings seen;
  private final CompletionQueue queue;
  private final ShimMisses misses;
  private final ShimStatistics counters;
  private final WorkerPool pool;
  private final S3ACallbacks s3a;
  private final Set<String> missesReported = ConcurrentHashMap.newKeySet();

  /** One instance, so that the barrier deletes the records of this gateway's files in bulk. */
  private final CompletionQueue.RecordDeletes recordDeletes;

  Renames(
      StoreGateway gateway,
      ShimConfig shim,
      Predicate<String> temporary,
      PendingRecords records,
      KnownKeys known,
      SeenListings seen,
      CompletionQueue queue,
      ShimMisses misses,
      ShimStatistics counters,
      WorkerPool pool,
      S3ACallbacks s3a) {
    this.gateway = gateway;
    this.bucket = gateway.bucket();
    this.shim = shim;
    this.temporary = temporary;
    this.records = records;
    this.known = known;
    this.seen = seen;
    this.queue = queue;
    this.misses = misses;
    this.counters = counters;
    this.pool = pool;
    this.s3a = s3a;
    this.recordDeletes = records::delete;
  }

  /**
   * Renames a path under a temporary directory, with Hadoop's semantics and result: a pending file
   * moves its record or completes its upload, a directory moves all it holds, and an ordinary
   * object is renamed by S3A. When the rename moved the last files of a job commit's round, it
   * waits for the round's completions and fails with the first that failed.
   */
  boolean rename(Operation op, Path src, String srcKey, String dstKey) throws IOException {
    // The source is usually a file this JVM wrote or listed, or a directory: look there first.
    PendingFile file = known.record(srcKey).orElse(null);
    List<ObjectInfo> under = List.of();
    if (file == null) {
      Optional<List<ObjectInfo>> listed = op.objectsUnder(srcKey);
      under = listed.isPresent() ? listed.get() : seen.objects(srcKey);
      if (under.isEmpty()) {
        Optional<PendingRecords.Found> found = records.find(srcKey);
        if (found.isEmpty()) {
          LOG.debug("rename {} -> {}: source does not exist", src, dstKey);
          op.report().succeeded();
          return false;
        }
        if (!found.get().isRecord()) {
          counters.plainRenames.incrementAndGet();
          boolean renamed = s3a.rename(s3a.pathOf(srcKey), s3a.pathOf(dstKey));
          if (renamed) {
            op.report().removed(srcKey);
            op.report().unsure(dstKey); // into an existing directory, or onto the key
            op.report().succeeded();
          }
          return renamed;
        }
        file = found.get().record();
      }
    }
    Optional<String> target = renameTarget(op, src, srcKey, dstKey);
    if (target.isEmpty()) {
      LOG.debug("rename {} -> {}: destination exists or lies inside the source", src, dstKey);
      op.report().succeeded();
      return false;
    }
    List<String> moved = new ArrayList<>();
    if (file != null) {
      Placed placed = move(srcKey, file, target.get(), true);
      if (!placed.queued()) {
        records.delete(recordKeys(srcKey, file));
      }
      moved.add(srcKey);
      op.report().removed(srcKey);
      op.report().wrote(target.get(), placed.object());
    } else {
      List<ObjectInfo> placed = renameDirectory(srcKey, under, target.get(), moved);
      op.report().removed(srcKey);
      op.report().tree(target.get(), placed);
    }
    op.report().succeeded();
    endOfRound(srcKey, moved);
    return true;
  }

  /**
   * The key a rename gives the source, with Hadoop's semantics: the destination itself, or inside
   * it when it is an existing directory; empty when the destination is an existing file or lies
   * under the source. What this JVM knows of the destination answers first (absent: no request).
   */
  private Optional<String> renameTarget(Operation op, Path src, String srcKey, String dstKey)
      throws IOException {
    if (dstKey.equals(srcKey) || dstKey.startsWith(srcKey + "/")) {
      return Optional.empty();
    }
    if (dstKey.isEmpty()) {
      return Optional.of(src.getName());
    }
    Known destination = op.known(dstKey);
    if (destination.isAbsent()) {
      counters.destinationChecksSkipped.incrementAndGet();
      return Optional.of(dstKey);
    }
    boolean isFile;
    boolean isDirectory;
    if (destination.isUnknown()) {
      KeyProbe probe = gateway.probe(dstKey);
      isFile = probe.file().isPresent();
      isDirectory = probe.directory();
    } else {
      isFile = destination.isFile();
      isDirectory = destination.isDirectory();
    }
    if (isFile) {
      return Optional.empty();
    }
    if (isDirectory) {
      String inside = dstKey + "/" + src.getName();
      Known within = op.known(inside);
      boolean taken = !within.isAbsent() && (within.exists() || gateway.probe(inside).exists());
      return taken ? Optional.empty() : Optional.of(inside);
    }
    return Optional.of(dstKey);
  }

  /**
   * Whether the completion of a rename from this key may be queued: a file of a job commit's round
   * ({@link CompletionQueue#inRound}), unless queueing is turned off.
   */
  private boolean queueable(String srcKey) {
    return shim.queueCompletions() && Layouts.isCommittedTaskFile(srcKey) && queue.inRound(srcKey);
  }

  /**
   * What moving one pending file did: the object now at the target, and whether its old record
   * stays (its completion or move queued, or the file moved in this JVM's view only).
   */
  private record Placed(ObjectInfo object, boolean queued) {}

  /**
   * Puts one pending file at a new key: a record moved between temporary locations, an upload
   * completed (queued, where allowed, for a round's file), or a miss. The caller deletes the old
   * record, unless the completion was queued: then the barrier deletes it once the completion went
   * through.
   */
  private Placed move(String srcKey, PendingFile file, String targetKey, boolean mayQueue)
      throws IOException {
    if (temporary.test(targetKey)) {
      if (queueable(srcKey)
          && isMergeOf(srcKey, targetKey)
          && Layouts.isInSparkStaging(targetKey)
          && known.canMoveInView()) {
        // The job commit merges a committed task's file into Spark's staging directory of a
        // dynamic partition overwrite, which Spark's driver renames into place next, in this JVM:
        // the record stays where it is, and the file moves in this JVM's view only. Nowhere else:
        // into Hive's staging directory, say, Hive's client may move the files from another
        // process (or class loader), which would find them missing.
        Optional<ObjectInfo> stored = known.recordObject(srcKey);
        if (stored.isPresent()) {
          counters.recordsMovedInView.incrementAndGet();
          return new Placed(known.moveInView(srcKey, targetKey, file, stored.get()), true);
        }
      }
      if (mayQueue && queueable(srcKey) && isMergeOf(srcKey, targetKey)) {
        // A round's record moved by the merge into a temporary output (a dynamic partition
        // overwrite's staging directory) where it cannot move in view only: queued like a
        // completion, its old copy deleted with the round's other records once the move went
        // through.
        queue.queue(
            srcKey,
            recordKeys(srcKey, file),
            targetKey,
            () -> {
              records.move(targetKey, file);
              counters.recordsMoved.incrementAndGet();
            },
            recordDeletes,
            this,
            counters);
        return new Placed(new ObjectInfo(targetKey, -1, null, 0), true);
      }
      ObjectInfo written = records.move(targetKey, file);
      counters.recordsMoved.incrementAndGet();
      return new Placed(written, false);
    }
    if (!file.closed()) {
      throw new IOException(
          "cannot rename s3a://"
              + bucket
              + "/"
              + srcKey
              + " into place: its writer never closed (it is still writing, or it died), so its"
              + " upload to s3a://"
              + bucket
              + "/"
              + file.key()
              + " is incomplete. Delete the path to abort the upload.");
    }
    PendingUpload upload = file.upload();
    ObjectInfo placed = new ObjectInfo(targetKey, -1, null, 0);
    if (!targetKey.equals(file.key())) {
      miss(srcKey, upload, targetKey);
      return new Placed(placed, false);
    }
    if (mayQueue && queueable(srcKey)) {
      queue.queue(
          srcKey,
          recordKeys(srcKey, file),
          targetKey,
          () -> {
            completeOnce(upload);
            counters.uploadsCompleted.incrementAndGet();
          },
          recordDeletes,
          this,
          counters);
      return new Placed(placed, true);
    }
    completeOnce(upload);
    counters.uploadsCompleted.incrementAndGet();
    return new Placed(placed, false);
  }

  /** Whether a rename is FileOutputCommitter's job commit merging a committed task's file. */
  private static boolean isMergeOf(String sourceKey, String targetKey) {
    return Layouts.mergeDestinationOf(sourceKey).filter(targetKey::equals).isPresent();
  }

  private List<String> recordKeys(String fileKey, PendingFile file) {
    return records.storedKeys(fileKey, file);
  }

  /** When the rename moved the last files of a round: the merge's own barrier. */
  private void endOfRound(String srcKey, List<String> moved) throws IOException {
    Optional<String> jobAttempt = Layouts.jobAttemptOf(srcKey);
    if (jobAttempt.isPresent() && !moved.isEmpty()) {
      queue.moved(jobAttempt.get(), moved, counters);
    }
  }

  /** Completes an upload, or confirms by HEAD that an earlier completion went through. */
  private void completeOnce(PendingUpload upload) throws IOException {
    UploadCompletion.completeOrConfirm(gateway, upload, (failure, found) -> failure);
  }

  /**
   * A rename to a name the rules did not predict: the upload can only create its own key, so it is
   * completed there and copied (see {@link ShimMisses}), or refused when {@link ShimConfig#ON_MISS}
   * says so. Refused too when that key already holds another object, which the completion would
   * overwrite.
   */
  private void miss(String srcKey, PendingUpload upload, String targetKey) throws IOException {
    String from = "s3a://" + bucket + "/" + srcKey;
    String to = "s3a://" + bucket + "/" + targetKey;
    String predicted = "s3a://" + bucket + "/" + upload.key();
    if (shim.onMiss() == ShimConfig.OnMiss.FAIL) {
      counters.missesRefused.incrementAndGet();
      throw new IOException(refusedMiss(from, to, predicted));
    }
    if (gateway.probe(upload.key()).exists()) {
      throw new IOException(predictedTaken(from, to, predicted, upload.key(), targetKey));
    }
    misses.completeAndCopy(
        srcKey,
        upload,
        targetKey,
        this::completeOnce,
        (fromKey, toKey) -> s3a.rename(s3a.pathOf(fromKey), s3a.pathOf(toKey)));
    counters.misses.incrementAndGet();
    String root = srcKey.contains("/") ? srcKey.substring(0, srcKey.indexOf('/')) : srcKey;
    if (missesReported.add(root)) {
      LOG.warn(
          "rename shim miss: {} was renamed to {}, not to its predicted {}; it was completed and"
              + " copied (a COPY of {} bytes), visible under the predicted name during the copy"
              + " (set "
              + ShimConfig.ON_MISS
              + "=fail to refuse such renames instead). Further misses under s3a://{}/{} are logged at"
              + " debug level and counted.",
          from,
          to,
          predicted,
          upload.length(),
          bucket,
          root);
    } else {
      LOG.debug("rename shim miss: {} -> {} (predicted {})", from, to, predicted);
    }
  }

  private String refusedMiss(String from, String to, String predicted) {
    return "cannot rename "
        + from
        + " to "
        + to
        + ": the rules "
        + shim.rules().names()
        + " predicted "
        + predicted
        + ", where its data waits as a pending upload that can be completed nowhere else, and "
        + ShimConfig.ON_MISS
        + "="
        + ShimConfig.OnMiss.FAIL.value()
        + " refuses renames the rules did not predict. Nothing was completed: the upload is"
        + " aborted when the temporary directory is deleted. Make the prediction right (for"
        + " Hive, add dev.writeonce.hive.LoadPlanHook to hive.exec.pre.hooks; otherwise add"
        + " a rule to "
        + ShimConfig.RULES
        + "), or set "
        + ShimConfig.ON_MISS
        + "="
        + ShimConfig.OnMiss.COPY.value()
        + " to complete and copy such files";
  }

  private String predictedTaken(
      String from, String to, String predicted, String predictedKey, String targetKey) {
    return "cannot rename "
        + from
        + " to "
        + to
        + ": its data is a pending upload to "
        + predicted
        + ", which already exists and would be overwritten. The rules "
        + shim.rules().names()
        + " predicted that name; add a rule ("
        + ShimConfig.RULES
        + ") that predicts "
        + to
        + ", or leave this bucket out of "
        + ShimConfig.BUCKETS
        + (Layouts.isHiveCopyName(predictedKey) || Layouts.isHiveCopyName(targetKey)
            ? ". Another statement inserting into the same table or partition at the same"
                + " time most likely took that name first: name"
                + " dev.writeonce.hive.LoadPlanHook in hive.exec.post.hooks and"
                + " hive.exec.failure.hooks as well as hive.exec.pre.hooks, so that such"
                + " statements take turns (docs/hive.md); files of this statement moved"
                + " before this one are already in the table"
            : "");
  }

  /**
   * Moves what a temporary directory holds to the target: records, completions (queued ones by this
   * thread, never by the pool's workers, which a full queue would make wait for work only they can
   * run), and ordinary objects by S3A.
   *
   * @param moved filled with the keys moved out of the source
   * @return the objects now under the target (size -1 where not known)
   */
  private List<ObjectInfo> renameDirectory(
      String srcKey, List<ObjectInfo> objects, String targetKey, List<String> moved)
      throws IOException {
    List<String> consumed = Collections.synchronizedList(new ArrayList<>());
    List<ObjectInfo> placed = Collections.synchronizedList(new ArrayList<>());
    List<ObjectInfo> files = new ArrayList<>();
    for (ObjectInfo object : objects) {
      if (object.key().endsWith("/")) {
        consumed.add(object.key());
      } else {
        files.add(object);
      }
    }
    List<ObjectInfo> toQueue = Collections.synchronizedList(new ArrayList<>());
    List<PendingFile> toQueueFiles = Collections.synchronizedList(new ArrayList<>());
    Tasks.runAll(
        pool,
        "renaming s3a://" + bucket + "/" + srcKey,
        files,
        object -> {
          String key = object.key();
          String target = targetKey + key.substring(srcKey.length());
          Optional<PendingFile> file = records.recordOf(key, object.size(), object.etag());
          if (file.isEmpty()) {
            counters.plainRenames.incrementAndGet();
            if (!s3a.rename(s3a.pathOf(key), s3a.pathOf(target))) {
              throw new IOException(
                  "rename s3a://" + bucket + "/" + key + " to " + target + " failed");
            }
            placed.add(new ObjectInfo(target, object.size(), object.etag(), 0));
          } else if (queueable(key)
              && (isMergeOf(key, target)
                  || (file.get().closed() && target.equals(file.get().key())))) {
            synchronized (toQueue) {
              toQueue.add(object);
              toQueueFiles.add(file.get());
            }
          } else {
            Placed done = move(key, file.get(), target, false);
            placed.add(done.object());
            if (!done.queued()) {
              consumed.addAll(recordKeys(key, file.get()));
            }
          }
        });
    for (int i = 0; i < toQueue.size(); i++) {
      String key = toQueue.get(i).key();
      String target = targetKey + key.substring(srcKey.length());
      Placed queued = move(key, toQueueFiles.get(i), target, true);
      placed.add(queued.object());
      if (!queued.queued()) {
        consumed.addAll(recordKeys(key, toQueueFiles.get(i)));
      }
    }
    files.forEach(object -> moved.add(object.key()));
    if (files.isEmpty()) {
      s3a.mkdirs(s3a.pathOf(targetKey), null);
    }
    if (Layouts.isTaskCommit(srcKey, targetKey)) {
      // FileOutputCommitter v1's task commit: the moved records' old copies stay as twins, which
      // the job commit deletes with the records once their files are completed, in the same
      // DeleteObjects; a job that is aborted deletes the whole temporary tree. One DeleteObjects
      // per task less.
      return new ArrayList<>(placed);
    }
    records.delete(consumed);
    return new ArrayList<>(placed);
  }
}
