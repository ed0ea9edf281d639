package dev.writeonce.shim;

import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.StoreGateway;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;

/**
 * Listings of temporary directories as this JVM sees them while files are moved in its view only
 * ({@link KnownKeys#moveInView}): without the records of those files where they are stored, with
 * the files where they were moved to. Every listing call of the file system goes through here, so
 * that a caller sees one directory whichever call it uses; with nothing moved in view the store's
 * listing is the view, and S3A answers unchanged.
 */
final class SeenListings {

  private final S3ACallbacks s3a;
  private final StoreGateway gateway;
  private final KnownKeys known;
  private final Statuses statuses;

  SeenListings(S3ACallbacks s3a, StoreGateway gateway, KnownKeys known, Statuses statuses) {
    this.s3a = s3a;
    this.gateway = gateway;
    this.known = known;
    this.statuses = statuses;
  }

  /** Whether listings under the key may differ from the store's: something is moved in view. */
  boolean differ(String key, java.util.function.Predicate<String> temporary) {
    return temporary.test(key) && known.anyMovedInView();
  }

  /**
   * A file moved in view only is listed as itself, and the place its record is stored as missing,
   * as {@code getFileStatus} answers for them; empty for any other key.
   */
  private Optional<FileStatus> movedFile(Path path, String key) throws IOException {
    if (known.storedKeyOf(key).isEmpty() && !known.holdsRecordMovedInView(key)) {
      return Optional.empty();
    }
    return Optional.of(statuses.statusOf(path, key)); // FileNotFoundException for a stored record
  }

  /** A directory's children as seen: S3A's listing with the overlay applied. */
  FileStatus[] children(Path path, String key) throws IOException {
    Optional<FileStatus> itself = movedFile(path, key);
    if (itself.isPresent()) {
      return new FileStatus[] {itself.get()};
    }
    List<ObjectInfo> moved = known.movedInViewUnder(key);
    FileStatus[] listed;
    try {
      listed = s3a.listStatus(path);
    } catch (FileNotFoundException e) {
      if (moved.isEmpty()) {
        throw e;
      }
      listed = new FileStatus[0];
    }
    if (moved.isEmpty() && !known.anyMovedInView()) {
      return listed;
    }
    List<FileStatus> seen = new ArrayList<>();
    Set<Path> paths = new HashSet<>();
    for (FileStatus status : listed) {
      if (!known.holdsRecordMovedInView(s3a.keyOf(status.getPath()))) {
        seen.add(status);
        paths.add(status.getPath());
      }
    }
    List<ObjectInfo> files = new ArrayList<>();
    Set<String> directories = new TreeSet<>();
    String prefix = Keys.prefixOf(key);
    for (ObjectInfo file : moved) {
      String rest = file.key().substring(prefix.length());
      int slash = rest.indexOf('/');
      if (slash < 0) {
        files.add(file);
      } else {
        directories.add(prefix + rest.substring(0, slash));
      }
    }
    for (FileStatus status :
        statuses.listed(new KnownKeys.Children(files, List.copyOf(directories)))) {
      if (paths.add(status.getPath())) {
        seen.add(status);
      }
    }
    return seen.toArray(new FileStatus[0]);
  }

  /**
   * The files under a directory as seen, S3A's {@code listFiles}: its children's files, or, {@code
   * recursive}, every file below it, from one flat listing with the overlay applied.
   */
  List<FileStatus> files(Path path, String key, boolean recursive) throws IOException {
    List<FileStatus> files = new ArrayList<>();
    Optional<FileStatus> itself = movedFile(path, key);
    if (itself.isPresent()) {
      files.add(itself.get());
      return files;
    }
    if (!recursive) {
      for (FileStatus status : children(path, key)) {
        if (status.isFile()) {
          files.add(status);
        }
      }
      return files;
    }
    List<ObjectInfo> stored = gateway.listObjects(Keys.prefixOf(key));
    List<ObjectInfo> seen = new ArrayList<>();
    for (ObjectInfo object : known.asSeen(key, stored)) {
      if (!object.key().endsWith("/")) {
        seen.add(object);
      }
    }
    if (seen.isEmpty() && stored.isEmpty()) {
      // Nothing stored or moved under the key: a file, an empty directory or nothing, as S3A says.
      RemoteIterator<LocatedFileStatus> listed = s3a.listFiles(path, true);
      while (listed.hasNext()) {
        files.add(listed.next());
      }
      return files;
    }
    files.addAll(List.of(statuses.listed(new KnownKeys.Children(seen, List.of()))));
    return files;
  }

  /** Every object under a directory as seen, from one flat listing. */
  List<ObjectInfo> objects(String key) throws IOException {
    return known.asSeen(key, gateway.listObjects(Keys.prefixOf(key)));
  }

  /** Statuses as located statuses, as S3A's located listings give them. */
  LocatedFileStatus located(FileStatus status) throws IOException {
    if (status instanceof LocatedFileStatus located) {
      return located;
    }
    return new LocatedFileStatus(
        status, status.isFile() ? s3a.blockLocations(status, 0, status.getLen()) : null);
  }

  /** An iterator over statuses already listed. */
  static <T> RemoteIterator<T> iterator(List<T> statuses) {
    Iterator<T> each = statuses.iterator();
    return new RemoteIterator<>() {
      @Override
      public boolean hasNext() {
        return each.hasNext();
      }

      @Override
      public T next() {
        return each.next();
      }
    };
  }
}
