package dev.writeonce.shim;

import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.engine.JobCommitContext;
import dev.writeonce.core.json.FormatException;
import dev.writeonce.core.json.PendingFileFormat;
import dev.writeonce.core.model.PendingFile;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.store.ErrorKind;
import dev.writeonce.core.store.KeyProbe;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.PeekedObject;
import dev.writeonce.core.store.S3StoreGateway;
import dev.writeonce.core.store.StoreException;
import dev.writeonce.core.store.StoreGateway;
import dev.writeonce.magic.MagicOutputStream;
import dev.writeonce.magic.OwnCreateFileBuilder;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.function.Consumer;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.ContentSummary;
import org.apache.hadoop.fs.CreateFlag;
import org.apache.hadoop.fs.EtagSource;
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

  /** Objects larger than this are never records, so listings do not read them. */
  static final long MAX_RECORD_BYTES = 4L << 20;

  /** Records remembered by one instance at most; a lookup past it costs one GET again. */
  private static final int MAX_CACHED_RECORDS = 200_000;

  private ShimConfig shim;
  private CommitterConfig config;
  private StoreGateway gateway;
  private JobCommitContext threads;
  private Optional<HiveStaging> hiveStaging = Optional.empty();
  private ShimMisses misses;
  private String user;
  private final ShimStatistics counters = new ShimStatistics();
  private final Map<String, Cached> records = new ConcurrentHashMap<>();
  private final Set<String> missesReported = ConcurrentHashMap.newKeySet();

  /** A record this instance wrote or read, with the ETag of the object holding it. */
  private record Cached(String etag, PendingFile file) {}

  /** What is at a key: a record, an ordinary object, or nothing (empty Optional). */
  private record Found(ObjectInfo info, PendingFile record) {
    boolean isRecord() {
      return record != null;
    }
  }

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
    threads = new JobCommitContext("shim-" + getBucket(), config.magicUploadThreads());
    hiveStaging =
        shim.rules().names().contains(ShimRules.HIVE.name())
            ? Optional.of(new HiveStaging(gateway, getBucket()))
            : Optional.empty();
    misses = new ShimMisses(gateway, shim.rules(), System::currentTimeMillis);
    user = getUsername();
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
    gateway.putObject(key + "/" + LoadPlan.FILE_NAME, plan.toBytes(), false);
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

  private String keyOf(Path path) {
    return pathToKey(makeQualified(path));
  }

  private boolean temporary(String key) {
    return shim.enabled() && shim.rules().isTemporary(key);
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
    String key = keyOf(path);
    Optional<String> finalKey = temporary(key) ? predictFinalKey(key) : Optional.empty();
    if (finalKey.isEmpty()) {
      return super.create(
          path, permission, overwrite, bufferSize, replication, blockSize, progress);
    }
    // No existence checks: a temporary path belongs to one task attempt.
    MagicOutputStream out =
        new MagicOutputStream(
            gateway,
            makeQualified(path).toString(),
            finalKey.get(),
            key,
            ShimRules.attemptOf(key),
            config.partSize(),
            config.magicBuffersPerStream(),
            threads.pool(),
            new RecordKeeper(key));
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
    if (!temporary(keyOf(path))) {
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
    if (!temporary(keyOf(path))) {
      return super.createFile(path);
    }
    return new OwnCreateFileBuilder(this, makeQualified(path), "the rename shim");
  }

  /** Writes the record of a file when its upload starts early and when its writer closes. */
  private final class RecordKeeper implements MagicOutputStream.Listener {
    private final String key;

    RecordKeeper(String key) {
      this.key = key;
    }

    @Override
    public void uploadStarted(MagicOutputStream out, String uploadId) throws IOException {
      writeRecord(
          key,
          PendingFile.writing(
              getBucket(),
              out.finalKey(),
              uploadId,
              ShimRules.attemptOf(key),
              System.currentTimeMillis()));
    }

    @Override
    public void closed(MagicOutputStream out, PendingUpload upload) throws IOException {
      writeRecord(key, PendingFile.closed(upload, System.currentTimeMillis()));
    }

    @Override
    public void finished(MagicOutputStream out) {}
  }

  private void writeRecord(String key, PendingFile file) throws IOException {
    String etag = gateway.putObject(key, PendingFileFormat.toJson(file), false);
    remember(key, new Cached(etag, file));
    counters.recordsWritten.incrementAndGet();
  }

  /**
   * Records are consumed by renames and deletes, so the cache stays small; files that are never
   * renamed (abandoned attempts) would make it grow in a long-lived process, so it is bounded.
   */
  private void remember(String key, Cached cached) {
    if (records.size() >= MAX_CACHED_RECORDS) {
      records.clear();
    }
    records.put(key, cached);
  }

  // ---- finding records --------------------------------------------------------------------

  /** What is at a key under a temporary directory: one GET, none when this instance knows it. */
  private Optional<Found> find(String key) throws IOException {
    Cached cached = records.get(key);
    if (cached != null) {
      return Optional.of(new Found(null, cached.file()));
    }
    Optional<PeekedObject> peeked =
        gateway.peekObject(key, PendingFileFormat.HEAD_BYTES, PendingFileFormat::isRecord);
    if (peeked.isEmpty()) {
      return Optional.empty();
    }
    PeekedObject object = peeked.get();
    if (object.body() == null) {
      return Optional.of(new Found(object.info(), null));
    }
    PendingFile file = parse(key, object.body());
    remember(key, new Cached(object.info().etag(), file));
    return Optional.of(new Found(object.info(), file));
  }

  /** The record behind a listed file, if it is one: from the cache when its ETag matches. */
  private Optional<PendingFile> recordOf(String key, long size, String etag) throws IOException {
    if (size > MAX_RECORD_BYTES) {
      return Optional.empty();
    }
    Cached cached = records.get(key);
    if (cached != null && etag != null && etag.equals(cached.etag())) {
      return Optional.of(cached.file());
    }
    records.remove(key);
    return find(key).map(Found::record);
  }

  private PendingFile parse(String key, byte[] body) throws IOException {
    try {
      return PendingFileFormat.fromJson(body, "s3a://" + getBucket() + "/" + key);
    } catch (FormatException e) {
      throw new IOException(
          e.getMessage()
              + ": the pending-file record is damaged; abort its upload by deleting the path,"
              + " or remove it with "
              + ShimConfig.ENABLED
              + "=false",
          e);
    }
  }

  // ---- status and listings ----------------------------------------------------------------

  private FileStatus pendingStatus(Path path, PendingFile file) {
    return new FileStatus(
        file.length(),
        false,
        1,
        getDefaultBlockSize(path),
        file.createdAtMillis(),
        0,
        FsPermission.getFileDefault(),
        user,
        user,
        makeQualified(path));
  }

  @Override
  public FileStatus getFileStatus(Path path) throws IOException {
    String key = keyOf(path);
    if (!temporary(key)) {
      return super.getFileStatus(path);
    }
    Cached cached = records.get(key);
    if (cached != null) {
      return pendingStatus(path, cached.file());
    }
    // One LIST tells a file from a directory; only a file small enough to be a record is read.
    KeyProbe probe = gateway.probe(key);
    if (probe.file().isPresent()) {
      ObjectInfo info = probe.file().get();
      Optional<PendingFile> file = recordOf(key, info.size(), info.etag());
      if (file.isPresent()) {
        return pendingStatus(path, file.get());
      }
      return new FileStatus(
          info.size(),
          false,
          1,
          getDefaultBlockSize(path),
          info.lastModifiedMillis(),
          makeQualified(path));
    }
    if (probe.directory()) {
      return new FileStatus(0, true, 1, 0, 0, makeQualified(path));
    }
    throw new FileNotFoundException("No such file or directory: " + makeQualified(path));
  }

  @Override
  public boolean exists(Path path) throws IOException {
    if (!temporary(keyOf(path))) {
      return super.exists(path);
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

  /** A listed status with the real length when it is a pending file's record. */
  private <S extends FileStatus> FileStatus resolve(S status) throws IOException {
    if (!status.isFile()) {
      return status;
    }
    String key = keyOf(status.getPath());
    if (!temporary(key)) {
      return status;
    }
    String etag = status instanceof EtagSource source ? source.getEtag() : null;
    Optional<PendingFile> file = recordOf(key, status.getLen(), etag);
    return file.isPresent() ? pendingStatus(status.getPath(), file.get()) : status;
  }

  private LocatedFileStatus resolveLocated(LocatedFileStatus status) throws IOException {
    FileStatus resolved = resolve(status);
    if (resolved == status) {
      return status;
    }
    return new LocatedFileStatus(resolved, getFileBlockLocations(resolved, 0, resolved.getLen()));
  }

  @Override
  public FileStatus[] listStatus(Path path) throws IOException {
    FileStatus[] listed = super.listStatus(path);
    if (!shim.enabled()) {
      return listed;
    }
    List<Callable<FileStatus>> work = new ArrayList<>(listed.length);
    for (FileStatus status : listed) {
      work.add(() -> resolve(status));
    }
    return runAll(work).toArray(new FileStatus[0]);
  }

  @Override
  public RemoteIterator<FileStatus> listStatusIterator(Path path) throws IOException {
    RemoteIterator<FileStatus> listed = super.listStatusIterator(path);
    return shim.enabled() ? mapped(listed, this::resolve) : listed;
  }

  @Override
  public RemoteIterator<LocatedFileStatus> listFiles(Path path, boolean recursive)
      throws IOException {
    RemoteIterator<LocatedFileStatus> listed = super.listFiles(path, recursive);
    return shim.enabled() ? mapped(listed, this::resolveLocated) : listed;
  }

  @Override
  public RemoteIterator<LocatedFileStatus> listLocatedStatus(Path path) throws IOException {
    RemoteIterator<LocatedFileStatus> listed = super.listLocatedStatus(path);
    return shim.enabled() ? mapped(listed, this::resolveLocated) : listed;
  }

  private interface StatusMapper<T> {
    T apply(T status) throws IOException;
  }

  private static <T> RemoteIterator<T> mapped(RemoteIterator<T> source, StatusMapper<T> mapper) {
    return new RemoteIterator<>() {
      @Override
      public boolean hasNext() throws IOException {
        return source.hasNext();
      }

      @Override
      public T next() throws IOException {
        return mapper.apply(source.next());
      }
    };
  }

  @Override
  public ContentSummary getContentSummary(Path path) throws IOException {
    if (!temporary(keyOf(path))) {
      return super.getContentSummary(path);
    }
    FileStatus status = getFileStatus(path);
    if (status.isFile()) {
      return new ContentSummary.Builder()
          .length(status.getLen())
          .fileCount(1)
          .directoryCount(0)
          .spaceConsumed(status.getLen())
          .build();
    }
    long length = 0;
    long files = 0;
    Set<Path> directories = new HashSet<>();
    directories.add(status.getPath());
    RemoteIterator<LocatedFileStatus> all = listFiles(path, true);
    while (all.hasNext()) {
      LocatedFileStatus file = all.next();
      length += file.getLen();
      files++;
      for (Path parent = file.getPath().getParent();
          parent != null && !parent.equals(status.getPath());
          parent = parent.getParent()) {
        directories.add(parent);
      }
    }
    return new ContentSummary.Builder()
        .length(length)
        .fileCount(files)
        .directoryCount(directories.size())
        .spaceConsumed(length)
        .build();
  }

  /**
   * A temporary directory is one marker object, written without S3A's checks of every parent: a
   * temporary path lies under the job's output, which the job has already checked.
   */
  @Override
  public boolean mkdirs(Path path, FsPermission permission) throws IOException {
    String key = keyOf(path);
    if (!temporary(key)) {
      return super.mkdirs(path, permission);
    }
    if (records.containsKey(key)) {
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
    Optional<Found> found = find(key);
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
    String srcKey = keyOf(src);
    if (!temporary(srcKey)) {
      return super.rename(src, dst);
    }
    // The source is usually a file this instance wrote or listed, or a directory: look there first.
    PendingFile file = null;
    List<ObjectInfo> under = List.of();
    Cached cached = records.get(srcKey);
    if (cached != null) {
      file = cached.file();
    } else {
      under = gateway.listObjects(srcKey + "/");
      if (under.isEmpty()) {
        Optional<Found> found = find(srcKey);
        if (found.isEmpty()) {
          LOG.debug("rename {} -> {}: source does not exist", src, dst);
          return false;
        }
        if (!found.get().isRecord()) {
          counters.plainRenames.incrementAndGet();
          return super.rename(src, dst);
        }
        file = found.get().record();
      }
    }
    Optional<String> target = renameTarget(src, srcKey, keyOf(dst));
    if (target.isEmpty()) {
      LOG.debug("rename {} -> {}: destination exists or lies inside the source", src, dst);
      return false;
    }
    if (file != null) {
      move(srcKey, file, target.get());
      deleteRecords(List.of(srcKey));
    } else {
      renameDirectory(srcKey, under, target.get());
    }
    return true;
  }

  /**
   * The key a rename gives the source, with Hadoop's semantics: the destination itself, or inside
   * it when it is an existing directory; empty when the destination is an existing file or lies
   * under the source.
   */
  private Optional<String> renameTarget(Path src, String srcKey, String dstKey) throws IOException {
    if (dstKey.equals(srcKey) || dstKey.startsWith(srcKey + "/")) {
      return Optional.empty();
    }
    if (dstKey.isEmpty()) {
      return Optional.of(src.getName());
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

  /** Puts one pending file at a new key; the caller deletes the old record. */
  private void move(String srcKey, PendingFile file, String targetKey) throws IOException {
    if (temporary(targetKey)) {
      writeRecord(targetKey, file);
      counters.recordsMoved.incrementAndGet();
      return;
    }
    if (!file.closed()) {
      throw new IOException(
          "cannot rename s3a://"
              + getBucket()
              + "/"
              + srcKey
              + " into place: its writer never closed (it is still writing, or it died), so its"
              + " upload to s3a://"
              + getBucket()
              + "/"
              + file.key()
              + " is incomplete. Delete the path to abort the upload.");
    }
    PendingUpload upload = file.upload();
    if (targetKey.equals(file.key())) {
      completeOnce(upload);
      counters.uploadsCompleted.incrementAndGet();
      return;
    }
    miss(srcKey, upload, targetKey);
  }

  /** Whether a key names a file Hive renamed to keep an existing one: {@code <name>_copy_<K>}. */
  private static boolean isHiveCopyName(String key) {
    return key.substring(key.lastIndexOf('/') + 1).matches(".*_copy_\\d+(\\.[^./]+)?");
  }

  /** Completes an upload; a repeated completion of the same object counts as done. */
  private void completeOnce(PendingUpload upload) throws IOException {
    try {
      gateway.completeUpload(upload);
    } catch (StoreException e) {
      if (!e.is(ErrorKind.NO_SUCH_UPLOAD)) {
        throw e;
      }
      Optional<ObjectInfo> head = gateway.headObject(upload.key());
      boolean done =
          head.isPresent() && ShimMisses.holds(upload.length(), upload.expectedEtag(), head.get());
      if (!done) {
        throw e;
      }
    }
  }

  /**
   * A rename to a name the rules did not predict: the upload can only create its own key, so it is
   * completed there and copied (see {@link ShimMisses}), or refused when {@link ShimConfig#ON_MISS}
   * says so. Refused too when that key already holds another object, which the completion would
   * overwrite.
   */
  private void miss(String srcKey, PendingUpload upload, String targetKey) throws IOException {
    String from = "s3a://" + getBucket() + "/" + srcKey;
    String to = "s3a://" + getBucket() + "/" + targetKey;
    String predicted = "s3a://" + getBucket() + "/" + upload.key();
    if (shim.onMiss() == ShimConfig.OnMiss.FAIL) {
      counters.missesRefused.incrementAndGet();
      throw new IOException(
          "cannot rename "
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
              + " to complete and copy such files");
    }
    if (gateway.probe(upload.key()).exists()) {
      throw new IOException(
          "cannot rename "
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
              + (isHiveCopyName(upload.key()) || isHiveCopyName(targetKey)
                  ? ". Another statement inserting into the same table or partition at the same"
                      + " time most likely took that name first: name"
                      + " dev.writeonce.hive.LoadPlanHook in hive.exec.post.hooks and"
                      + " hive.exec.failure.hooks as well as hive.exec.pre.hooks, so that such"
                      + " statements take turns (docs/hive.md); files of this statement moved"
                      + " before this one are already in the table"
                  : ""));
    }
    misses.completeAndCopy(
        srcKey,
        upload,
        targetKey,
        this::completeOnce,
        (fromKey, toKey) -> super.rename(keyToQualifiedPath(fromKey), keyToQualifiedPath(toKey)));
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
          getBucket(),
          root);
    } else {
      LOG.debug("rename shim miss: {} -> {} (predicted {})", from, to, predicted);
    }
  }

  private void renameDirectory(String srcKey, List<ObjectInfo> objects, String targetKey)
      throws IOException {
    List<String> consumed = Collections.synchronizedList(new ArrayList<>());
    List<Callable<Void>> work = new ArrayList<>();
    boolean anyFile = false;
    for (ObjectInfo object : objects) {
      String key = object.key();
      if (key.endsWith("/")) {
        consumed.add(key);
        continue;
      }
      anyFile = true;
      String target = targetKey + key.substring(srcKey.length());
      work.add(
          () -> {
            Optional<PendingFile> file = recordOf(key, object.size(), object.etag());
            if (file.isPresent()) {
              move(key, file.get(), target);
              consumed.add(key);
            } else {
              counters.plainRenames.incrementAndGet();
              if (!super.rename(keyToQualifiedPath(key), keyToQualifiedPath(target))) {
                throw new IOException(
                    "rename s3a://" + getBucket() + "/" + key + " to " + target + " failed");
              }
            }
            return null;
          });
    }
    runAll(work);
    if (!anyFile) {
      mkdirs(keyToQualifiedPath(targetKey));
    }
    deleteRecords(consumed);
  }

  private void deleteRecords(List<String> keys) throws IOException {
    if (keys.isEmpty()) {
      return;
    }
    // DeleteObjects even for one key: the store's DeleteObject count stays that of data.
    gateway.deleteObjects(keys);
    keys.forEach(records::remove);
  }

  // ---- deleting ---------------------------------------------------------------------------

  @Override
  public boolean delete(Path path, boolean recursive) throws IOException {
    if (!shim.enabled()) {
      return super.delete(path, recursive);
    }
    String key = keyOf(path);
    if (!temporary(key)) {
      if (recursive) {
        abortRecordsUnder(gateway.listObjects(key.isEmpty() ? "" : key + "/"));
      }
      return super.delete(path, recursive);
    }
    Cached cached = records.get(key);
    if (cached != null) {
      abort(cached.file());
      deleteRecords(List.of(key));
      return true;
    }
    List<ObjectInfo> under = gateway.listObjects(key + "/");
    if (under.isEmpty()) {
      Optional<Found> found = find(key);
      if (found.isPresent() && found.get().isRecord()) {
        abort(found.get().record());
        deleteRecords(List.of(key));
        return true;
      }
      return found.isPresent() && super.delete(path, recursive);
    }
    boolean onlyMarker = under.size() == 1 && under.get(0).key().equals(key + "/");
    if (!recursive && !onlyMarker) {
      return super.delete(path, false); // refuses a non-empty directory, as S3A does
    }
    // A temporary tree holds records and markers only: abort, then delete it in bulk.
    abortRecordsUnder(under);
    List<String> keys = new ArrayList<>(under.size());
    under.forEach(object -> keys.add(object.key()));
    deleteRecords(keys);
    return true;
  }

  /**
   * Aborts the upload of every pending file under a prefix, and undoes what failed misses left (see
   * {@link ShimMisses#cleanUp}); their records go with the delete.
   */
  private void abortRecordsUnder(List<ObjectInfo> objects) throws IOException {
    misses.cleanUp(objects);
    List<Callable<Void>> work = new ArrayList<>();
    for (ObjectInfo object : objects) {
      String key = object.key();
      if (key.endsWith("/") || !temporary(key) || ShimMisses.isRecord(key)) {
        continue;
      }
      work.add(
          () -> {
            Optional<PendingFile> file = recordOf(key, object.size(), object.etag());
            if (file.isPresent()) {
              abort(file.get());
              records.remove(key);
            }
            return null;
          });
    }
    runAll(work);
  }

  private void abort(PendingFile file) throws IOException {
    gateway.abortUpload(file.key(), file.uploadId());
    counters.uploadsAborted.incrementAndGet();
  }

  // ---- plumbing ---------------------------------------------------------------------------

  private <T> List<T> runAll(List<Callable<T>> work) throws IOException {
    if (work.size() <= 1) {
      List<T> results = new ArrayList<>(work.size());
      for (Callable<T> item : work) {
        results.add(call(item));
      }
      return results;
    }
    List<Future<T>> futures = new ArrayList<>(work.size());
    for (Callable<T> item : work) {
      futures.add(threads.pool().submit(item));
    }
    List<T> results = new ArrayList<>(work.size());
    IOException failure = null;
    for (Future<T> future : futures) {
      try {
        results.add(future.get());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        futures.forEach(f -> f.cancel(true));
        throw new InterruptedIOException("interrupted in s3a://" + getBucket());
      } catch (ExecutionException e) {
        IOException cause =
            e.getCause() instanceof IOException io
                ? io
                : new IOException(e.getCause().getMessage(), e.getCause());
        if (failure == null) {
          failure = cause;
        } else {
          failure.addSuppressed(cause);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
    return results;
  }

  private static <T> T call(Callable<T> item) throws IOException {
    try {
      return item.call();
    } catch (IOException | RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IOException(e.getMessage(), e);
    }
  }

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
