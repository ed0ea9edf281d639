package dev.writeonce.shim;

import dev.writeonce.core.model.LoadPlan;
import dev.writeonce.core.upload.OwnCreateFileBuilder;
import dev.writeonce.core.upload.UploadOutputStream;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.URI;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.ContentSummary;
import org.apache.hadoop.fs.CreateFlag;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FSDataOutputStreamBuilder;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.hadoop.fs.impl.OpenFileParameters;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.fs.s3a.S3AFileSystem;
import org.apache.hadoop.util.Progressable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * S3A under which rename-based commit code writes every byte once. A file created under a temporary
 * directory that {@link ShimRules} recognise is streamed as a multipart upload to its predicted
 * final key, and a small pending-file record takes its place at the temporary path. Renames between
 * temporary locations move records only; a rename into the predicted final location completes the
 * upload. A rename the rules did not predict still gives the right result, by completing and then
 * copying server-side, and is counted and logged as a miss. Deleting a pending file, or a directory
 * holding pending files, aborts their uploads.
 *
 * <p>Enable it with {@code fs.s3a.impl=dev.writeonce.shim.RenameShimFileSystem}; {@link ShimConfig}
 * holds its settings. Paths outside temporary directories are plain S3A.
 */
public class RenameShimFileSystem extends S3AFileSystem {

  private static final Logger LOG = LoggerFactory.getLogger(RenameShimFileSystem.class);

  private final ShimStatistics counters = new ShimStatistics();
  private ShimParts parts;
  private ShimConfig shim;

  @Override
  public void initialize(URI name, Configuration conf) throws IOException {
    super.initialize(name, conf);
    parts =
        new ShimParts(
            this,
            conf,
            counters,
            ShimRenames.plain(
                (fromKey, toKey) ->
                    super.rename(keyToQualifiedPath(fromKey), keyToQualifiedPath(toKey)),
                key -> mkdirs(keyToQualifiedPath(key))),
            getUsername());
    shim = parts.shim;
    LOG.debug(
        "rename shim for s3a://{}: enabled={}, rules={}, queued completions={}",
        getBucket(),
        shim.enabled(),
        shim.rules().names(),
        shim.queueCompletions());
  }

  /** Whether files under this path are written as pending uploads: shim on, temporary path. */
  public boolean shims(Path path) {
    return temporary(keyOf(path));
  }

  /**
   * Stores a Hive statement's load plan in its staging directory: one PUT, read back by every
   * instance that creates a file under the directory.
   */
  public void putLoadPlan(Path stagingDirectory, LoadPlan plan) throws IOException {
    String key = keyOf(stagingDirectory);
    if (!temporary(key)) {
      throw new IllegalArgumentException(
          stagingDirectory + " is not a staging directory the rename shim handles");
    }
    HiveStaging.putLoadPlan(parts.gateway, key, plan);
  }

  /**
   * Takes the insert lock of a directory for a statement that adds files whose names depend on the
   * files already there (see {@link InsertLockHolder}), waiting up to {@link
   * ShimConfig#INSERT_WAIT} for another statement holding it; empty when the shim is off for this
   * bucket. The caller releases it once the statement's files are in place or it failed.
   *
   * @param progress told when the statement waits, and when it takes over a lapsed lock
   */
  public Optional<InsertLockHolder> lockForInsert(
      Path directory, String statement, Consumer<String> progress) throws IOException {
    if (!shim.enabled()) {
      return Optional.empty();
    }
    return Optional.of(
        InsertLockHolder.acquireIn(
            parts.gateway,
            keyOf(directory),
            statement,
            parts.config.leaseMillis(),
            shim.insertWaitMillis(),
            progress));
  }

  /** What this instance has done so far. */
  public ShimStatistics shimStatistics() {
    return counters;
  }

  Path pathOf(String key) {
    return keyToQualifiedPath(key);
  }

  String keyOf(Path path) {
    return pathToKey(makeQualified(path));
  }

  boolean temporary(String key) {
    return shim.enabled() && shim.rules().isTemporary(key);
  }

  /** Waits for the completions queued under a directory; see {@link QueuedCompletions}. */
  public void awaitCompletions(Path directory) throws IOException {
    parts.completions.awaitUnder(keyOf(directory));
  }

  /** The key of a path that a call reads, once the completions it could observe have run. */
  private String use(Path path) throws IOException {
    parts.checks.forget();
    String key = keyOf(path);
    parts.completions.beforeUse(key);
    return key;
  }

  /** The key of a path that a call creates, once the completions it depends on have run. */
  private String creating(Path path) throws IOException {
    parts.checks.forget();
    String key = keyOf(path);
    parts.completions.beforeCreate(key, temporary(key));
    parts.trees.wrote(key);
    if (!temporary(key)) {
      parts.checks.wrote(key);
    }
    return key;
  }

  // ---- writing ----------------------------------------------------------------------------

  @Override
  public FSDataOutputStream create(
      Path path,
      FsPermission permission,
      boolean overwrite,
      int bufferSize,
      short replication,
      long blockSize,
      Progressable progress)
      throws IOException {
    String key = creating(path);
    Optional<String> finalKey = temporary(key) ? parts.predictFinalKey(key) : Optional.empty();
    if (finalKey.isEmpty()) {
      return super.create(
          path, permission, overwrite, bufferSize, replication, blockSize, progress);
    }
    // No existence checks: a temporary path belongs to one task attempt.
    UploadOutputStream out = parts.pendingFile(makeQualified(path).toString(), key, finalKey.get());
    counters.filesWritten.incrementAndGet();
    return new FSDataOutputStream(out, statistics);
  }

  @Override
  public FSDataOutputStream createNonRecursive(
      Path path,
      FsPermission permission,
      EnumSet<CreateFlag> flags,
      int bufferSize,
      short replication,
      long blockSize,
      Progressable progress)
      throws IOException {
    if (!temporary(creating(path))) {
      return super.createNonRecursive(
          path, permission, flags, bufferSize, replication, blockSize, progress);
    }
    return create(
        path,
        permission,
        flags.contains(CreateFlag.OVERWRITE),
        bufferSize,
        replication,
        blockSize,
        progress);
  }

  /**
   * S3A's builder creates its files without calling {@link #create}, so under temporary directories
   * the builder is one that does, with the caller's options; elsewhere it is S3A's own, which waits
   * here for the completions it depends on.
   */
  @Override
  @SuppressWarnings("rawtypes") // the raw type of FileSystem's signature
  public FSDataOutputStreamBuilder createFile(Path path) {
    if (temporary(keyOf(path))) {
      return new OwnCreateFileBuilder(this, makeQualified(path), "the rename shim");
    }
    try {
      creating(path);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    return super.createFile(path);
  }

  @Override
  public void copyFromLocalFile(boolean delSrc, boolean overwrite, Path src, Path dst)
      throws IOException {
    creating(dst);
    super.copyFromLocalFile(delSrc, overwrite, src, dst);
  }

  /**
   * A temporary directory is one marker object, written without S3A's checks of every parent: a
   * temporary path lies under the job's output, which the job has already checked.
   */
  @Override
  public boolean mkdirs(Path path, FsPermission permission) throws IOException {
    String key = creating(path);
    if (!temporary(key)) {
      return super.mkdirs(path, permission);
    }
    if (parts.records.known(key).isPresent()) {
      throw new org.apache.hadoop.fs.FileAlreadyExistsException(
          "cannot create directory " + makeQualified(path) + ": it is a pending file");
    }
    parts.gateway.putObject(key + "/", new byte[0], false);
    parts.completions.afterTemporaryTreeChanged(key);
    return true;
  }

  // ---- status and listings ----------------------------------------------------------------

  @Override
  public FileStatus getFileStatus(Path path) throws IOException {
    parts.checks.forget();
    String key = keyOf(path);
    if (!temporary(key) && parts.completions.directoryOfQueued(key)) {
      counters.directoriesOfQueued.incrementAndGet();
      return parts.statuses.directory(path);
    }
    parts.completions.beforeUse(key);
    if (temporary(key)) {
      try {
        return parts.statuses.statusOf(path, key);
      } catch (FileNotFoundException e) {
        parts.checks.foundAbsent(key); // FileOutputCommitter's task commit renames there next
        throw e;
      }
    }
    switch (parts.checks.answer(key)) {
      case ABSENT:
        throw new FileNotFoundException("No such file or directory: " + makeQualified(path));
      case DIRECTORY:
        return parts.statuses.directory(path);
      default:
        try {
          return super.getFileStatus(path);
        } catch (FileNotFoundException e) {
          parts.checks.foundAbsent(key);
          throw e;
        }
    }
  }

  @Override
  public boolean exists(Path path) throws IOException {
    try {
      getFileStatus(path);
      return true;
    } catch (FileNotFoundException e) {
      return false;
    }
  }

  @Override
  public boolean isFile(Path path) throws IOException {
    if (!temporary(use(path))) {
      return super.isFile(path);
    }
    return exists(path) && getFileStatus(path).isFile();
  }

  @Override
  public boolean isDirectory(Path path) throws IOException {
    if (!temporary(use(path))) {
      return super.isDirectory(path);
    }
    return exists(path) && getFileStatus(path).isDirectory();
  }

  @Override
  public FileStatus[] listStatus(Path path) throws IOException {
    String key = use(path);
    Optional<CommittedTaskTrees.Children> children =
        temporary(key) ? parts.trees.children(key) : Optional.empty();
    FileStatus[] listed =
        children.isPresent()
            ? parts.statuses.listed(children.get(), this::pathOf)
            : super.listStatus(path);
    if (!shim.enabled()) {
      return listed;
    }
    if (listed.length > 0 && temporary(key)) {
      parts.checks.temporaryListed(
          key, children.map(CommittedTaskTrees.Children::directories).orElse(List.of()));
    }
    return parts.statuses.resolveAll(listed, parts.threads, "listing " + path);
  }

  @Override
  public RemoteIterator<FileStatus> listStatusIterator(Path path) throws IOException {
    use(path);
    RemoteIterator<FileStatus> listed = super.listStatusIterator(path);
    return shim.enabled() ? ShimStatuses.mapped(listed, parts.statuses::resolve) : listed;
  }

  @Override
  public RemoteIterator<LocatedFileStatus> listFiles(Path path, boolean recursive)
      throws IOException {
    use(path);
    RemoteIterator<LocatedFileStatus> listed = super.listFiles(path, recursive);
    return shim.enabled() ? ShimStatuses.mapped(listed, parts.statuses::resolveLocated) : listed;
  }

  @Override
  public RemoteIterator<LocatedFileStatus> listLocatedStatus(Path path) throws IOException {
    use(path);
    RemoteIterator<LocatedFileStatus> listed = super.listLocatedStatus(path);
    return shim.enabled() ? ShimStatuses.mapped(listed, parts.statuses::resolveLocated) : listed;
  }

  @Override
  public ContentSummary getContentSummary(Path path) throws IOException {
    if (!temporary(use(path))) {
      return super.getContentSummary(path);
    }
    return parts.statuses.summaryOf(getFileStatus(path), listFiles(path, true));
  }

  // ---- reading ----------------------------------------------------------------------------

  @Override
  public FSDataInputStream open(Path path, int bufferSize) throws IOException {
    refusePendingRead(path, use(path));
    return super.open(path, bufferSize);
  }

  @Override
  public java.util.concurrent.CompletableFuture<FSDataInputStream> openFileWithOptions(
      Path path, OpenFileParameters parameters) throws IOException {
    refusePendingRead(path, use(path));
    return super.openFileWithOptions(path, parameters);
  }

  private void refusePendingRead(Path path, String key) throws IOException {
    if (!temporary(key)) {
      return;
    }
    Optional<ShimRecords.Found> found = parts.records.find(key);
    if (found.isPresent() && found.get().isRecord()) {
      counters.pendingReadsRefused.incrementAndGet();
      throw PendingFileNotReadableException.of(
          makeQualified(path), "s3a://" + getBucket() + "/" + found.get().record().key());
    }
  }

  // ---- renaming and deleting --------------------------------------------------------------

  @Override
  public boolean rename(Path src, Path dst) throws IOException {
    String dstKey = keyOf(dst);
    boolean destinationAbsent = parts.checks.takeAbsent(dstKey);
    String srcKey = keyOf(src);
    parts.completions.beforeRename(srcKey, dstKey);
    // Whatever lands, and even when the rename fails half-way, the destination may now exist,
    // and the source, with the directories it alone made, may not.
    parts.checks.wrote(dstKey);
    parts.checks.removed(srcKey);
    parts.trees.wrote(dstKey);
    try {
      if (!temporary(srcKey)) {
        return super.rename(src, dst);
      }
      return parts.renames.rename(src, srcKey, dstKey, destinationAbsent);
    } finally {
      parts.checks.wrote(dstKey);
      parts.checks.removed(srcKey);
      parts.trees.removed(srcKey);
    }
  }

  @Override
  public boolean delete(Path path, boolean recursive) throws IOException {
    String key = use(path);
    parts.trees.removed(key);
    if (!shim.enabled()) {
      return super.delete(path, recursive);
    }
    parts.checks.removed(key);
    try {
      boolean deleted = parts.deletes.delete(path, key, recursive, super::delete);
      parts.completions.afterTemporaryTreeChanged(key);
      return deleted;
    } finally {
      parts.checks.removed(key);
    }
  }

  // ---- plumbing ---------------------------------------------------------------------------

  @Override
  public void close() throws IOException {
    try {
      if (parts != null) {
        parts.completions.awaitAll();
      }
    } finally {
      try {
        if (counters.misses() > 0 || counters.missesRefused() > 0) {
          LOG.warn("rename shim for s3a://{}: {}", getBucket(), counters);
        } else if (counters.filesWritten() > 0) {
          LOG.info("rename shim for s3a://{}: {}", getBucket(), counters);
        }
        if (parts != null) {
          parts.close();
        }
      } finally {
        super.close();
      }
    }
  }
}
