package dev.writeonce.shim;

import dev.writeonce.core.engine.Tasks;
import dev.writeonce.core.engine.WorkerPool;
import dev.writeonce.core.model.PendingFile;
import dev.writeonce.core.store.KeyProbe;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.StoreGateway;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.apache.hadoop.fs.ContentSummary;
import org.apache.hadoop.fs.EtagSource;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.hadoop.fs.permission.FsPermission;

/**
 * What the shim answers for paths under temporary directories: a pending file is a file of its real
 * length (from its record), so that engines that check sizes, list output or sum it up see what
 * they wrote.
 */
final class ShimStatuses {

  private final RenameShimFileSystem fs;
  private final StoreGateway gateway;
  private final ShimRecords records;
  private final String user;

  ShimStatuses(RenameShimFileSystem fs, StoreGateway gateway, ShimRecords records, String user) {
    this.fs = fs;
    this.gateway = gateway;
    this.records = records;
    this.user = user;
  }

  FileStatus pendingStatus(Path path, PendingFile file) {
    return new FileStatus(
        file.length(),
        false,
        1,
        fs.getDefaultBlockSize(path),
        file.createdAtMillis(),
        0,
        FsPermission.getFileDefault(),
        user,
        user,
        fs.makeQualified(path));
  }

  /** The status of a path under a temporary directory whose key is {@code key}. */
  FileStatus statusOf(Path path, String key) throws IOException {
    Optional<PendingFile> known = records.known(key);
    if (known.isPresent()) {
      return pendingStatus(path, known.get());
    }
    if (records.holdsKnownRecords(key)) {
      return new FileStatus(0, true, 1, 0, 0, fs.makeQualified(path));
    }
    // One LIST tells a file from a directory; only a file small enough to be a record is read.
    KeyProbe probe = gateway.probe(key);
    if (probe.file().isPresent()) {
      ObjectInfo info = probe.file().get();
      Optional<PendingFile> file = records.recordOf(key, info.size(), info.etag());
      if (file.isPresent()) {
        return pendingStatus(path, file.get());
      }
      return new FileStatus(
          info.size(),
          false,
          1,
          fs.getDefaultBlockSize(path),
          info.lastModifiedMillis(),
          fs.makeQualified(path));
    }
    if (probe.directory()) {
      return new FileStatus(0, true, 1, 0, 0, fs.makeQualified(path));
    }
    throw new FileNotFoundException("No such file or directory: " + fs.makeQualified(path));
  }

  /** A listed status with the real length when it is a pending file's record. */
  <S extends FileStatus> FileStatus resolve(S status) throws IOException {
    if (!status.isFile()) {
      return status;
    }
    String key = fs.keyOf(status.getPath());
    if (!fs.temporary(key)) {
      return status;
    }
    String etag = status instanceof EtagSource source ? source.getEtag() : null;
    Optional<PendingFile> file = records.recordOf(key, status.getLen(), etag);
    return file.isPresent() ? pendingStatus(status.getPath(), file.get()) : status;
  }

  LocatedFileStatus resolveLocated(LocatedFileStatus status) throws IOException {
    FileStatus resolved = resolve(status);
    if (resolved == status) {
      return status;
    }
    return new LocatedFileStatus(
        resolved, fs.getFileBlockLocations(resolved, 0, resolved.getLen()));
  }

  interface StatusMapper<T> {
    T apply(T status) throws IOException;
  }

  /** As S3A builds the status of a directory it finds by listing: no time, this user. */
  FileStatus directory(Path path) {
    return new org.apache.hadoop.fs.s3a.S3AFileStatus(
        org.apache.hadoop.fs.s3a.Tristate.UNKNOWN, fs.makeQualified(path), user);
  }

  /**
   * The statuses S3A's listing would give for a directory's children: files with their length, time
   * and ETag, subdirectories without a time.
   */
  FileStatus[] listed(
      CommittedTaskTrees.Children children, java.util.function.Function<String, Path> pathOf) {
    List<FileStatus> statuses = new ArrayList<>();
    for (ObjectInfo file : children.files()) {
      Path path = pathOf.apply(file.key());
      statuses.add(
          new org.apache.hadoop.fs.s3a.S3AFileStatus(
              file.size(),
              file.lastModifiedMillis(),
              path,
              fs.getDefaultBlockSize(path),
              user,
              file.etag(),
              null));
    }
    for (String directory : children.directories()) {
      statuses.add(
          new org.apache.hadoop.fs.s3a.S3AFileStatus(
              org.apache.hadoop.fs.s3a.Tristate.UNKNOWN, pathOf.apply(directory), user));
    }
    return statuses.toArray(new FileStatus[0]);
  }

  /** Resolves a listing's statuses in parallel: records of pending files are read at once. */
  FileStatus[] resolveAll(FileStatus[] listed, WorkerPool pool, String what) throws IOException {
    FileStatus[] resolved = new FileStatus[listed.length];
    List<Integer> indexes = new ArrayList<>(listed.length);
    for (int i = 0; i < listed.length; i++) {
      indexes.add(i);
    }
    Tasks.runAll(pool, what, indexes, i -> resolved[i] = resolve(listed[i]));
    return resolved;
  }

  static <T> RemoteIterator<T> mapped(RemoteIterator<T> source, StatusMapper<T> mapper) {
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

  /** The content summary of a temporary path, from its status and the listing of its files. */
  ContentSummary summaryOf(FileStatus status, RemoteIterator<LocatedFileStatus> all)
      throws IOException {
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
}
