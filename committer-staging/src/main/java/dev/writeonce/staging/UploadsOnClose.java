package dev.writeonce.staging;

import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.store.StoreGateway;
import dev.writeonce.core.work.WorkerPool;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The uploads one staging attempt starts as its writers close files, so that its task commit waits
 * only for those still running. Before an upload is created its key is in the attempt's intent (the
 * same object the task commit writes), so the uploads of an attempt that dies are found from the
 * store as before; files that close together share one intent PUT.
 *
 * <p>An upload stands for the file as it was closed. A file that is written again, appended to,
 * truncated, renamed or deleted through {@link StagingLocalFileSystem} afterwards makes the upload
 * stale: it is aborted, and the task commit uploads what the file holds then. The commit checks
 * size and modification time as well, for changes made around the file system.
 *
 * <p>Attempts register by their local directory; the file system finds the attempt of a file by its
 * parents. Registrations live in this JVM only: an attempt set up in another JVM simply uploads
 * everything at task commit.
 */
final class UploadsOnClose {

  private static final Logger LOG = LoggerFactory.getLogger(UploadsOnClose.class);

  private static final Map<Path, UploadsOnClose> ATTEMPTS = new ConcurrentHashMap<>();

  /** Writes the attempt's intent: every key it may create an upload for. */
  interface IntentWriter {
    void write(List<String> keys) throws IOException;
  }

  /** What the attempt's files became: uploads to keep, and the keys its intent names. */
  record Closed(Map<Path, PendingUpload> uploads, Set<String> intentKeys) {}

  /**
   * An upload started for a file as it was when closed. Whether it runs is decided once: the task
   * claims it as it starts, or a retirement cancels it before that. A Future's own cancel is no
   * such decision: it also succeeds while the task runs, and the upload it creates would be left
   * open with nobody waiting for it.
   */
  private record Started(
      Path file,
      String key,
      long size,
      long modified,
      Future<PendingUpload> upload,
      java.util.concurrent.atomic.AtomicInteger phase) {

    private static final int WAITING = 0;
    private static final int RUNNING = 1;
    private static final int CANCELLED = 2;

    /** True when the upload never started and never will; otherwise it must be awaited. */
    boolean cancelIfNotStarted() {
      if (!phase.compareAndSet(WAITING, CANCELLED)) {
        return false;
      }
      upload.cancel(false);
      return true;
    }
  }

  private final Path attemptDir;
  private final String attempt;
  private final StoreGateway store;
  private final Function<Path, String> keyOf;
  private final IntentWriter intents;
  private final long partSize;
  private final long minSize;
  private final ThreadPoolExecutor pool;

  private final Object lock = new Object();
  private boolean accepting = true;
  private final Set<String> closedKeys = new LinkedHashSet<>();
  private final Map<Path, Started> current = new HashMap<>();
  private final List<Started> stale = new ArrayList<>();

  /** Serialises intent writes: each one names every key of the one before, and more. */
  private final Object intentLock = new Object();

  private volatile Set<String> intentKeys = Set.of();

  private UploadsOnClose(
      Path attemptDir,
      String attempt,
      StoreGateway store,
      Function<Path, String> keyOf,
      IntentWriter intents,
      long partSize,
      long minSize,
      int threads) {
    this.attemptDir = attemptDir;
    this.attempt = attempt;
    this.store = store;
    this.keyOf = keyOf;
    this.intents = intents;
    this.partSize = partSize;
    this.minSize = minSize;
    this.pool = WorkerPool.boundedExecutor("writeonce-" + attempt + "-upload-", threads);
  }

  /**
   * Starts uploading the attempt's files as they close. An earlier registration of the same
   * directory (a task set up twice) is aborted.
   */
  static void register(
      Path attemptDir,
      String attempt,
      StoreGateway store,
      Function<Path, String> keyOf,
      IntentWriter intents,
      long partSize,
      long minSize,
      int threads) {
    Path dir = normalize(attemptDir);
    forgetVanished();
    UploadsOnClose fresh =
        new UploadsOnClose(dir, attempt, store, keyOf, intents, partSize, minSize, threads);
    UploadsOnClose earlier = ATTEMPTS.put(dir, fresh);
    if (earlier != null) {
      earlier.abort();
    }
  }

  /** Whether an attempt's directory is registered in this JVM. */
  static boolean isRegistered(Path attemptDir) {
    return ATTEMPTS.containsKey(normalize(attemptDir));
  }

  /**
   * Ends registrations whose directory is gone: attempts that neither committed nor aborted here (a
   * MapReduce attempt without output needs no task commit), whose local files were removed since.
   * Their uploads, if any, are aborted; the intent names them in any case.
   */
  private static void forgetVanished() {
    for (Iterator<Map.Entry<Path, UploadsOnClose>> it = ATTEMPTS.entrySet().iterator();
        it.hasNext(); ) {
      Map.Entry<Path, UploadsOnClose> entry = it.next();
      if (!Files.isDirectory(entry.getKey())) {
        it.remove();
        entry.getValue().abort();
      }
    }
  }

  /** Ends the registration of an attempt's directory, giving what it started to the caller. */
  static Optional<UploadsOnClose> remove(Path attemptDir) {
    return Optional.ofNullable(ATTEMPTS.remove(normalize(attemptDir)));
  }

  /** Ends and aborts every registration under a directory: a job's attempts on this machine. */
  static void abortUnder(Path directory) {
    Path dir = normalize(directory);
    for (Iterator<Map.Entry<Path, UploadsOnClose>> it = ATTEMPTS.entrySet().iterator();
        it.hasNext(); ) {
      Map.Entry<Path, UploadsOnClose> entry = it.next();
      if (entry.getKey().startsWith(dir)) {
        it.remove();
        entry.getValue().abort();
      }
    }
  }

  /** A writer closed a local file: upload it now if an attempt owns it and it is large enough. */
  static void closed(Path file) {
    if (ATTEMPTS.isEmpty()) {
      return;
    }
    try {
      Path path = normalize(file);
      attemptOf(path).ifPresent(a -> a.onClose(path));
    } catch (RuntimeException e) {
      // Never the writer's failure: the task commit uploads the file instead.
      LOG.warn("{}: not uploaded on close ({}); task commit uploads it", file, e.toString());
    }
  }

  /**
   * A local file or directory is about to change (written again, appended to, truncated, renamed or
   * deleted): uploads of what it held are stale.
   */
  static void changing(Path fileOrDirectory) {
    if (ATTEMPTS.isEmpty()) {
      return;
    }
    Path path = normalize(fileOrDirectory);
    for (UploadsOnClose attempt : ATTEMPTS.values()) {
      if (path.startsWith(attempt.attemptDir) || attempt.attemptDir.startsWith(path)) {
        attempt.markStale(path);
      }
    }
  }

  private static Optional<UploadsOnClose> attemptOf(Path file) {
    for (Path dir = file.getParent(); dir != null; dir = dir.getParent()) {
      UploadsOnClose attempt = ATTEMPTS.get(dir);
      if (attempt != null) {
        return Optional.of(attempt);
      }
    }
    return Optional.empty();
  }

  private static Path normalize(Path path) {
    return path.toAbsolutePath().normalize();
  }

  /** The keys the attempt's intent names so far. */
  Set<String> intentKeys() {
    return intentKeys;
  }

  private void onClose(Path file) {
    BasicFileAttributes attributes;
    try {
      attributes = Files.readAttributes(file, BasicFileAttributes.class);
    } catch (IOException e) {
      LOG.debug("{}: not uploaded on close ({}); task commit uploads it", file, e.toString());
      return;
    }
    if (!attributes.isRegularFile() || attributes.size() < minSize || isChecksumFile(file)) {
      return;
    }
    String key = keyOf.apply(file);
    long size = attributes.size();
    long modified = attributes.lastModifiedTime().toMillis();
    synchronized (lock) {
      if (!accepting) {
        return;
      }
      Started earlier = current.remove(file);
      if (earlier != null) {
        retire(earlier);
      }
      closedKeys.add(key);
      java.util.concurrent.atomic.AtomicInteger phase =
          new java.util.concurrent.atomic.AtomicInteger();
      Future<PendingUpload> upload =
          pool.submit(
              () -> {
                if (!phase.compareAndSet(Started.WAITING, Started.RUNNING)) {
                  throw new CancellationException("retired before it started");
                }
                nameInIntent(key);
                return LocalFileUploader.upload(store, key, file, size, partSize, attempt);
              });
      current.put(file, new Started(file, key, size, modified, upload, phase));
    }
    LOG.debug("{}: uploading {} bytes to {} on close", attempt, size, key);
  }

  /**
   * Makes the intent name a key before its upload is created: one PUT naming every file closed so
   * far, unless an earlier one already named it.
   */
  private void nameInIntent(String key) throws IOException {
    synchronized (intentLock) {
      if (intentKeys.contains(key)) {
        return;
      }
      Set<String> keys = new LinkedHashSet<>(intentKeys);
      synchronized (lock) {
        keys.addAll(closedKeys);
      }
      intents.write(List.copyOf(keys));
      intentKeys = Set.copyOf(keys);
    }
  }

  private void markStale(Path path) {
    synchronized (lock) {
      Started file = current.remove(path);
      if (file != null) {
        retire(file);
        return;
      }
      if (!Files.isDirectory(path)) {
        return; // a new file, or one never uploaded: nothing to scan for
      }
      for (Iterator<Map.Entry<Path, Started>> it = current.entrySet().iterator(); it.hasNext(); ) {
        Started started = it.next().getValue();
        if (started.file().startsWith(path)) {
          it.remove();
          retire(started);
        }
      }
    }
  }

  /** An upload that no longer stands for its file: never started, or to be aborted once done. */
  private void retire(Started started) {
    if (!started.cancelIfNotStarted()) {
      stale.add(started); // running or done: awaited and aborted at the attempt's end
    }
  }

  /**
   * Stops taking files and waits for every upload started. Uploads of files that are no longer as
   * they were closed are aborted. When any upload failed, every upload is aborted and the first
   * failure thrown: the attempt fails as a failed upload at task commit would fail it.
   */
  Closed finish() throws IOException {
    List<Started> all = stopAccepting();
    Map<Started, PendingUpload> done = new HashMap<>();
    IOException failure = null;
    for (Started started : all) {
      try {
        done.put(started, await(started));
      } catch (IOException e) {
        if (failure == null) {
          failure =
              new IOException(
                  "uploading "
                      + started.file()
                      + " to "
                      + store.bucket()
                      + "/"
                      + started.key()
                      + " on close failed: "
                      + e.getMessage(),
                  e);
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    if (failure != null) {
      abortQuietly(done.values(), failure);
      throw failure;
    }
    Map<Path, PendingUpload> kept = new HashMap<>();
    List<PendingUpload> discarded = new ArrayList<>();
    synchronized (lock) {
      for (Started started : all) {
        PendingUpload upload = done.get(started);
        if (current.get(started.file()) == started && unchanged(started)) {
          kept.put(started.file(), upload);
        } else {
          discarded.add(upload);
        }
      }
    }
    if (!discarded.isEmpty()) {
      LOG.info(
          "{}: {} files changed after they were uploaded on close; their uploads are aborted and"
              + " task commit uploads them again",
          attempt,
          discarded.size());
      IOException aborts = new IOException("aborting stale uploads of " + attempt);
      abortQuietly(discarded, aborts);
      if (aborts.getSuppressed().length > 0) {
        // The intent names them: the job's commit, abort or recovery aborts them.
        LOG.warn("{}: {}", aborts.getMessage(), aborts.getSuppressed()[0].getMessage());
      }
    }
    return new Closed(kept, intentKeys);
  }

  /** Stops taking files, lets what runs end, and aborts every upload it started. */
  void abort() {
    List<Started> all = stopAccepting();
    List<PendingUpload> done = new ArrayList<>();
    int unknown = 0;
    for (Started started : all) {
      if (started.cancelIfNotStarted()) {
        continue;
      }
      try {
        done.add(await(started));
      } catch (InterruptedIOException e) {
        unknown++; // still running: the intent names its key for the job's cleanup
      } catch (IOException e) {
        // A failed upload aborted itself.
      }
    }
    if (unknown > 0) {
      LOG.warn(
          "{}: interrupted while {} uploads still ran; the attempt's intent names them for the"
              + " job's commit, abort or recovery to abort",
          attempt,
          unknown);
    }
    IOException aborts = new IOException("aborting the uploads of " + attempt);
    abortQuietly(done, aborts);
    if (aborts.getSuppressed().length > 0) {
      LOG.warn(
          "{}: {} of {} uploads could not be aborted, first: {}; the attempt's intent names them"
              + " for the job's abort or recovery",
          attempt,
          aborts.getSuppressed().length,
          done.size(),
          aborts.getSuppressed()[0].getMessage());
    }
  }

  private List<Started> stopAccepting() {
    List<Started> all;
    synchronized (lock) {
      accepting = false;
      all = new ArrayList<>(stale);
      all.addAll(current.values());
    }
    pool.shutdown();
    return all;
  }

  private static PendingUpload await(Started started) throws IOException {
    try {
      return started.upload().get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      InterruptedIOException interrupted =
          new InterruptedIOException(
              "interrupted while waiting for the upload of " + started.file());
      interrupted.initCause(e);
      throw interrupted;
    } catch (CancellationException e) {
      throw new IOException("the upload of " + started.file() + " was cancelled", e);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof IOException io) {
        throw io;
      }
      if (cause instanceof RuntimeException runtime) {
        throw runtime;
      }
      throw new IOException(cause);
    }
  }

  private static boolean unchanged(Started started) {
    try {
      BasicFileAttributes now = Files.readAttributes(started.file(), BasicFileAttributes.class);
      return now.isRegularFile()
          && now.size() == started.size()
          && now.lastModifiedTime().toMillis() == started.modified();
    } catch (IOException gone) {
      return false;
    }
  }

  private void abortQuietly(Collection<PendingUpload> uploads, Exception cause) {
    for (PendingUpload upload : uploads) {
      try {
        store.abortUpload(upload.key(), upload.uploadId());
      } catch (IOException e) {
        cause.addSuppressed(e);
      }
    }
  }

  static boolean isChecksumFile(Path file) {
    String name = file.getFileName().toString();
    return name.startsWith(".") && name.endsWith(".crc");
  }
}
