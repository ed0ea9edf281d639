package dev.writeonce.shim;

import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.engine.Tasks;
import dev.writeonce.core.json.LoadPlanFormat;
import dev.writeonce.core.model.LoadPlan;
import dev.writeonce.core.store.S3StoreGateway;
import dev.writeonce.core.store.StoreGateway;
import dev.writeonce.core.upload.OwnCreateFileBuilder;
import dev.writeonce.core.upload.UploadOutputStream;
import dev.writeonce.core.upload.UploadPool;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
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

  private ShimConfig shim;
  private CommitterConfig config;
  private StoreGateway gateway;
  private UploadPool threads;
  private Optional<HiveStaging> hiveStaging = Optional.empty();
  private ShimMisses misses;
  private final ShimStatistics counters = new ShimStatistics();
  private ShimRecords records;
  private ShimRenames renames;
  private ShimDeletes deletes;
  private ShimStatuses statuses;
  private DestinationListings listings;

  /**
   * The last path outside temporary directories that S3A found absent in this thread. Commit code
   * checks a destination just before it renames a file there (FileOutputCommitter's merge, Hive's
   * move), so the rename need not check it again; any other call of this thread on the file system
   * forgets it, and it is good for {@link #ABSENT_FRESH_NANOS} only.
   */
  private final ThreadLocal<Absent> lastAbsent = new ThreadLocal<>();

  private record Absent(String key, long atNanos) {}

  /** How long an absent destination stays known to the rename that follows. */
  static final long ABSENT_FRESH_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(1);

  @Override
  public void initialize(URI name, Configuration conf) throws IOException {
    super.initialize(name, conf);
    try {
      shim = ShimConfig.from(conf, getBucket());
    } catch (IllegalArgumentException e) {
      throw new IOException("rename shim for s3a://" + getBucket() + ": " + e.getMessage(), e);
    }
    config = CommitterConfig.from(conf);
    gateway = S3StoreGateway.forFileSystem(this);
    threads = new UploadPool("rename shim for s3a://" + getBucket(), config.magicUploadThreads());
    hiveStaging =
        shim.rules().names().contains(ShimRules.HIVE.name())
            ? Optional.of(new HiveStaging(gateway, getBucket()))
            : Optional.empty();
    misses = new ShimMisses(gateway, shim.rules(), gateway.storeClock());
    records = new ShimRecords(gateway, counters);
    renames =
        new ShimRenames(
            gateway,
            shim,
            this::temporary,
            records,
            misses,
            counters,
            threads,
            new ShimRenames.Plain() {
              @Override
              public boolean rename(String fromKey, String toKey) throws IOException {
                return RenameShimFileSystem.super.rename(
                    keyToQualifiedPath(fromKey), keyToQualifiedPath(toKey));
              }

              @Override
              public void mkdirs(String key) throws IOException {
                RenameShimFileSystem.this.mkdirs(keyToQualifiedPath(key));
              }
            });
    statuses = new ShimStatuses(this, gateway, records, getUsername());
    listings =
        new DestinationListings(gateway, shim.listingWindowMillis(), System::nanoTime, counters);
    deletes = new ShimDeletes(gateway, records, misses, this::temporary, counters, threads);
    LOG.debug(
        "rename shim for s3a://{}: enabled={}, rules={}",
        getBucket(),
        shim.enabled(),
        shim.rules().names());
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
    gateway.putObject(key + "/" + LoadPlan.FILE_NAME, LoadPlanFormat.toJson(plan), false);
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
    String dir = keyOf(directory);
    String key = (dir.isEmpty() ? "" : dir + "/") + InsertLockHolder.OBJECT_NAME;
    return Optional.of(
        InsertLockHolder.acquire(
            gateway,
            key,
            "s3a://" + getBucket() + "/" + key,
            "s3a://" + getBucket() + "/" + dir,
            statement,
            config.leaseMillis(),
            shim.insertWaitMillis(),
            ShimConfig.INSERT_WAIT,
            progress));
  }

  /** What this instance has done so far. */
  public ShimStatistics shimStatistics() {
    return counters;
  }

  String keyOf(Path path) {
    return pathToKey(makeQualified(path));
  }

  boolean temporary(String key) {
    return shim.enabled() && shim.rules().isTemporary(key);
  }

  private void rememberAbsent(String key) {
    if (shim.enabled()) {
      lastAbsent.set(new Absent(key, System.nanoTime()));
    }
  }

  /** Forgets the absent destination: this thread did something else since. */
  private void forgetAbsent() {
    lastAbsent.remove();
  }

  /** Whether S3A found this key absent just before, in this thread, with nothing done since. */
  private boolean takeAbsent(String key) {
    Absent absent = lastAbsent.get();
    lastAbsent.remove();
    return absent != null
        && absent.key().equals(key)
        && System.nanoTime() - absent.atNanos() < ABSENT_FRESH_NANOS;
  }

  /**
   * Forgets what the listings know of a key this instance removes, and of the directories above.
   */
  private void removed(String key) {
    if (shim.enabled()) {
      listings.removed(key);
    }
  }

  /** Remembers a key this instance writes outside temporary directories, for the listings. */
  private void wrote(String key) {
    if (shim.enabled() && !temporary(key)) {
      listings.wrote(key);
    }
  }

  /**
   * The directory the rules move a temporary directory's files into, when they keep the files'
   * names (FileOutputCommitter's and Spark's layouts); empty otherwise.
   */
  private Optional<String> destinationDirectoryOf(String temporaryKey) {
    String probe = "/part-00000";
    Optional<String> finalKey = shim.rules().predictFinalKey(temporaryKey + probe);
    return finalKey
        .filter(key -> key.endsWith(probe) && key.length() > probe.length())
        .map(key -> key.substring(0, key.length() - probe.length()));
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
    forgetAbsent();
    String key = keyOf(path);
    Optional<String> finalKey = temporary(key) ? predictFinalKey(key) : Optional.empty();
    if (finalKey.isEmpty()) {
      wrote(key);
      return super.create(
          path, permission, overwrite, bufferSize, replication, blockSize, progress);
    }
    // No existence checks: a temporary path belongs to one task attempt.
    UploadOutputStream out =
        new UploadOutputStream(
            gateway,
            makeQualified(path).toString(),
            finalKey.get(),
            key,
            ShimRules.attemptOf(key),
            config.partSize(),
            config.magicBuffersPerStream(),
            threads.pool(),
            records.keeperOf(key));
    counters.filesWritten.incrementAndGet();
    return new FSDataOutputStream(out, statistics);
  }

  /**
   * Where a file created under a temporary directory will end up: Hive's staged files as Hive will
   * name them (which may take a LIST, see {@link HiveStaging}), others by the rules alone.
   */
  private Optional<String> predictFinalKey(String key) throws IOException {
    if (hiveStaging.isPresent() && HiveStaging.isStaged(key) && !shim.rules().isPlainFile(key)) {
      return hiveStaging.get().predictFinalKey(key);
    }
    return shim.rules().predictFinalKey(key);
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
    forgetAbsent();
    if (!temporary(keyOf(path))) {
      wrote(keyOf(path));
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
   * the builder is one that does, with the caller's options; elsewhere it is S3A's own.
   */
  @Override
  @SuppressWarnings("rawtypes") // the raw type of FileSystem's signature
  public FSDataOutputStreamBuilder createFile(Path path) {
    forgetAbsent();
    if (!temporary(keyOf(path))) {
      wrote(keyOf(path));
      return super.createFile(path);
    }
    return new OwnCreateFileBuilder(this, makeQualified(path), "the rename shim");
  }

  // ---- status and listings ----------------------------------------------------------------

  @Override
  public FileStatus getFileStatus(Path path) throws IOException {
    forgetAbsent();
    String key = keyOf(path);
    if (!temporary(key)) {
      if (shim.enabled() && listings.knownAbsent(key)) {
        rememberAbsent(key);
        throw new FileNotFoundException("No such file or directory: " + makeQualified(path));
      }
      if (shim.enabled() && listings.knownDirectory(key)) {
        // As S3A builds the status of a directory it finds by listing: no time, this user.
        return new org.apache.hadoop.fs.s3a.S3AFileStatus(
            org.apache.hadoop.fs.s3a.Tristate.UNKNOWN, makeQualified(path), getUsername());
      }
      try {
        return super.getFileStatus(path);
      } catch (FileNotFoundException e) {
        rememberAbsent(key);
        throw e;
      }
    }
    return statuses.statusOf(path, key);
  }

  @Override
  public boolean exists(Path path) throws IOException {
    forgetAbsent();
    String key = keyOf(path);
    if (!temporary(key)) {
      if (shim.enabled() && listings.knownAbsent(key)) {
        rememberAbsent(key);
        return false;
      }
      if (shim.enabled() && listings.knownDirectory(key)) {
        return true;
      }
      boolean found = super.exists(path);
      if (!found) {
        rememberAbsent(key);
      }
      return found;
    }
    try {
      getFileStatus(path);
      return true;
    } catch (FileNotFoundException e) {
      return false;
    }
  }

  @Override
  public boolean isFile(Path path) throws IOException {
    if (!temporary(keyOf(path))) {
      return super.isFile(path);
    }
    return exists(path) && getFileStatus(path).isFile();
  }

  @Override
  public boolean isDirectory(Path path) throws IOException {
    if (!temporary(keyOf(path))) {
      return super.isDirectory(path);
    }
    return exists(path) && getFileStatus(path).isDirectory();
  }

  @Override
  public FileStatus[] listStatus(Path path) throws IOException {
    forgetAbsent();
    FileStatus[] listed = super.listStatus(path);
    if (!shim.enabled()) {
      return listed;
    }
    String key = keyOf(path);
    if (listed.length > 0 && temporary(key) && listings.enabled()) {
      // Commit code lists a temporary directory before it moves its children into place, each
      // after an existence check of its destination: one LIST of that directory answers them.
      Optional<String> destination = destinationDirectoryOf(key);
      if (destination.isPresent()) {
        listings.list(destination.get());
      }
    }
    FileStatus[] resolved = new FileStatus[listed.length];
    List<Integer> indexes = new ArrayList<>(listed.length);
    for (int i = 0; i < listed.length; i++) {
      indexes.add(i);
    }
    Tasks.runAll(
        threads, "listing " + path, indexes, i -> resolved[i] = statuses.resolve(listed[i]));
    return resolved;
  }

  @Override
  public RemoteIterator<FileStatus> listStatusIterator(Path path) throws IOException {
    RemoteIterator<FileStatus> listed = super.listStatusIterator(path);
    return shim.enabled() ? ShimStatuses.mapped(listed, statuses::resolve) : listed;
  }

  @Override
  public RemoteIterator<LocatedFileStatus> listFiles(Path path, boolean recursive)
      throws IOException {
    RemoteIterator<LocatedFileStatus> listed = super.listFiles(path, recursive);
    return shim.enabled() ? ShimStatuses.mapped(listed, statuses::resolveLocated) : listed;
  }

  @Override
  public RemoteIterator<LocatedFileStatus> listLocatedStatus(Path path) throws IOException {
    RemoteIterator<LocatedFileStatus> listed = super.listLocatedStatus(path);
    return shim.enabled() ? ShimStatuses.mapped(listed, statuses::resolveLocated) : listed;
  }

  @Override
  public ContentSummary getContentSummary(Path path) throws IOException {
    if (!temporary(keyOf(path))) {
      return super.getContentSummary(path);
    }
    return statuses.summaryOf(getFileStatus(path), listFiles(path, true));
  }

  /**
   * A temporary directory is one marker object, written without S3A's checks of every parent: a
   * temporary path lies under the job's output, which the job has already checked.
   */
  @Override
  public boolean mkdirs(Path path, FsPermission permission) throws IOException {
    forgetAbsent();
    String key = keyOf(path);
    if (!temporary(key)) {
      wrote(key);
      return super.mkdirs(path, permission);
    }
    if (records.known(key).isPresent()) {
      throw new org.apache.hadoop.fs.FileAlreadyExistsException(
          "cannot create directory " + makeQualified(path) + ": it is a pending file");
    }
    gateway.putObject(key + "/", new byte[0], false);
    return true;
  }

  // ---- reading ----------------------------------------------------------------------------

  @Override
  public FSDataInputStream open(Path path, int bufferSize) throws IOException {
    refusePendingRead(path);
    return super.open(path, bufferSize);
  }

  @Override
  public java.util.concurrent.CompletableFuture<FSDataInputStream> openFileWithOptions(
      Path path, OpenFileParameters parameters) throws IOException {
    refusePendingRead(path);
    return super.openFileWithOptions(path, parameters);
  }

  private void refusePendingRead(Path path) throws IOException {
    String key = keyOf(path);
    if (!temporary(key)) {
      return;
    }
    Optional<ShimRecords.Found> found = records.find(key);
    if (found.isEmpty() || !found.get().isRecord()) {
      return;
    }
    counters.pendingReadsRefused.incrementAndGet();
    throw new PendingFileNotReadableException(
        "cannot read "
            + makeQualified(path)
            + ": it is a pending upload to s3a://"
            + getBucket()
            + "/"
            + found.get().record().key()
            + " whose data becomes readable only when the commit renames it into place."
            + " Engines that read task output before the commit need it written plainly:"
            + " for Hive set hive.merge.mapfiles=false and hive.merge.mapredfiles=false;"
            + " otherwise list the file name in "
            + ShimConfig.PLAIN_FILES
            + " or leave this bucket out of "
            + ShimConfig.BUCKETS);
  }

  // ---- renaming ---------------------------------------------------------------------------

  @Override
  public boolean rename(Path src, Path dst) throws IOException {
    String dstKey = keyOf(dst);
    boolean destinationAbsent = takeAbsent(dstKey);
    String srcKey = keyOf(src);
    // Whatever lands, and even when the rename fails half-way, the destination may now exist,
    // and the source, with the directories it alone made, may not.
    wrote(dstKey);
    removed(srcKey);
    try {
      if (!temporary(srcKey)) {
        return super.rename(src, dst);
      }
      return renames.rename(src, srcKey, dstKey, destinationAbsent);
    } finally {
      wrote(dstKey);
    }
  }

  // ---- deleting ---------------------------------------------------------------------------

  @Override
  public boolean delete(Path path, boolean recursive) throws IOException {
    forgetAbsent();
    if (!shim.enabled()) {
      return super.delete(path, recursive);
    }
    String key = keyOf(path);
    removed(key);
    try {
      return deletes.delete(path, key, recursive, super::delete);
    } finally {
      removed(key);
    }
  }

  @Override
  public void copyFromLocalFile(boolean delSrc, boolean overwrite, Path src, Path dst)
      throws IOException {
    forgetAbsent();
    wrote(keyOf(dst));
    super.copyFromLocalFile(delSrc, overwrite, src, dst);
  }

  // ---- plumbing ---------------------------------------------------------------------------

  @Override
  public void close() throws IOException {
    try {
      if (counters.misses() > 0 || counters.missesRefused() > 0) {
        LOG.warn("rename shim for s3a://{}: {}", getBucket(), counters);
      } else if (counters.filesWritten() > 0) {
        LOG.info("rename shim for s3a://{}: {}", getBucket(), counters);
      }
      if (threads != null) {
        threads.close();
      }
    } finally {
      super.close();
    }
  }
}
