package dev.writeonce.shim;

import dev.writeonce.core.model.PendingFile;
import dev.writeonce.core.store.KeyProbe;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.StoreGateway;
import dev.writeonce.core.work.Tasks;
import dev.writeonce.core.work.WorkerPool;
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
final class Statuses {

  private final S3ACallbacks fs;
  private final StoreGateway gateway;
  private final PendingRecords records;
  private final KnownKeys known;

  Statuses(S3ACallbacks fs, StoreGateway gateway, PendingRecords records, KnownKeys known) {
    this.fs = fs;
    this.gateway = gateway;
    this.records = records;
    this.known = known;
  }

  FileStatus pendingStatus(Path path, PendingFile file) {
    return new FileStatus(
        file.length(),
        false,
        1,
        fs.blockSize(path),
        file.createdAtMillis(),
        0,
        FsPermission.getFileDefault(),
        fs.user(),
        fs.user(),
        fs.qualify(path));
  }

  /**
   * The status of a path under a temporary directory whose key is {@code key}: from what this JVM
   * knows, else from one LIST, and the record's GET for a file small enough to be one.
   */
  FileStatus statusOf(Path path, String key) throws IOException {
    Known what = known.answer(key);
    if (what.isFile() && what.record() != null) {
      return pendingStatus(path, what.record());
    }
    if (what.isDirectory()) {
      return new FileStatus(0, true, 1, 0, 0, fs.qualify(path));
    }
    if (what.isAbsent()) {
      throw new FileNotFoundException("No such file or directory: " + fs.qualify(path));
    }
    KeyProbe probe = gateway.probe(key);
    if (probe.file().isPresent()) {
      ObjectInfo info = probe.file().get();
      Optional<PendingFile> file = records.recordOf(key, info.size(), info.etag());
      if (file.isPresent()) {
        return pendingStatus(path, file.get());
      }
      return new FileStatus(
          info.size(), false, 1, fs.blockSize(path), info.lastModifiedMillis(), fs.qualify(path));
    }
    if (probe.directory()) {
      return new FileStatus(0, true, 1, 0, 0, fs.qualify(path));
    }
    throw new FileNotFoundException("No such file or directory: " + fs.qualify(path));
  }

  /** A listed status with the real length when it is a pending file's record. */
  <S extends FileStatus> FileStatus resolve(
      S status, java.util.function.Predicate<String> temporary) throws IOException {
    if (!status.isFile()) {
      return status;
    }
    String key = fs.keyOf(status.getPath());
    if (!temporary.test(key)) {
      return status;
    }
    String etag = status instanceof EtagSource source ? source.getEtag() : null;
    Optional<PendingFile> file = records.recordOf(key, status.getLen(), etag);
    return file.isPresent() ? pendingStatus(status.getPath(), file.get()) : status;
  }

  LocatedFileStatus resolveLocated(
      LocatedFileStatus status, java.util.function.Predicate<String> temporary) throws IOException {
    FileStatus resolved = resolve(status, temporary);
    if (resolved == status) {
      return status;
    }
    return new LocatedFileStatus(resolved, fs.blockLocations(resolved, 0, resolved.getLen()));
  }

  interface StatusMapper<T> {
    T apply(T status) throws IOException;
  }

  /** As S3A builds the status of a directory it finds by listing: no time, this user. */
  FileStatus directory(Path path) {
    return new org.apache.hadoop.fs.s3a.S3AFileStatus(
        org.apache.hadoop.fs.s3a.Tristate.UNKNOWN, fs.qualify(path), fs.user());
  }

  /**
   * The statuses S3A's listing would give for a directory's children: files with their length, time
   * and ETag, subdirectories without a time.
   */
  FileStatus[] listed(KnownKeys.Children children) {
    List<FileStatus> statuses = new ArrayList<>();
    for (ObjectInfo file : children.files()) {
      Path path = fs.pathOf(file.key());
      statuses.add(
          new org.apache.hadoop.fs.s3a.S3AFileStatus(
              file.size(),
              file.lastModifiedMillis(),
              path,
              fs.blockSize(path),
              fs.user(),
              file.etag(),
              null));
    }
    for (String directory : children.directories()) {
      statuses.add(
          new org.apache.hadoop.fs.s3a.S3AFileStatus(
              org.apache.hadoop.fs.s3a.Tristate.UNKNOWN, fs.pathOf(directory), fs.user()));
    }
    return statuses.toArray(new FileStatus[0]);
  }

  /** Resolves a listing's statuses in parallel: records of pending files are read at once. */
  FileStatus[] resolveAll(
      FileStatus[] listed,
      java.util.function.Predicate<String> temporary,
      WorkerPool pool,
      String what)
      throws IOException {
    FileStatus[] resolved = new FileStatus[listed.length];
    List<Integer> indexes = new ArrayList<>(listed.length);
    for (int i = 0; i < listed.length; i++) {
      indexes.add(i);
    }
    Tasks.runAll(pool, what, indexes, i -> resolved[i] = resolve(listed[i], temporary));
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
