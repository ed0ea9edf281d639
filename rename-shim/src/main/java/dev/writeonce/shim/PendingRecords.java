package dev.writeonce.shim;

import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.json.PendingFileFormat;
import dev.writeonce.core.model.PendingFile;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.PeekedObject;
import dev.writeonce.core.store.StoreGateway;
import dev.writeonce.core.upload.UploadOutputStream;
import java.io.IOException;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * The pending-file records of one instance's gateway: written when a file's upload starts (files of
 * more than one part) and when its writer closes, read back (one GET) when this JVM does not know
 * them, deleted in bulk. What this JVM wrote or read is remembered in {@link KnownKeys} with the
 * ETag of the object that holds it, so a listing recognises a record without reading it again.
 */
final class PendingRecords {

  /** Objects larger than this are never records, so listings do not read them. */
  static final long MAX_RECORD_BYTES = 4L << 20;

  /** What is at a key: a record, an ordinary object, or nothing (empty Optional). */
  record Found(ObjectInfo info, PendingFile record) {
    boolean isRecord() {
      return record != null;
    }
  }

  private final StoreGateway gateway;
  private final KnownKeys known;
  private final ShimStatistics counters;
  private final LongSupplier wallClock;

  PendingRecords(
      StoreGateway gateway, KnownKeys known, ShimStatistics counters, LongSupplier wallClock) {
    this.gateway = gateway;
    this.known = known;
    this.counters = counters;
    this.wallClock = wallClock;
  }

  /**
   * The listener of a file's writer that keeps its record at {@code key}, and ends the key's change
   * once the writer is done: written when it closed with its record in place, unknown otherwise.
   */
  UploadOutputStream.Listener keeperOf(String key, HandedOverOutputStream.WriteEnd writeEnd) {
    java.util.concurrent.atomic.AtomicBoolean recorded =
        new java.util.concurrent.atomic.AtomicBoolean();
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
                wallClock.getAsLong()));
      }

      @Override
      public void closed(UploadOutputStream out, PendingUpload upload) throws IOException {
        write(key, PendingFile.closed(upload, wallClock.getAsLong()));
        recorded.set(true);
      }

      @Override
      public void finished(UploadOutputStream out) {
        writeEnd.ended(recorded.get());
      }
    };
  }

  /** Writes a record at the key its writer owns: one PUT. Returns the object that holds it. */
  ObjectInfo write(String key, PendingFile file) throws IOException {
    return write(key, file, false);
  }

  /**
   * Writes a record a rename moves to a new key, only where no object is (If-None-Match): a rename
   * racing another onto the same key fails rather than overwrite the other's record, whose upload
   * would then be named by nothing. Returns the object that holds it.
   *
   * @throws org.apache.hadoop.fs.FileAlreadyExistsException when the key holds an object
   */
  ObjectInfo move(String key, PendingFile file) throws IOException {
    try {
      return write(key, file, true);
    } catch (dev.writeonce.core.errors.StoreException e) {
      if (!e.is(dev.writeonce.core.errors.ErrorKind.PRECONDITION_FAILED)) {
        throw e;
      }
      throw (IOException)
          new org.apache.hadoop.fs.FileAlreadyExistsException(
                  "cannot rename onto s3a://"
                      + gateway.bucket()
                      + "/"
                      + key
                      + ": an object appeared there during the rename (another rename onto the same"
                      + " name); the source keeps its record")
              .initCause(e);
    }
  }

  private ObjectInfo write(String key, PendingFile file, boolean ifAbsent) throws IOException {
    byte[] body = PendingFileFormat.toJson(file);
    String etag = gateway.putObject(key, body, ifAbsent);
    ObjectInfo object = new ObjectInfo(key, body.length, etag, 0);
    known.recordWritten(key, file, object);
    counters.recordsWritten.incrementAndGet();
    return object;
  }

  /** What is at a key under a temporary directory: one GET, none when this JVM knows it. */
  Optional<Found> find(String key) throws IOException {
    Optional<PendingFile> remembered = known.record(key);
    if (remembered.isPresent()) {
      return Optional.of(new Found(null, remembered.get()));
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
    known.recordRead(key, file, object.info());
    return Optional.of(new Found(object.info(), file));
  }

  /**
   * The record behind a listed file, if it is one: remembered when its ETag matches, else read (one
   * GET). Objects too large to be records are not read.
   */
  Optional<PendingFile> recordOf(String key, long size, String etag) throws IOException {
    if (size > MAX_RECORD_BYTES) {
      return Optional.empty();
    }
    if (etag != null && !etag.isEmpty()) {
      Optional<PendingFile> remembered = known.record(key, etag);
      if (remembered.isPresent()) {
        return remembered;
      }
    }
    return find(key, true).map(Found::record);
  }

  private Optional<Found> find(String key, boolean fromStore) throws IOException {
    if (!fromStore) {
      return find(key);
    }
    Optional<PeekedObject> peeked =
        gateway.peekObject(key, PendingFileFormat.HEAD_BYTES, PendingFileFormat::isRecord);
    if (peeked.isEmpty() || peeked.get().body() == null) {
      return peeked.map(object -> new Found(object.info(), null));
    }
    PendingFile file = parse(key, peeked.get().body());
    known.recordRead(key, file, peeked.get().info());
    return Optional.of(new Found(peeked.get().info(), file));
  }

  /**
   * The keys to delete once a pending file is completed or aborted: its record (where it is stored,
   * for a file moved in this JVM's view only), and the twin a task commit left at the attempt's
   * path.
   */
  List<String> storedKeys(String fileKey, PendingFile file) {
    String recordKey = known.storedKeyOf(fileKey).orElse(fileKey);
    Optional<String> twin = Layouts.attemptTwinOf(recordKey, file.taskAttempt());
    if (twin.isEmpty()) {
      return List.of(recordKey);
    }
    // The attempt ran again under the same id (a stage retry numbering its attempts from 0) and
    // wrote a file of the same name: the key holds that file's record now, not the twin.
    Optional<PendingFile> atTwin = known.record(twin.get());
    if (atTwin.isPresent() && !atTwin.get().uploadId().equals(file.uploadId())) {
      return List.of(recordKey);
    }
    return List.of(recordKey, twin.get());
  }

  /** Deletes records (and markers) in one DeleteObjects per 1,000, even for one key. */
  void delete(Collection<String> keys) throws IOException {
    if (keys.isEmpty()) {
      return;
    }
    // DeleteObjects even for one key: the store's DeleteObject count stays that of data.
    List<String> all = List.copyOf(keys);
    gateway.deleteObjects(all);
    known.recordsDeleted(all);
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
