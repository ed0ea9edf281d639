package dev.writeonce.shim;

import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.json.PendingFileFormat;
import dev.writeonce.core.model.Etags;
import dev.writeonce.core.model.PendingFile;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.PeekedObject;
import dev.writeonce.core.store.StoreGateway;
import dev.writeonce.core.upload.UploadOutputStream;
import java.io.IOException;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The pending-file records of one shim instance: written when a file's upload starts and when its
 * writer closes, read back (one GET) when another instance wrote them, and remembered with the ETag
 * of the object holding them, so that a listing recognises them without reading them again.
 */
final class ShimRecords {

  /** Objects larger than this are never records, so listings do not read them. */
  static final long MAX_RECORD_BYTES = 4L << 20;

  /** Records remembered by one instance at most; a lookup past it costs one GET again. */
  private static final int MAX_CACHED_RECORDS = 200_000;

  /** A record this instance wrote or read, with the ETag of the object holding it. */
  private record Cached(String etag, PendingFile file) {}

  /** What is at a key: a record, an ordinary object, or nothing (empty Optional). */
  record Found(ObjectInfo info, PendingFile record) {
    boolean isRecord() {
      return record != null;
    }
  }

  private final StoreGateway gateway;
  private final ShimStatistics counters;
  private final Map<String, Cached> records = new ConcurrentHashMap<>();

  /** How many of the remembered records lie under each directory: those directories exist. */
  private final Map<String, Integer> recordsUnder = new java.util.HashMap<>();

  ShimRecords(StoreGateway gateway, ShimStatistics counters) {
    this.gateway = gateway;
    this.counters = counters;
  }

  /** The listener of a file's writer that keeps its record at {@code key}. */
  UploadOutputStream.Listener keeperOf(String key) {
    return new UploadOutputStream.Listener() {
      @Override
      public void uploadStarted(UploadOutputStream out, String uploadId) throws IOException {
        write(
            key,
            PendingFile.writing(
                gateway.bucket(),
                out.finalKey(),
                uploadId,
                ShimRules.attemptOf(key),
                System.currentTimeMillis()));
      }

      @Override
      public void closed(UploadOutputStream out, PendingUpload upload) throws IOException {
        write(key, PendingFile.closed(upload, System.currentTimeMillis()));
      }

      @Override
      public void finished(UploadOutputStream out) {}
    };
  }

  /** Writes a record: one PUT. */
  void write(String key, PendingFile file) throws IOException {
    String etag = gateway.putObject(key, PendingFileFormat.toJson(file), false);
    remember(key, new Cached(etag, file));
    counters.recordsWritten.incrementAndGet();
  }

  /**
   * Records are consumed by renames and deletes, so the cache stays small; files that are never
   * renamed (abandoned attempts) would make it grow in a long-lived process, so it is bounded.
   */
  private synchronized void remember(String key, Cached cached) {
    if (records.size() >= MAX_CACHED_RECORDS) {
      records.clear();
      recordsUnder.clear();
    }
    if (records.put(key, cached) == null) {
      countUnder(key, 1);
    }
  }

  /** Forgets a remembered record. */
  private synchronized void drop(String key) {
    if (records.remove(key) != null) {
      countUnder(key, -1);
    }
  }

  private void countUnder(String key, int change) {
    for (int slash = key.lastIndexOf('/'); slash > 0; slash = key.lastIndexOf('/', slash - 1)) {
      recordsUnder.merge(key.substring(0, slash), change, (a, b) -> a + b == 0 ? null : a + b);
    }
  }

  /**
   * Whether a directory holds a record this instance wrote or read and has not seen go: a task's
   * attempt directory, whose existence its commit checks twice, is known without a request.
   */
  synchronized boolean holdsKnownRecords(String directoryKey) {
    return recordsUnder.containsKey(directoryKey);
  }

  /** The record at a key as this instance knows it, without a request. */
  Optional<PendingFile> known(String key) {
    Cached cached = records.get(key);
    return cached == null ? Optional.empty() : Optional.of(cached.file());
  }

  /** What is at a key under a temporary directory: one GET, none when this instance knows it. */
  Optional<Found> find(String key) throws IOException {
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

  /**
   * The record behind a listed file, if it is one: from the cache when its ETag matches. Listings
   * give ETags in quotes, as S3 sends them; the gateway gives them without.
   */
  Optional<PendingFile> recordOf(String key, long size, String etag) throws IOException {
    if (size > MAX_RECORD_BYTES) {
      return Optional.empty();
    }
    Cached cached = records.get(key);
    if (cached != null && etag != null && Etags.unquote(etag).equals(cached.etag())) {
      return Optional.of(cached.file());
    }
    drop(key);
    return find(key).map(Found::record);
  }

  /** Forgets a record whose object another step deletes. */
  void forget(String key) {
    drop(key);
  }

  /** Deletes records (and markers) in one DeleteObjects, even for one key. */
  void delete(Collection<String> keys) throws IOException {
    if (keys.isEmpty()) {
      return;
    }
    // DeleteObjects even for one key: the store's DeleteObject count stays that of data.
    gateway.deleteObjects(List.copyOf(keys));
    keys.forEach(this::drop);
  }

  private PendingFile parse(String key, byte[] body) throws IOException {
    try {
      return PendingFileFormat.fromJson(body, "s3a://" + gateway.bucket() + "/" + key);
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
}
