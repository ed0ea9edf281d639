package dev.writeonce.shim;

import dev.writeonce.core.engine.Tasks;
import dev.writeonce.core.engine.WorkerPool;
import dev.writeonce.core.model.PendingFile;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.store.KeyProbe;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.StoreGateway;
import dev.writeonce.core.upload.UploadCompletion;
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
 * Renames under the shim. Between temporary locations a rename moves records only; into a file's
 * predicted final key it completes the file's upload; anywhere else it is a miss, which {@link
 * ShimMisses} completes and copies, or which is refused ({@link ShimConfig#ON_MISS}).
 */
final class ShimRenames {

  private static final Logger LOG = LoggerFactory.getLogger(ShimRenames.class);

  /** What S3A does for objects that are not the shim's, by key. */
  interface Plain {
    /** S3A's rename of an ordinary object or directory. */
    boolean rename(String fromKey, String toKey) throws IOException;

    /** The file system's mkdirs: a marker for an emptied temporary directory. */
    void mkdirs(String key) throws IOException;
  }

  /** A function of two keys that may fail. */
  @FunctionalInterface
  interface KeyRename {
    boolean rename(String fromKey, String toKey) throws IOException;
  }

  /** A function of one key that may fail. */
  @FunctionalInterface
  interface KeyAction {
    void apply(String key) throws IOException;
  }

  static Plain plain(KeyRename rename, KeyAction mkdirs) {
    return new Plain() {
      @Override
      public boolean rename(String fromKey, String toKey) throws IOException {
        return rename.rename(fromKey, toKey);
      }

      @Override
      public void mkdirs(String key) throws IOException {
        mkdirs.apply(key);
      }
    };
  }

  /**
   * A file of a task that FileOutputCommitter v1 committed ({@code _temporary/<n>/task_<id>/}),
   * which its job commit merges into place: the one rename whose completion is queued.
   */
  private static final java.util.regex.Pattern COMMITTED_TASK_FILE =
      java.util.regex.Pattern.compile("^(?:.*/)?_temporary/\\d+/task_[^/]+/.+$");

  private final StoreGateway gateway;
  private final String bucket;
  private final ShimConfig shim;
  private final Predicate<String> temporary;
  private final ShimRecords records;
  private final ShimMisses misses;
  private final ShimStatistics counters;
  private final WorkerPool pool;
  private final QueuedCompletions completions;
  private final CommittedTaskTrees trees;
  private final Plain plain;
  private final Set<String> missesReported = ConcurrentHashMap.newKeySet();

  ShimRenames(
      StoreGateway gateway,
      ShimConfig shim,
      Predicate<String> temporary,
      ShimRecords records,
      ShimMisses misses,
      ShimStatistics counters,
      WorkerPool pool,
      QueuedCompletions completions,
      CommittedTaskTrees trees,
      Plain plain) {
    this.gateway = gateway;
    this.bucket = gateway.bucket();
    this.shim = shim;
    this.temporary = temporary;
    this.records = records;
    this.misses = misses;
    this.counters = counters;
    this.pool = pool;
    this.completions = completions;
    this.trees = trees;
    this.plain = plain;
  }

  /**
   * Renames a path under a temporary directory, with Hadoop's semantics and result: a pending file
   * moves its record or completes its upload, a directory moves all it holds, and an ordinary
   * object is renamed by S3A.
   */
  boolean rename(Path src, String srcKey, String dstKey, boolean destinationAbsent)
      throws IOException {
    // The source is usually a file this instance wrote or listed, or a directory: look there first.
    PendingFile file = records.known(srcKey).orElse(null);
    List<ObjectInfo> under = List.of();
    if (file == null) {
      Optional<List<ObjectInfo>> known = trees.objectsUnder(srcKey);
      under = known.isPresent() ? known.get() : gateway.listObjects(srcKey + "/");
      if (under.isEmpty()) {
        Optional<ShimRecords.Found> found = records.find(srcKey);
        if (found.isEmpty()) {
          LOG.debug("rename {} -> {}: source does not exist", src, dstKey);
          return false;
        }
        if (!found.get().isRecord()) {
          counters.plainRenames.incrementAndGet();
          return plain.rename(srcKey, dstKey);
        }
        file = found.get().record();
      }
    }
    Optional<String> target = renameTarget(src, srcKey, dstKey, destinationAbsent);
    if (target.isEmpty()) {
      LOG.debug("rename {} -> {}: destination exists or lies inside the source", src, dstKey);
      return false;
    }
    if (file != null) {
      if (!move(srcKey, file, target.get(), queueable(srcKey))) {
        records.delete(List.of(srcKey));
      }
    } else {
      renameDirectory(srcKey, under, target.get());
    }
    return true;
  }

  /**
   * The key a rename gives the source, with Hadoop's semantics: the destination itself, or inside
   * it when it is an existing directory; empty when the destination is an existing file or lies
   * under the source. A destination the caller's own check found absent an instant before is not
   * checked again (one LIST per file of a commit's merge).
   */
  private Optional<String> renameTarget(
      Path src, String srcKey, String dstKey, boolean destinationAbsent) throws IOException {
    if (dstKey.equals(srcKey) || dstKey.startsWith(srcKey + "/")) {
      return Optional.empty();
    }
    if (dstKey.isEmpty()) {
      return Optional.of(src.getName());
    }
    if (destinationAbsent) {
      counters.destinationChecksSkipped.incrementAndGet();
      return Optional.of(dstKey);
    }
    KeyProbe probe = gateway.probe(dstKey);
    if (probe.file().isPresent()) {
      return Optional.empty();
    }
    if (probe.directory()) {
      String inside = dstKey + "/" + src.getName();
      return gateway.probe(inside).exists() ? Optional.empty() : Optional.of(inside);
    }
    return Optional.of(dstKey);
  }

  /**
   * Whether the completion of a rename from this key may be queued ({@link QueuedCompletions}):
   * FileOutputCommitter v1's job commit merging a committed task's file, outside Hive's staging.
   */
  private boolean queueable(String srcKey) {
    return shim.queueCompletions()
        && COMMITTED_TASK_FILE.matcher(srcKey).matches()
        && !ShimRules.HIVE.temporary().matcher(srcKey).find();
  }

  /**
   * Puts one pending file at a new key. The caller deletes the old record, unless the completion
   * was queued: then the barrier deletes it once the completion succeeded.
   *
   * @return whether the completion was queued
   */
  private boolean move(String srcKey, PendingFile file, String targetKey, boolean queueable)
      throws IOException {
    if (temporary.test(targetKey)) {
      records.write(targetKey, file);
      counters.recordsMoved.incrementAndGet();
      return false;
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
    if (!targetKey.equals(file.key())) {
      miss(srcKey, upload, targetKey);
      return false;
    }
    if (queueable) {
      completions.queue(
          srcKey,
          targetKey,
          () -> {
            completeOnce(upload);
            counters.uploadsCompleted.incrementAndGet();
          });
      return true;
    }
    completeOnce(upload);
    counters.uploadsCompleted.incrementAndGet();
    return false;
  }

  /** Whether a key names a file Hive renamed to keep an existing one: {@code <name>_copy_<K>}. */
  private static boolean isHiveCopyName(String key) {
    return key.substring(key.lastIndexOf('/') + 1).matches(".*_copy_\\d+(\\.[^./]+)?");
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
    misses.completeAndCopy(srcKey, upload, targetKey, this::completeOnce, plain::rename);
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
        + (isHiveCopyName(predictedKey) || isHiveCopyName(targetKey)
            ? ". Another statement inserting into the same table or partition at the same"
                + " time most likely took that name first: name"
                + " dev.writeonce.hive.LoadPlanHook in hive.exec.post.hooks and"
                + " hive.exec.failure.hooks as well as hive.exec.pre.hooks, so that such"
                + " statements take turns (docs/hive.md); files of this statement moved"
                + " before this one are already in the table"
            : "");
  }

  private void renameDirectory(String srcKey, List<ObjectInfo> objects, String targetKey)
      throws IOException {
    List<String> consumed = Collections.synchronizedList(new ArrayList<>());
    List<ObjectInfo> files = new ArrayList<>();
    for (ObjectInfo object : objects) {
      if (object.key().endsWith("/")) {
        consumed.add(object.key());
      } else {
        files.add(object);
      }
    }
    // Completions to queue are queued by this thread, never by the pool's own workers, which a
    // full queue would make wait for work that only they can run.
    List<Runnable> toQueue = Collections.synchronizedList(new ArrayList<>());
    List<IOException> queueFailures = Collections.synchronizedList(new ArrayList<>());
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
            if (!plain.rename(key, target)) {
              throw new IOException(
                  "rename s3a://" + bucket + "/" + key + " to " + target + " failed");
            }
          } else if (queueable(key) && file.get().closed() && target.equals(file.get().key())) {
            toQueue.add(
                () -> {
                  try {
                    move(key, file.get(), target, true);
                  } catch (IOException e) {
                    queueFailures.add(e);
                  }
                });
          } else if (!move(key, file.get(), target, false)) {
            consumed.add(key);
          }
        });
    for (Runnable queue : toQueue) {
      queue.run();
    }
    if (!queueFailures.isEmpty()) {
      throw queueFailures.get(0);
    }
    if (files.isEmpty()) {
      plain.mkdirs(targetKey);
    }
    records.delete(consumed);
  }
}
