package dev.writeonce.shim;

import dev.writeonce.core.model.PendingFile;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.StoreGateway;
import dev.writeonce.core.work.Tasks;
import dev.writeonce.core.work.WorkerPool;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;
import org.apache.hadoop.fs.Path;

/**
 * Deletes under the shim: deleting a pending file, or a directory holding pending files, aborts
 * their uploads before their records go; deleting any directory recursively aborts the uploads of
 * the records under it, so that no upload outlives the temporary directory that named it.
 */
final class Deletes {

  private final StoreGateway gateway;
  private final PendingRecords records;
  private final KnownKeys known;
  private final SeenListings seen;
  private final ShimMisses misses;
  private final Predicate<String> temporary;
  private final ShimStatistics counters;
  private final WorkerPool pool;
  private final S3ACallbacks s3a;

  Deletes(
      StoreGateway gateway,
      PendingRecords records,
      KnownKeys known,
      SeenListings seen,
      ShimMisses misses,
      Predicate<String> temporary,
      ShimStatistics counters,
      WorkerPool pool,
      S3ACallbacks s3a) {
    this.gateway = gateway;
    this.records = records;
    this.known = known;
    this.seen = seen;
    this.misses = misses;
    this.temporary = temporary;
    this.counters = counters;
    this.pool = pool;
    this.s3a = s3a;
  }

  /** Deletes a path whose key is {@code key}, with S3A's semantics and result. */
  boolean delete(Path path, String key, boolean recursive) throws IOException {
    if (!temporary.test(key)) {
      if (recursive) {
        abortRecordsUnder(gateway.listObjects(Keys.prefixOf(key)));
      }
      return s3a.delete(path, recursive);
    }
    Optional<PendingFile> remembered = known.record(key);
    if (remembered.isPresent()) {
      abort(remembered.get());
      records.delete(records.storedKeys(key, remembered.get()));
      return true;
    }
    List<ObjectInfo> under = seen.objects(key);
    if (under.isEmpty()) {
      Optional<PendingRecords.Found> found = records.find(key);
      if (found.isPresent() && found.get().isRecord()) {
        abort(found.get().record());
        records.delete(records.storedKeys(key, found.get().record()));
        return true;
      }
      return found.isPresent() && s3a.delete(path, recursive);
    }
    boolean onlyMarker = under.size() == 1 && under.get(0).key().equals(key + "/");
    if (!recursive && !onlyMarker) {
      return s3a.delete(path, false); // refuses a non-empty directory, as S3A does
    }
    // A temporary tree holds records and markers only: abort, then delete it in bulk.
    List<String> keys = abortRecordsUnder(under);
    records.delete(keys);
    return true;
  }

  /**
   * Aborts the upload of every pending file among these objects, and undoes what failed misses left
   * (see {@link ShimMisses#cleanUp}); returns the keys to delete with them: every object, and for
   * each record its stored copy and its twin.
   */
  private List<String> abortRecordsUnder(List<ObjectInfo> objects) throws IOException {
    misses.cleanUp(objects);
    List<ObjectInfo> candidates = new ArrayList<>();
    List<String> keys = java.util.Collections.synchronizedList(new ArrayList<>());
    for (ObjectInfo object : objects) {
      String key = object.key();
      if (!key.endsWith("/") && temporary.test(key) && !ShimMisses.isRecord(key)) {
        candidates.add(object);
      } else {
        keys.add(key);
      }
    }
    Tasks.runAll(
        pool,
        "aborting pending uploads",
        candidates,
        object -> {
          Optional<PendingFile> file = records.recordOf(object.key(), object.size(), object.etag());
          if (file.isPresent()) {
            abort(file.get());
            keys.addAll(records.storedKeys(object.key(), file.get()));
          } else {
            keys.add(object.key());
          }
        });
    return new ArrayList<>(new java.util.LinkedHashSet<>(keys));
  }

  private void abort(PendingFile file) throws IOException {
    gateway.abortUpload(file.key(), file.uploadId());
    counters.uploadsAborted.incrementAndGet();
  }
}
