package dev.writeonce.shim;

import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.json.ShimMissFormat;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.ShimMiss;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.StoreGateway;
import dev.writeonce.core.upload.UploadCompletion;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Renames the rules did not predict: a multipart upload can only create the key it was started for,
 * so a miss completes it there (under the predicted key P) and copies it to the rename's target.
 * While that runs, P shows the data under a wrong name, often inside a live table; this class makes
 * sure it does not stay there:
 *
 * <ol>
 *   <li>Before the completion, a miss record ({@link ShimMiss}) naming P, the target, the upload
 *       and its size goes beside the temporary directory, in {@value #DIRECTORY} under the
 *       outermost temporary root. That directory is deleted by the job's cleanup
 *       (FileOutputCommitter deletes {@code _temporary}, Spark its {@code .spark-staging-*}, Hive
 *       its {@code .hive-staging*}), which is when leftover records are acted on; its name starts
 *       with an underscore, so Hadoop's and Hive's input listings skip it, and no rule predicts a
 *       final key from it. Next to the pending-file records, it needs no request to find: the
 *       cleanup already lists the tree.
 *   <li>When the completion or the copy fails, P is deleted before the rename fails; when even that
 *       fails, the record stays and the error names what to delete.
 *   <li>{@link #cleanUp} deletes P for each leftover record, only while P still holds that miss's
 *       data (its size, and its ETag where the parts predict it), then the record.
 * </ol>
 */
final class ShimMisses {

  private static final Logger LOG = LoggerFactory.getLogger(ShimMisses.class);

  /**
   * A miss completes its upload right after noting it; an object at the predicted key written later
   * than this after the note (by the store's clock) is some later writer's, even when its bytes are
   * the same.
   */
  static final long MISS_COMPLETION_WINDOW_MILLIS = 60_000;

  /** The directory under a temporary root that holds miss records. */
  static final String DIRECTORY = "_writeonce-shim-misses";

  /** Completes an upload under its own key, counting a repeated completion as done. */
  interface Completer {
    void complete(PendingUpload upload) throws IOException;
  }

  /** Copies an object to another key and deletes the original (S3A's rename of a file). */
  interface Copy {
    boolean copy(String fromKey, String toKey) throws IOException;
  }

  private final StoreGateway gateway;
  private final ShimRules rules;
  private final LongSupplier clock;

  ShimMisses(StoreGateway gateway, ShimRules rules, LongSupplier clock) {
    this.gateway = gateway;
    this.rules = rules;
    this.clock = clock;
  }

  /** Whether a key is a miss record's. */
  static boolean isRecord(String key) {
    return key.contains("/" + DIRECTORY + "/") && key.endsWith(".json");
  }

  /**
   * Where the record of a miss of this pending file goes: one key per upload, so a retried rename
   * of the same file writes the same record.
   */
  String recordKey(String sourceKey, String uploadId) {
    String root =
        rules
            .temporaryRoot(sourceKey)
            .orElseThrow(
                () ->
                    new IllegalArgumentException(sourceKey + " lies under no temporary directory"));
    return root + "/" + DIRECTORY + "/" + sha256(uploadId).substring(0, 32) + ".json";
  }

  /**
   * Completes the upload of a pending file under its predicted key and copies it to the target: the
   * miss record first, then the completion, the copy (which deletes the predicted key) and the
   * record's delete. When the completion or the copy fails, the predicted key is deleted again
   * before this fails, so the data is visible under neither name.
   */
  void completeAndCopy(
      String sourceKey, PendingUpload upload, String targetKey, Completer completer, Copy copy)
      throws IOException {
    ShimMiss miss = ShimMiss.of(upload, sourceKey, targetKey, clock.getAsLong());
    String recordKey = recordKey(sourceKey, upload.uploadId());
    gateway.putObject(recordKey, ShimMissFormat.toJson(miss), false);
    try {
      completer.complete(upload);
      if (!copy.copy(miss.predictedKey(), targetKey)) {
        throw new IOException("S3A's copy of " + uri(miss.predictedKey()) + " answered false");
      }
    } catch (IOException | RuntimeException e) {
      throw undone(miss, recordKey, e);
    }
    try {
      gateway.deleteObjects(List.of(recordKey));
    } catch (IOException e) {
      // The data is where it belongs and nothing is at the predicted key: the record is harmless,
      // and deleting the temporary directory removes it.
      LOG.warn(
          "rename shim miss {} -> {}: the copy succeeded but its record {} could not be deleted"
              + " ({}); deleting the temporary directory removes it",
          uri(sourceKey),
          uri(targetKey),
          uri(recordKey),
          e.toString());
    }
  }

  /** Deletes the predicted key of a failed miss; the error says what is left, if anything. */
  private IOException undone(ShimMiss miss, String recordKey, Exception cause) {
    String rename =
        "rename "
            + uri(miss.sourceKey())
            + " to "
            + uri(miss.targetKey())
            + " failed; the rules predicted "
            + uri(miss.predictedKey())
            + ", where the upload was completed to be copied from";
    try {
      // The completion just happened in this process: whatever holds the data at P is it.
      removeIfItHoldsTheMiss(miss, Long.MAX_VALUE);
      gateway.deleteObjects(List.of(recordKey));
      return new IOException(
          rename + ". That object was deleted again, so the data is visible under neither name",
          cause);
    } catch (IOException | RuntimeException cleanup) {
      cause.addSuppressed(cleanup);
      return new IOException(
          rename
              + ", and deleting it failed too: "
              + uri(miss.predictedKey())
              + " may still show this data ("
              + miss.length()
              + " bytes"
              + miss.etag().map(etag -> ", ETag " + etag).orElse("")
              + ") under a wrong name. Delete it, or delete "
              + uri(recordKey.substring(0, recordKey.indexOf("/" + DIRECTORY + "/")))
              + " through the rename shim, which deletes it while it still holds this data; the"
              + " record "
              + uri(recordKey)
              + " names it",
          cause);
    }
  }

  /**
   * Acts on the miss records among these objects (the contents of a temporary directory about to be
   * deleted): aborts each upload in case it was never completed, deletes its predicted key if that
   * still holds the miss's data, and leaves the record to the caller's delete of the tree.
   */
  void cleanUp(List<ObjectInfo> objects) throws IOException {
    for (ObjectInfo object : objects) {
      if (!isRecord(object.key())) {
        continue;
      }
      Optional<byte[]> body = gateway.getObject(object.key());
      if (body.isEmpty()) {
        continue;
      }
      ShimMiss miss;
      try {
        miss = ShimMissFormat.fromJson(body.get(), uri(object.key()));
      } catch (FormatException e) {
        throw new IOException(
            e.getMessage()
                + ": a damaged rename shim miss record. It names an object that may hold data under"
                + " a wrong name; check the key it names, then delete the record",
            e);
      }
      gateway.abortUpload(miss.predictedKey(), miss.uploadId());
      removeIfItHoldsTheMiss(miss, object.lastModifiedMillis() + MISS_COMPLETION_WINDOW_MILLIS);
      LOG.info(
          "rename shim: cleaned up after the failed miss {} -> {} (predicted {})",
          uri(miss.sourceKey()),
          uri(miss.targetKey()),
          uri(miss.predictedKey()));
    }
  }

  /**
   * Deletes the predicted key if it holds the miss's data and was written no later than {@code
   * latestMillis} (by the store's clock).
   */
  private void removeIfItHoldsTheMiss(ShimMiss miss, long latestMillis) throws IOException {
    Optional<ObjectInfo> found = gateway.headObject(miss.predictedKey());
    if (found.isEmpty()) {
      return;
    }
    if (found.get().lastModifiedMillis() > latestMillis) {
      // A retried job may have written the same bytes there since, legitimately: identical
      // content and parts give an identical ETag, so only the time tells the two apart.
      LOG.warn(
          "rename shim: {} was written more than {} s after the miss {} -> {} was noted: taken"
              + " for a later writer's object and left in place. If it is the miss's data, delete"
              + " it",
          uri(miss.predictedKey()),
          MISS_COMPLETION_WINDOW_MILLIS / 1000,
          uri(miss.sourceKey()),
          uri(miss.targetKey()));
      return;
    }
    if (!UploadCompletion.isCompletedObject(
        miss.length(), miss.etag(), miss.parts(), found.get())) {
      LOG.warn(
          "rename shim: {} is not the data of the miss {} -> {} ({} bytes, ETag {}, where the"
              + " upload makes {} bytes{}): another writer's object, left in place",
          uri(miss.predictedKey()),
          uri(miss.sourceKey()),
          uri(miss.targetKey()),
          found.get().size(),
          found.get().etag(),
          miss.length(),
          miss.etag().map(etag -> ", ETag " + etag).orElse(""));
      return;
    }
    gateway.deleteObjects(List.of(miss.predictedKey()));
  }

  private String uri(String key) {
    return "s3a://" + gateway.bucket() + "/" + key;
  }

  private static String sha256(String text) {
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every Java runtime", e);
    }
  }
}
