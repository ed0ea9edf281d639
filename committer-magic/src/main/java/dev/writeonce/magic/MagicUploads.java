package dev.writeonce.magic;

import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.store.StoreGateway;
import dev.writeonce.core.upload.UploadOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ExecutorService;

/**
 * The pending uploads of the task attempts running in this JVM, kept between the writers that
 * create them and the task commit that hands them on. Nothing of them is written to the store until
 * the task commits: no marker, no per-file record. An attempt's entry is removed when it commits or
 * aborts.
 */
final class MagicUploads {

  /** What one attempt has written: closed files, and writers still open. */
  static final class Attempt {
    final Map<String, PendingUpload> closed = new ConcurrentSkipListMap<>();
    final Set<UploadOutputStream> open = ConcurrentHashMap.newKeySet();

    /** Opens a writer of this attempt: open until it closes, then pending under its name. */
    UploadOutputStream open(
        StoreGateway store,
        String path,
        MagicPaths.Target target,
        String attemptId,
        long partSize,
        int buffers,
        ExecutorService pool) {
      String relative = target.relative();
      UploadOutputStream out =
          new UploadOutputStream(
              store,
              path,
              target.finalKey(),
              relative,
              attemptId,
              partSize,
              buffers,
              pool,
              new UploadOutputStream.Listener() {
                @Override
                public void closed(UploadOutputStream stream, PendingUpload upload) {
                  closed.put(relative, upload);
                }

                @Override
                public void finished(UploadOutputStream stream) {
                  open.remove(stream);
                }
              });
      open.add(out);
      return out;
    }
  }

  private static final Map<String, Attempt> ATTEMPTS = new ConcurrentHashMap<>();

  private MagicUploads() {}

  private static String id(String bucket, String attemptKey) {
    return bucket + "/" + attemptKey;
  }

  static Attempt attempt(String bucket, String attemptKey) {
    return ATTEMPTS.computeIfAbsent(id(bucket, attemptKey), k -> new Attempt());
  }

  static Optional<Attempt> existing(String bucket, String attemptKey) {
    return Optional.ofNullable(ATTEMPTS.get(id(bucket, attemptKey)));
  }

  /** Removes an attempt and returns what it held. */
  static Optional<Attempt> remove(String bucket, String attemptKey) {
    return Optional.ofNullable(ATTEMPTS.remove(id(bucket, attemptKey)));
  }

  /** The keys of attempts whose directory lies under a key prefix, in this bucket. */
  static List<String> attemptsUnder(String bucket, String keyPrefix) {
    List<String> found = new ArrayList<>();
    String prefix = id(bucket, keyPrefix);
    for (String id : ATTEMPTS.keySet()) {
      if (id.startsWith(prefix)) {
        found.add(id.substring(bucket.length() + 1));
      }
    }
    return found;
  }
}
