package dev.writeonce.magic;

import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.store.S3StoreGateway;
import dev.writeonce.core.store.StoreGateway;
import dev.writeonce.core.upload.OwnCreateFileBuilder;
import dev.writeonce.core.upload.UploadOutputStream;
import dev.writeonce.core.upload.UploadPool;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.URI;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CreateFlag;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FSDataOutputStreamBuilder;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.fs.s3a.S3AFileSystem;
import org.apache.hadoop.util.Progressable;

/**
 * S3A with magic paths: a file created under {@code __writeonce_magic-JOB/ATTEMPT/__base/} is
 * streamed as a multipart upload to the key it will have under the destination and left pending for
 * the job commit. Magic paths send no request of their own: no marker, no HEAD, no LIST; their
 * status and listings come from what the attempt wrote in this JVM. Every other path is plain S3A.
 *
 * <p>Enable it with {@code fs.s3a.impl=dev.writeonce.magic.MagicS3AFileSystem} (or per bucket).
 */
public class MagicS3AFileSystem extends S3AFileSystem {

  private CommitterConfig config;
  private StoreGateway gateway;
  private UploadPool uploads;

  @Override
  public void initialize(URI name, Configuration conf) throws IOException {
    super.initialize(name, conf);
    config = CommitterConfig.from(conf);
    gateway = S3StoreGateway.forFileSystem(this);
    uploads = new UploadPool("magic uploads for s3a://" + getBucket(), config.magicUploadThreads());
  }

  /** The gateway this filesystem's magic writers upload through. */
  StoreGateway gateway() {
    return gateway;
  }

  private Optional<MagicPaths.Target> magic(Path path) {
    return MagicPaths.parse(pathToKey(makeQualified(path)));
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
    Optional<MagicPaths.Target> target = magic(path);
    if (target.isEmpty()) {
      return super.create(
          path, permission, overwrite, bufferSize, replication, blockSize, progress);
    }
    if (!target.get().isFile()) {
      throw new IOException(
          "cannot create "
              + path
              + ": it is a magic directory, not a file under an attempt's "
              + MagicPaths.BASE);
    }
    MagicUploads.Attempt attempt = MagicUploads.attempt(getBucket(), target.get().attemptKey());
    String attemptId = attemptIdOf(target.get());
    UploadOutputStream out =
        attempt.open(
            gateway,
            makeQualified(path).toString(),
            target.get(),
            attemptId,
            config.partSize(),
            config.magicBuffersPerStream(),
            uploads.pool());
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
    if (magic(path).isEmpty()) {
      return super.createNonRecursive(
          path, permission, flags, bufferSize, replication, blockSize, progress);
    }
    return create(path, permission, true, bufferSize, replication, blockSize, progress);
  }

  /**
   * S3A's builder creates its files without calling {@link #create}, so on magic paths the builder
   * is one that does; elsewhere it is S3A's own, with all of its options.
   */
  @Override
  @SuppressWarnings("rawtypes") // the raw type of FileSystem's signature
  public FSDataOutputStreamBuilder createFile(Path path) {
    if (magic(path).isEmpty()) {
      return super.createFile(path);
    }
    return new OwnCreateFileBuilder(this, makeQualified(path), "the magic committer");
  }

  private static String attemptIdOf(MagicPaths.Target target) {
    String key = target.attemptKey();
    String withoutSlash = key.substring(0, key.length() - 1);
    return withoutSlash.substring(withoutSlash.lastIndexOf('/') + 1);
  }

  @Override
  public FileStatus getFileStatus(Path path) throws IOException {
    Optional<MagicPaths.Target> target = magic(path);
    if (target.isEmpty()) {
      return super.getFileStatus(path);
    }
    Path qualified = makeQualified(path);
    if (!target.get().isFile()) {
      return new FileStatus(0, true, 1, 0, 0, qualified);
    }
    Map<String, Long> files = filesOf(target.get());
    String relative = target.get().relative();
    Long length = files.get(relative);
    if (length != null) {
      return new FileStatus(
          length, false, 1, getDefaultBlockSize(), System.currentTimeMillis(), qualified);
    }
    if (files.keySet().stream().anyMatch(f -> f.startsWith(relative + "/"))) {
      return new FileStatus(0, true, 1, 0, 0, qualified);
    }
    throw new FileNotFoundException(qualified + ": no such file written by this task attempt");
  }

  @Override
  public boolean exists(Path path) throws IOException {
    if (magic(path).isEmpty()) {
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
    if (magic(path).isEmpty()) {
      return super.isFile(path);
    }
    return exists(path) && getFileStatus(path).isFile();
  }

  @Override
  public boolean isDirectory(Path path) throws IOException {
    if (magic(path).isEmpty()) {
      return super.isDirectory(path);
    }
    return exists(path) && getFileStatus(path).isDirectory();
  }

  @Override
  public FileStatus[] listStatus(Path path) throws IOException {
    Optional<MagicPaths.Target> target = magic(path);
    if (target.isEmpty()) {
      return super.listStatus(path);
    }
    Path qualified = makeQualified(path);
    if (target.get().attemptKey().isEmpty()) {
      return new FileStatus[0];
    }
    String relative = target.get().relative();
    String prefix = relative.isEmpty() ? "" : relative + "/";
    Path base =
        relative.isEmpty() && !qualified.getName().equals(MagicPaths.BASE)
            ? new Path(qualified, MagicPaths.BASE)
            : qualified;
    if (base != qualified) {
      return new FileStatus[] {new FileStatus(0, true, 1, 0, 0, base)};
    }
    TreeMap<String, FileStatus> children = new TreeMap<>();
    for (Map.Entry<String, Long> file : filesOf(target.get()).entrySet()) {
      if (!file.getKey().startsWith(prefix)) {
        continue;
      }
      String rest = file.getKey().substring(prefix.length());
      int slash = rest.indexOf('/');
      String child = slash < 0 ? rest : rest.substring(0, slash);
      Path childPath = new Path(base, child);
      children.putIfAbsent(
          child,
          slash < 0
              ? new FileStatus(file.getValue(), false, 1, getDefaultBlockSize(), 0, childPath)
              : new FileStatus(0, true, 1, 0, 0, childPath));
    }
    return children.values().toArray(new FileStatus[0]);
  }

  /** Files of the attempt, closed and still open, by relative path, with their lengths. */
  private Map<String, Long> filesOf(MagicPaths.Target target) {
    Map<String, Long> files = new TreeMap<>();
    MagicUploads.existing(getBucket(), target.attemptKey())
        .ifPresent(
            attempt -> {
              attempt.closed.forEach((relative, upload) -> files.put(relative, upload.length()));
              attempt.open.forEach(out -> files.put(out.name(), out.length()));
            });
    return files;
  }

  @Override
  public boolean mkdirs(Path path, FsPermission permission) throws IOException {
    return magic(path).isPresent() || super.mkdirs(path, permission);
  }

  /** Deleting a magic path aborts the uploads written under it. */
  @Override
  public boolean delete(Path path, boolean recursive) throws IOException {
    Optional<MagicPaths.Target> target = magic(path);
    if (target.isEmpty()) {
      return super.delete(path, recursive);
    }
    if (target.get().isFile()) {
      return deleteUnderAttempt(path, target.get(), recursive);
    }
    String prefix = pathToKey(makeQualified(path));
    prefix = prefix.endsWith("/") ? prefix : prefix + "/";
    List<String> attempts = MagicUploads.attemptsUnder(getBucket(), prefix);
    if (!target.get().attemptKey().isEmpty()) {
      attempts = List.of(target.get().attemptKey());
    }
    for (String attemptKey : attempts) {
      abortAttempt(attemptKey);
    }
    return true;
  }

  /**
   * Deletes a file or a directory below an attempt's base: deleted means never committed, so the
   * uploads of every file at or under the path are aborted, open writers included.
   */
  private boolean deleteUnderAttempt(Path path, MagicPaths.Target target, boolean recursive)
      throws IOException {
    Optional<MagicUploads.Attempt> attempt =
        MagicUploads.existing(getBucket(), target.attemptKey());
    if (attempt.isEmpty()) {
      return false;
    }
    String relative = target.relative();
    String under = relative + "/";
    PendingUpload file = attempt.get().closed.remove(relative);
    List<String> closedBelow =
        attempt.get().closed.keySet().stream().filter(name -> name.startsWith(under)).toList();
    List<UploadOutputStream> openBelow =
        attempt.get().open.stream()
            .filter(out -> out.name().equals(relative) || out.name().startsWith(under))
            .toList();
    if (file == null && closedBelow.isEmpty() && openBelow.isEmpty()) {
      return false;
    }
    if (file == null && !recursive) {
      throw new org.apache.hadoop.fs.PathIsNotEmptyDirectoryException(path.toString());
    }
    IOException failure = null;
    List<PendingUpload> aborted = new java.util.ArrayList<>();
    if (file != null) {
      aborted.add(file);
    }
    for (String name : closedBelow) {
      PendingUpload upload = attempt.get().closed.remove(name);
      if (upload != null) {
        aborted.add(upload);
      }
    }
    for (PendingUpload upload : aborted) {
      try {
        gateway.abortUpload(upload.key(), upload.uploadId());
      } catch (IOException e) {
        failure = failure == null ? e : failure;
      }
    }
    for (UploadOutputStream out : openBelow) {
      try {
        out.abort();
      } catch (IOException e) {
        failure = failure == null ? e : failure;
      }
    }
    if (failure != null) {
      throw failure;
    }
    return true;
  }

  /** Aborts every attempt in this process whose magic prefix lies under a key prefix. */
  int abortAttemptsUnder(String keyPrefix) throws IOException {
    List<String> attempts = MagicUploads.attemptsUnder(getBucket(), keyPrefix);
    for (String attemptKey : attempts) {
      abortAttempt(attemptKey);
    }
    return attempts.size();
  }

  /** Aborts every upload of an attempt, open writers included, and forgets the attempt. */
  void abortAttempt(String attemptKey) throws IOException {
    Optional<MagicUploads.Attempt> attempt = MagicUploads.remove(getBucket(), attemptKey);
    if (attempt.isEmpty()) {
      return;
    }
    IOException failure = null;
    for (UploadOutputStream out : List.copyOf(attempt.get().open)) {
      try {
        out.abort();
      } catch (IOException e) {
        failure = e;
      }
    }
    for (PendingUpload upload : attempt.get().closed.values()) {
      try {
        gateway.abortUpload(upload.key(), upload.uploadId());
      } catch (IOException e) {
        failure = e;
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  /** Hands an attempt's pending uploads to its task commit; refused while writers are open. */
  List<PendingUpload> claimAttempt(String attemptKey) throws IOException {
    Optional<MagicUploads.Attempt> attempt = MagicUploads.existing(getBucket(), attemptKey);
    if (attempt.isEmpty()) {
      return List.of();
    }
    if (!attempt.get().open.isEmpty()) {
      throw new IOException(
          "task attempt under s3a://"
              + getBucket()
              + "/"
              + attemptKey
              + " commits with "
              + attempt.get().open.size()
              + " files still open: close every writer before task commit");
    }
    MagicUploads.remove(getBucket(), attemptKey);
    return List.copyOf(attempt.get().closed.values());
  }

  boolean hasPending(String attemptKey) {
    return MagicUploads.existing(getBucket(), attemptKey)
        .map(a -> !a.closed.isEmpty() || !a.open.isEmpty())
        .orElse(false);
  }

  @Override
  public void close() throws IOException {
    try {
      if (uploads != null) {
        uploads.close();
      }
    } finally {
      super.close();
    }
  }
}
