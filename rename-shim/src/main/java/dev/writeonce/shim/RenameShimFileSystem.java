package dev.writeonce.shim;

import dev.writeonce.core.lease.LeaseLock;
import dev.writeonce.core.model.LoadPlan;
import dev.writeonce.core.store.S3StoreGateway;
import dev.writeonce.core.store.StoreGateway;
import dev.writeonce.core.store.check.StoreTrust;
import dev.writeonce.core.upload.OwnCreateFileBuilder;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.util.EnumSet;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.BlockLocation;
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
 * <p>This class holds the file system's overrides only: each delegates to {@link RenameShim}, which
 * runs it inside one {@link Operation}, and reaches S3A through {@link S3ACallbacks}.
 *
 * <p>Enable it with {@code fs.s3a.impl=dev.writeonce.shim.RenameShimFileSystem}; {@link ShimConfig}
 * holds its settings. Paths outside temporary directories are plain S3A.
 */
public class RenameShimFileSystem extends S3AFileSystem {

  private static final Logger LOG = LoggerFactory.getLogger(RenameShimFileSystem.class);

  private final ShimStatistics counters = new ShimStatistics();
  private final java.util.concurrent.atomic.AtomicBoolean closed =
      new java.util.concurrent.atomic.AtomicBoolean();
  private RenameShim shim;

  /**
   * The process this instance runs in: this JVM. A simulation overrides it to give each simulated
   * process its own registry, clocks and threads.
   */
  ShimEnvironment environment(Configuration conf) {
    return ShimEnvironment.JVM;
  }

  @Override
  public void initialize(URI name, Configuration conf) throws IOException {
    super.initialize(name, conf);
    shim =
        new RenameShim(
            new Callbacks(),
            S3StoreGateway.forFileSystem(this),
            conf,
            getConf().getTrimmed("fs.s3a.endpoint", ""),
            counters,
            environment(conf));
    LOG.debug(
        "rename shim for s3a://{}: enabled={}, rules={}, queued completions={}",
        getBucket(),
        shim.shim.enabled(),
        shim.shim.rules().names(),
        shim.shim.queueCompletions());
  }

  /** Whether files under this path are written as pending uploads: shim on, temporary path. */
  public boolean shims(Path path) {
    return shim.temporary(pathToKey(makeQualified(path)));
  }

  /**
   * Stores a Hive statement's load plan in its staging directory: one PUT, read back by every
   * instance that creates a file under the directory.
   */
  public void putLoadPlan(Path stagingDirectory, LoadPlan plan) throws IOException {
    String key = pathToKey(makeQualified(stagingDirectory));
    if (!shim.temporary(key)) {
      throw new IllegalArgumentException(
          stagingDirectory + " is not a staging directory the rename shim handles");
    }
    shim.putLoadPlan(key, plan);
  }

  /**
   * Takes the insert lock of a directory for a statement that adds files whose names depend on the
   * files already there (see {@link LeaseLock}), waiting up to {@link ShimConfig#INSERT_WAIT} for
   * another statement holding it; empty when the shim is off for this bucket. The caller releases
   * it once the statement's files are in place or it failed.
   *
   * @param progress told when the statement waits, and when it takes over a lapsed lock
   */
  public Optional<LeaseLock> lockForInsert(
      Path directory, String statement, Consumer<String> progress) throws IOException {
    if (!shim.enabled()) {
      return Optional.empty();
    }
    requireTrustedStore(new Path(directory, "lock"), "insert lock on " + directory);
    String directoryKey = pathToKey(makeQualified(directory));
    String key = (directoryKey.isEmpty() ? "" : directoryKey + "/") + LeaseLock.OBJECT_NAME;
    String bucket = "s3a://" + shim.gateway.bucket() + "/";
    return Optional.of(
        LeaseLock.acquire(
            new LeaseLock.Request(
                shim.gateway,
                key,
                bucket + key,
                bucket + directoryKey,
                statement,
                shim.config.leaseMillis(),
                shim.shim.insertWaitMillis(),
                ShimConfig.INSERT_WAIT,
                "add files to",
                "Statements that add files to one table run one at a time through the rename"
                    + " shim, because the names of their files depend on each other.",
                progress)));
  }

  /**
   * The store of a table whose statements publish through the metastore ({@code
   * dev.writeonce.core.publish.Publication}): its lock, records and copies go straight to the
   * store, once the store is known to honour conditional requests.
   */
  public StoreGateway publicationStore(Path tableRoot) throws IOException {
    requireTrustedStore(new Path(tableRoot, "lock"), "publication lock on " + tableRoot);
    return shim.gateway;
  }

  /** What this instance has done so far. */
  public ShimStatistics shimStatistics() {
    return counters;
  }

  /**
   * Waits for the completions queued under a directory, and fails with the first that failed:
   * {@link ShimCommitterFactory}'s committer calls it at the end of its job commit.
   */
  public void awaitCompletions(Path directory) throws IOException {
    shim.awaitCompletions(directory);
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
    return shim.create(
        path,
        permission,
        overwrite
            ? EnumSet.of(CreateFlag.CREATE, CreateFlag.OVERWRITE)
            : EnumSet.of(CreateFlag.CREATE),
        true,
        bufferSize,
        replication,
        blockSize,
        progress);
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
    return shim.create(
        path, permission, flags, false, bufferSize, replication, blockSize, progress);
  }

  @Override
  @SuppressWarnings("rawtypes") // the raw type of FileSystem's signature
  public FSDataOutputStreamBuilder createFile(Path path) {
    try {
      return shim.createFile(path);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void copyFromLocalFile(boolean delSrc, boolean overwrite, Path src, Path dst)
      throws IOException {
    shim.copyFromLocalFile(delSrc, overwrite, src, dst);
  }

  @Override
  public boolean mkdirs(Path path, FsPermission permission) throws IOException {
    if (shims(path)) {
      // A job's first write (FileOutputCommitter's setup, in its driver): the store is checked
      // before any task runs, and the verdict travels to the tasks with the job.
      requireTrustedStore(path, "directory " + path);
    }
    return shim.mkdirs(path, permission);
  }

  // ---- status and listings ----------------------------------------------------------------

  @Override
  public FileStatus getFileStatus(Path path) throws IOException {
    return shim.getFileStatus(path);
  }

  @Override
  public boolean exists(Path path) throws IOException {
    return shim.exists(path);
  }

  @Override
  public boolean isFile(Path path) throws IOException {
    return shim.isFile(path);
  }

  @Override
  public boolean isDirectory(Path path) throws IOException {
    return shim.isDirectory(path);
  }

  @Override
  public FileStatus[] listStatus(Path path) throws IOException {
    return shim.listStatus(path);
  }

  @Override
  public RemoteIterator<FileStatus> listStatusIterator(Path path) throws IOException {
    return shim.listStatusIterator(path);
  }

  @Override
  public RemoteIterator<LocatedFileStatus> listFiles(Path path, boolean recursive)
      throws IOException {
    return shim.listFiles(path, recursive);
  }

  @Override
  public RemoteIterator<LocatedFileStatus> listLocatedStatus(Path path) throws IOException {
    return shim.listLocatedStatus(path);
  }

  @Override
  public ContentSummary getContentSummary(Path path) throws IOException {
    return shim.getContentSummary(path);
  }

  @Override
  public RemoteIterator<LocatedFileStatus> listLocatedStatus(
      Path path, org.apache.hadoop.fs.PathFilter filter) throws IOException {
    // S3A lists with a filter without calling the unfiltered listing.
    RemoteIterator<LocatedFileStatus> all = shim.listLocatedStatus(path);
    return new RemoteIterator<>() {
      private LocatedFileStatus next;

      @Override
      public boolean hasNext() throws IOException {
        while (next == null && all.hasNext()) {
          LocatedFileStatus candidate = all.next();
          if (filter.accept(candidate.getPath())) {
            next = candidate;
          }
        }
        return next != null;
      }

      @Override
      public LocatedFileStatus next() throws IOException {
        if (!hasNext()) {
          throw new java.util.NoSuchElementException("no more entries under " + path);
        }
        LocatedFileStatus result = next;
        next = null;
        return result;
      }
    };
  }

  @Override
  public RemoteIterator<org.apache.hadoop.fs.s3a.S3ALocatedFileStatus> listFilesAndEmptyDirectories(
      Path path, boolean recursive) throws IOException {
    return shim.read(path, () -> super.listFilesAndEmptyDirectories(path, recursive));
  }

  @Override
  public org.apache.hadoop.fs.store.EtagChecksum getFileChecksum(Path path, long length)
      throws IOException {
    return shim.read(path, () -> super.getFileChecksum(path, length));
  }

  @Override
  public byte[] getXAttr(Path path, String name) throws IOException {
    return shim.read(path, () -> super.getXAttr(path, name));
  }

  @Override
  public java.util.Map<String, byte[]> getXAttrs(Path path) throws IOException {
    return shim.read(path, () -> super.getXAttrs(path));
  }

  @Override
  public java.util.Map<String, byte[]> getXAttrs(Path path, java.util.List<String> names)
      throws IOException {
    return shim.read(path, () -> super.getXAttrs(path, names));
  }

  @Override
  public java.util.List<String> listXAttrs(Path path) throws IOException {
    return shim.read(path, () -> super.listXAttrs(path));
  }

  @Override
  public void access(Path path, org.apache.hadoop.fs.permission.FsAction mode) throws IOException {
    shim.read(
        path,
        () -> {
          super.access(path, mode);
          return null;
        });
  }

  // ---- reading ----------------------------------------------------------------------------

  @Override
  public FSDataInputStream open(Path path, int bufferSize) throws IOException {
    return shim.open(path, bufferSize);
  }

  @Override
  public CompletableFuture<FSDataInputStream> openFileWithOptions(
      Path path, OpenFileParameters parameters) throws IOException {
    return shim.openFileWithOptions(path, parameters);
  }

  // ---- renaming and deleting --------------------------------------------------------------

  @Override
  public boolean rename(Path src, Path dst) throws IOException {
    if (shims(src)) {
      requireTrustedStoreForRename(src, dst);
    }
    return shim.rename(src, dst);
  }

  /** The store verdicts' generation when this instance last took one for a rename. */
  private volatile long renamesTrustedGeneration = -1;

  /** Until when (System.nanoTime) renames stand on that verdict without taking it again. */
  private volatile long renamesTrustedUntilNanos;

  /**
   * A job commit renames every file: the verdict taken for the first stands for the next while no
   * verdict of the process changed, for at most a minute and never past the verdict's own age, so
   * that the merge does not take it again per file.
   */
  private void requireTrustedStoreForRename(Path src, Path dst) throws IOException {
    long generation = StoreTrust.generation();
    long now = System.nanoTime();
    if (generation == renamesTrustedGeneration && now - renamesTrustedUntilNanos < 0) {
      return;
    }
    long leftMillis = requireTrustedStore(dst, "rename of " + src);
    renamesTrustedUntilNanos =
        now
            + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(
                Math.min(leftMillis, java.util.concurrent.TimeUnit.MINUTES.toMillis(1)));
    renamesTrustedGeneration = generation;
  }

  /**
   * Refuses to turn renames into completions on a store that ignores a condition the shim's records
   * and locks rest on; the check runs once per store per process, its probes under the directory
   * the caller writes to.
   */
  private long requireTrustedStore(Path target, String what) throws IOException {
    Path qualified = makeQualified(target);
    Path parent = qualified.getParent() == null ? qualified : qualified.getParent();
    String key = pathToKey(parent);
    return StoreTrust.requireForMillis(
        this,
        key.isEmpty() || key.endsWith("/") ? key : key + "/",
        getConf(),
        "the rename shim's " + what);
  }

  @Override
  public boolean delete(Path path, boolean recursive) throws IOException {
    return shim.delete(path, recursive);
  }

  @Override
  public org.apache.hadoop.fs.BulkDelete createBulkDelete(Path path) throws IOException {
    return shim.bulkDelete(shim.read(path, () -> super.createBulkDelete(path)));
  }

  @Override
  public org.apache.hadoop.fs.s3a.impl.S3AMultipartUploaderBuilder createMultipartUploader(
      Path base) throws IOException {
    return shim.read(
        base,
        () -> {
          shim.refuseUploaderUnder(base);
          return super.createMultipartUploader(base);
        });
  }

  // ---- plumbing ---------------------------------------------------------------------------

  @Override
  public void close() throws IOException {
    if (closed.getAndSet(true)) {
      return;
    }
    try {
      if (shim != null) {
        shim.close();
      }
    } finally {
      super.close();
    }
  }

  /** S3A's own operations and path arithmetic, for the shim. */
  private final class Callbacks implements S3ACallbacks {

    @Override
    public FileStatus getFileStatus(Path path) throws IOException {
      return RenameShimFileSystem.super.getFileStatus(path);
    }

    @Override
    public FileStatus[] listStatus(Path path) throws IOException {
      return RenameShimFileSystem.super.listStatus(path);
    }

    @Override
    public RemoteIterator<FileStatus> listStatusIterator(Path path) throws IOException {
      return RenameShimFileSystem.super.listStatusIterator(path);
    }

    @Override
    public RemoteIterator<LocatedFileStatus> listFiles(Path path, boolean recursive)
        throws IOException {
      return RenameShimFileSystem.super.listFiles(path, recursive);
    }

    @Override
    public RemoteIterator<LocatedFileStatus> listLocatedStatus(Path path) throws IOException {
      // S3A's unfiltered listing calls the filtered one on this instance, which is the shim's:
      // reach S3A's implementation directly.
      return RenameShimFileSystem.super.listLocatedStatus(path, everything -> true);
    }

    @Override
    public ContentSummary getContentSummary(Path path) throws IOException {
      return RenameShimFileSystem.super.getContentSummary(path);
    }

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
      return RenameShimFileSystem.super.create(
          path, permission, overwrite, bufferSize, replication, blockSize, progress);
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
      return RenameShimFileSystem.super.createNonRecursive(
          path, permission, flags, bufferSize, replication, blockSize, progress);
    }

    @Override
    @SuppressWarnings("rawtypes")
    public FSDataOutputStreamBuilder createFile(Path path) {
      return RenameShimFileSystem.super.createFile(path);
    }

    @Override
    @SuppressWarnings("rawtypes")
    public FSDataOutputStreamBuilder ownCreateFile(Path path) {
      return new OwnCreateFileBuilder(
          RenameShimFileSystem.this, makeQualified(path), "the rename shim");
    }

    @Override
    public void copyFromLocalFile(boolean delSrc, boolean overwrite, Path src, Path dst)
        throws IOException {
      RenameShimFileSystem.super.copyFromLocalFile(delSrc, overwrite, src, dst);
    }

    @Override
    public boolean mkdirs(Path path, FsPermission permission) throws IOException {
      return RenameShimFileSystem.super.mkdirs(
          path, permission == null ? FsPermission.getDirDefault() : permission);
    }

    @Override
    public boolean rename(Path src, Path dst) throws IOException {
      return RenameShimFileSystem.super.rename(src, dst);
    }

    @Override
    public boolean delete(Path path, boolean recursive) throws IOException {
      return RenameShimFileSystem.super.delete(path, recursive);
    }

    @Override
    public FSDataInputStream open(Path path, int bufferSize) throws IOException {
      return RenameShimFileSystem.super.open(path, bufferSize);
    }

    @Override
    public CompletableFuture<FSDataInputStream> openFileWithOptions(
        Path path, OpenFileParameters parameters) throws IOException {
      return RenameShimFileSystem.super.openFileWithOptions(path, parameters);
    }

    @Override
    public Path qualify(Path path) {
      return makeQualified(path);
    }

    @Override
    public String keyOf(Path path) {
      return pathToKey(makeQualified(path));
    }

    @Override
    public Path pathOf(String key) {
      return keyToQualifiedPath(key);
    }

    @Override
    public long blockSize(Path path) {
      return getDefaultBlockSize(path);
    }

    @Override
    public BlockLocation[] blockLocations(FileStatus status, long start, long length)
        throws IOException {
      return getFileBlockLocations(status, start, length);
    }

    @Override
    public String user() {
      return getUsername();
    }

    @Override
    public FSDataOutputStream stream(OutputStream out) {
      return new FSDataOutputStream(out, statistics);
    }
  }
}
