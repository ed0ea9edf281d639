package dev.writeonce.spark.streaming;

import dev.writeonce.core.errors.ErrorKind;
import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.UploadPart;
import dev.writeonce.core.store.DirectoryListing;
import dev.writeonce.core.store.KeyProbe;
import dev.writeonce.core.store.ObjectBody;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.PeekedObject;
import dev.writeonce.core.store.S3StoreGateway;
import dev.writeonce.core.store.StoreGateway;
import dev.writeonce.core.store.check.StoreTrust;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileAlreadyExistsException;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.PathFilter;
import org.apache.hadoop.fs.s3a.S3AFileSystem;
import org.apache.spark.sql.execution.streaming.checkpointing.CheckpointFileManager;
import org.apache.spark.sql.execution.streaming.checkpointing.FileContextBasedCheckpointFileManager;
import org.apache.spark.sql.execution.streaming.checkpointing.FileSystemBasedCheckpointFileManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Structured Streaming's checkpoint files on S3 without rename: {@code
 * spark.sql.streaming.checkpointFileManagerClass=dev.writeonce.spark.streaming.WriteonceCheckpointFileManager}.
 *
 * <p>A file is written whole in one PutObject when its stream is closed, never visible before;
 * {@code cancel} sends nothing. A file that must not be overwritten (a batch of the offset, commit
 * or sink log) is written with {@code If-None-Match: *}: of two runs of one query writing the same
 * batch, exactly one succeeds, and the other fails with Hadoop's {@code FileAlreadyExistsException}
 * naming the batch, which Spark reports as two queries sharing a checkpoint. Each write carries a
 * writer id in its metadata, so a write whose answer was lost and whose retry met its own object is
 * told from another run's write even when the two hold the same bytes.
 *
 * <p>S3 has no directories: {@code mkdirs} sends nothing, {@code exists} is one LIST that answers
 * for a file or a directory, and listing a directory that holds nothing yields nothing. Checkpoints
 * on other filesystems are served by Spark's own manager.
 */
public class WriteonceCheckpointFileManager implements CheckpointFileManager {

  private static final Logger LOG = LoggerFactory.getLogger(WriteonceCheckpointFileManager.class);

  /** Spark's setting that names this class. */
  public static final String SETTING = "spark.sql.streaming.checkpointFileManagerClass";

  /** The user metadata that names the write that stored a file. */
  static final String WRITER = "writeonce-writer";

  /** A file up to this size is written from memory; a larger one from a local file. */
  static final int MEMORY_LIMIT = 8 * 1024 * 1024;

  private static final long MAX_PUT = 5L * 1024 * 1024 * 1024;

  /** The longest a write stands on a verdict it took without asking again. */
  private static final long VERDICT_REUSE_MILLIS = 60_000;

  private static final org.apache.hadoop.fs.LocalDirAllocator SPILL_DIRS =
      new org.apache.hadoop.fs.LocalDirAllocator("fs.s3a.buffer.dir");

  private final Path root;
  private final Configuration conf;
  private final CheckpointFileManager other;
  private final S3AFileSystem fs;
  private final StoreGateway store;
  private long trustedGeneration = Long.MIN_VALUE;
  private long trustedUntil;

  public WriteonceCheckpointFileManager(Path path, Configuration conf) throws IOException {
    FileSystem fileSystem = path.getFileSystem(conf);
    this.conf = conf;
    if (fileSystem instanceof S3AFileSystem s3a) {
      this.fs = s3a;
      this.root = s3a.makeQualified(path);
      this.store = S3StoreGateway.forFileSystem(s3a);
      this.other = null;
      if (root.getName().equals(SINK_LOG) && root.getParent() != null) {
        settleSink(root.getParent());
      }
    } else {
      LOG.info(
          "{} is not on S3A ({}): its checkpoint is kept by Spark's own manager",
          path,
          fileSystem.getClass().getName());
      this.fs = null;
      this.root = path;
      this.store = null;
      this.other = sparksOwn(path, conf);
    }
  }

  /** The directory of a file sink's log. */
  private static final String SINK_LOG = "_spark_metadata";

  /**
   * A file sink's log is opened (the query starts, or a reader reads the sink): the batches that
   * {@link WriteonceStreamingCommitProtocol} left decided but unfinished are finished first, so
   * that the log's files exist for its readers.
   */
  private void settleSink(Path sink) {
    try {
      new StreamingRecords(store, dev.writeonce.core.model.Destination.of(sink.toUri()))
          .settle("", true);
    } catch (IOException | RuntimeException e) {
      // A reader or a query goes on: a file the log lists and that is not complete yet fails its
      // read, naming it, and the next opening of the sink settles again.
      LOG.warn(
          "{}: the unfinished batches of the sink could not be settled on opening its log: {}",
          sink,
          e.toString());
    }
  }

  /** As Spark chooses its manager: FileContext where the scheme has one, else FileSystem. */
  private static CheckpointFileManager sparksOwn(Path path, Configuration conf) throws IOException {
    try {
      return new FileContextBasedCheckpointFileManager(path, conf);
    } catch (Exception e) { // Scala declares nothing: UnsupportedFileSystemException arrives here
      if (e instanceof org.apache.hadoop.fs.UnsupportedFileSystemException) {
        return new FileSystemBasedCheckpointFileManager(path, conf);
      }
      if (e instanceof IOException io) {
        throw io;
      }
      throw (RuntimeException) e;
    }
  }

  @Override
  public CancellableFSDataOutputStream createAtomic(Path path, boolean overwriteIfPossible) {
    if (other != null) {
      return other.createAtomic(path, overwriteIfPossible);
    }
    keyOf(path); // a path of another bucket fails now, not at close
    return new AtomicCheckpointOutput(
        this, path, overwriteIfPossible, new CheckpointBuffer(MEMORY_LIMIT, this::spillFile));
  }

  /** A local file for a checkpoint file past the memory limit, where S3A buffers its uploads. */
  private java.nio.file.Path spillFile() throws IOException {
    if (conf.get("fs.s3a.buffer.dir") == null) {
      return java.nio.file.Files.createTempFile("writeonce-checkpoint-", ".tmp");
    }
    return SPILL_DIRS.createTmpFileForWrite("writeonce-checkpoint-", -1, conf).toPath();
  }

  /** Stores a closed file: see {@link AtomicCheckpointOutput#close()}. */
  void store(Path path, CheckpointBuffer buffer, boolean overwrite) throws IOException {
    String key = keyOf(path);
    ObjectBody body = buffer.body();
    if (body.length() > MAX_PUT) {
      if (!overwrite) {
        throw new IOException(
            uri(path)
                + ": "
                + body.length()
                + " bytes; a checkpoint file that must not be overwritten is written in one"
                + " conditional PUT, which takes at most 5 GiB. Nothing was written.");
      }
      storeInParts(key, (ObjectBody.File) body);
      return;
    }
    if (overwrite) {
      store.putObject(key, body, false, Map.of());
      return;
    }
    requireTrustedStore();
    String writer = UUID.randomUUID().toString();
    for (int inFlight = 0; ; inFlight++) {
      try {
        store.putObject(key, body, true, Map.of(WRITER, writer));
        return;
      } catch (StoreException e) {
        if (e.statusCode() == 409 && inFlight < 3) {
          // AWS: another conditional write of this key was in flight. Asking again gets 412 if it
          // won, or stores this file if it failed.
          continue;
        }
        if (!e.is(ErrorKind.PRECONDITION_FAILED) && !e.is(ErrorKind.TRANSIENT)) {
          throw e;
        }
        settleRefusedOrUnanswered(path, key, writer, e);
        return;
      }
    }
  }

  /**
   * After a conditional write that was refused (412) or got no answer: the request may have been
   * stored with its answer lost, and a retry refused. Whose object is there tells, where the bytes
   * may be the same as another run's: returns when it is this write's, and throws otherwise.
   */
  private void settleRefusedOrUnanswered(Path path, String key, String writer, StoreException e)
      throws IOException {
    Optional<Map<String, String>> there;
    try {
      there = store.objectMetadata(key);
    } catch (IOException | RuntimeException unread) {
      if (!e.is(ErrorKind.PRECONDITION_FAILED)) {
        e.addSuppressed(unread);
        throw e;
      }
      FileAlreadyExistsException exists =
          alreadyWritten(
              path,
              e,
              " Whether it is this run's own write, whose answer was lost, could not be read ("
                  + unread.getMessage()
                  + "); if the query fails for it alone, restarting it goes on from the file.");
      exists.addSuppressed(unread);
      throw exists;
    }
    if (there.isPresent() && writer.equals(metadataValue(there.get(), WRITER))) {
      LOG.info("{}: stored; the store's first answer was lost", uri(path));
      return;
    }
    if (there.isPresent() || e.is(ErrorKind.PRECONDITION_FAILED)) {
      // Another writer's object, or one that was there at the write and has gone since.
      throw alreadyWritten(path, e, "");
    }
    throw e; // no answer, and nothing stored
  }

  /** A file over 5 GiB that may be overwritten: a multipart upload, completed once all is sent. */
  private void storeInParts(String key, ObjectBody.File file) throws IOException {
    long partSize = Math.max(64L * 1024 * 1024, (file.length() + 9_999) / 10_000);
    String uploadId = store.createUpload(key);
    try {
      List<UploadPart> parts = new ArrayList<>();
      for (long offset = 0; offset < file.length(); offset += partSize) {
        long length = Math.min(partSize, file.length() - offset);
        parts.add(store.uploadPart(key, uploadId, parts.size() + 1, file.path(), offset, length));
      }
      store.completeUpload(new PendingUpload(store.bucket(), key, uploadId, parts, "checkpoint"));
    } catch (IOException | RuntimeException e) {
      try {
        store.abortUpload(key, uploadId);
      } catch (IOException | RuntimeException abort) {
        e.addSuppressed(abort);
      }
      throw e;
    }
  }

  private static String metadataValue(Map<String, String> metadata, String name) {
    for (Map.Entry<String, String> entry : metadata.entrySet()) {
      if (entry.getKey().equalsIgnoreCase(name)) {
        return entry.getValue();
      }
    }
    return null;
  }

  private FileAlreadyExistsException alreadyWritten(
      Path path, StoreException cause, String unknown) {
    String name = path.getName();
    String what =
        name.matches("\\d+(\\.compact)?")
            ? "batch " + name.replace(".compact", "") + " of the log at " + uri(path.getParent())
            : "the file";
    FileAlreadyExistsException e =
        new FileAlreadyExistsException(
            uri(path)
                + ": another run of this streaming query wrote "
                + what
                + " first, so this run wrote nothing to it. Two runs of one query must not share a"
                + " checkpoint location: stop one of them (the run that wrote the file goes on),"
                + " or give each query its own checkpointLocation."
                + unknown);
    e.initCause(cause);
    return e;
  }

  /**
   * Before a write whose condition a guarantee rests on: the store check, as the committers take
   * it. A verdict is stood on while this process holds it unchanged, for at most a minute and never
   * past its age, as the shim's renames do.
   */
  private synchronized void requireTrustedStore() throws IOException {
    long now = System.currentTimeMillis();
    if (StoreTrust.generation() == trustedGeneration && now < trustedUntil) {
      return;
    }
    long left = StoreTrust.requireForMillis(fs, keyOf(root), conf, "streaming checkpoint " + root);
    trustedGeneration = StoreTrust.generation();
    trustedUntil = now + Math.min(left, VERDICT_REUSE_MILLIS);
  }

  /**
   * One GET of a file up to 8 MiB, held in memory; a larger file (a state snapshot) is read as S3A
   * reads it, as a stream, after the first 8 MiB of the GET are dropped. A missing file throws
   * {@link FileNotFoundException}, which Spark's logs catch, although the Scala method declares
   * nothing.
   */
  @Override
  public FSDataInputStream open(Path path) {
    if (other != null) {
      return other.open(path);
    }
    try {
      Optional<PeekedObject> read =
          store.peekObject(keyOf(path), MEMORY_LIMIT + 1, head -> head.length <= MEMORY_LIMIT);
      if (read.isEmpty()) {
        throw new FileNotFoundException(uri(path) + ": no such checkpoint file");
      }
      if (read.get().body() == null) {
        return fs.open(path);
      }
      return new FSDataInputStream(new CheckpointInput(read.get().body()));
    } catch (IOException e) {
      throw WriteonceCheckpointFileManager.<RuntimeException>undeclared(e);
    }
  }

  @SuppressWarnings("unchecked")
  private static <E extends Throwable> E undeclared(Throwable e) throws E {
    throw (E) e;
  }

  @Override
  public FileStatus[] list(Path path, PathFilter filter) {
    if (other != null) {
      return other.list(path, filter);
    }
    Path dir = qualified(path);
    String key = keyOf(dir);
    String prefix = key.isEmpty() ? "" : key + "/";
    DirectoryListing listing;
    try {
      listing = store.listDirectory(prefix);
    } catch (IOException e) {
      throw WriteonceCheckpointFileManager.<RuntimeException>undeclared(e);
    }
    List<FileStatus> found = new ArrayList<>();
    long blockSize = fs.getDefaultBlockSize(dir);
    for (ObjectInfo file : listing.files()) {
      if (file.key().equals(prefix)) {
        continue; // a directory marker another tool left
      }
      Path child = childPath(dir, file.key());
      if (filter.accept(child)) {
        found.add(
            new FileStatus(file.size(), false, 1, blockSize, file.lastModifiedMillis(), child));
      }
    }
    for (String directory : listing.directories()) {
      String name = directory.substring(prefix.length(), directory.length() - 1);
      Path child = childPath(dir, directory.substring(0, directory.length() - 1));
      if (!name.isEmpty() && filter.accept(child)) {
        found.add(new FileStatus(0, true, 1, blockSize, 0, child));
      }
    }
    return found.toArray(new FileStatus[0]);
  }

  /** S3 has no directories: a directory exists once a file is written under it. */
  @Override
  public void mkdirs(Path path) {
    if (other != null) {
      other.mkdirs(path);
    }
  }

  @Override
  public boolean exists(Path path) {
    if (other != null) {
      return other.exists(path);
    }
    String key = keyOf(path);
    if (key.isEmpty()) {
      return true;
    }
    try {
      KeyProbe probe = store.probe(key);
      return probe.object() != null || probe.directory();
    } catch (IOException e) {
      throw WriteonceCheckpointFileManager.<RuntimeException>undeclared(e);
    }
  }

  /**
   * Deletes a file, or else a directory and everything under it, as S3A's recursive delete does;
   * nothing there is no failure.
   */
  @Override
  public void delete(Path path) {
    if (other != null) {
      other.delete(path);
      return;
    }
    String key = keyOf(path);
    try {
      KeyProbe probe = store.probe(key);
      List<String> keys = new ArrayList<>();
      if (probe.object() != null) {
        keys.add(key);
      } else if (probe.directory()) {
        for (ObjectInfo object : store.listObjects(key + "/")) {
          keys.add(object.key());
        }
      }
      if (!keys.isEmpty()) {
        store.deleteObjects(keys);
      }
    } catch (IOException e) {
      throw WriteonceCheckpointFileManager.<RuntimeException>undeclared(e);
    }
  }

  @Override
  public boolean isLocal() {
    return other != null && other.isLocal();
  }

  @Override
  public Path createCheckpointDirectory() {
    return other != null ? other.createCheckpointDirectory() : root;
  }

  /** The path of a key under a directory; a name is never read as a URI (a colon is a colon). */
  private static Path childPath(Path dir, String key) {
    return new Path(dir.toUri().getScheme(), dir.toUri().getAuthority(), "/" + key);
  }

  private Path qualified(Path path) {
    return fs.makeQualified(path);
  }

  /** The key of a path of this manager's bucket. */
  private String keyOf(Path path) {
    Path qualified = qualified(path);
    String bucket = qualified.toUri().getHost();
    if (!fs.getBucket().equals(bucket)) {
      throw new IllegalArgumentException(
          uri(path) + " is not in the bucket " + fs.getBucket() + " of the checkpoint at " + root);
    }
    String key = qualified.toUri().getPath();
    return key.startsWith("/") ? key.substring(1) : key;
  }

  private static String uri(Path path) {
    return path == null ? "" : path.toString();
  }
}
