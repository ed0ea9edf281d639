package dev.writeonce.bench;

import dev.writeonce.core.engine.JobLayout;
import dev.writeonce.core.errors.ErrorKind;
import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.json.ManifestFormats;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.model.Etags;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.TaskManifest;
import dev.writeonce.core.model.UploadPart;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.OpenUpload;
import dev.writeonce.core.store.RequestCounters;
import dev.writeonce.core.store.RequestType;
import dev.writeonce.core.store.StoreGateway;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * A store holding one synthetic job's committed tasks (each upload one part of 1 MiB), which
 * answers at once and keeps its state outside the driver's heap, as a real store does: task
 * manifests are produced when read, records written by the engine are kept in files of a local
 * directory, and uploads are bits (open, or completed). The driver's heap then holds only what the
 * engine itself holds.
 *
 * <p>Upload {@code n} of task {@code t} has id {@code u-N} where {@code N = t * perTask + n}, and
 * key {@code day=DD/part-TTTTTT-NNNNN.parquet} under the destination.
 */
final class SyntheticJobStore implements StoreGateway {

  private final String bucket;
  private final Destination destination;
  private final String jobId;
  private final int tasks;
  private final int perTask;
  private final Path directory;
  private final JobLayout layout;
  private final RequestCounters counters = new RequestCounters();
  private final BitSet completed = new BitSet();
  private final BitSet aborted = new BitSet();
  private final BitSet taskManifestDeleted = new BitSet();

  SyntheticJobStore(Destination destination, String jobId, int tasks, int perTask, Path directory) {
    this.bucket = destination.bucket();
    this.destination = destination;
    this.jobId = jobId;
    this.tasks = tasks;
    this.perTask = perTask;
    this.directory = directory;
    this.layout = new JobLayout(destination);
  }

  static String attempt(int task) {
    return String.format(Locale.ROOT, "attempt_bench_0001_m_%06d_0", task);
  }

  /** The keys of every task manifest, in task order. */
  List<String> taskManifestKeys() {
    List<String> keys = new ArrayList<>(tasks);
    for (int t = 0; t < tasks; t++) {
      keys.add(layout.taskManifestKey(jobId, attempt(t)));
    }
    return keys;
  }

  /** Every task manifest, held in memory: what a driver handed its tasks' commit messages holds. */
  List<TaskManifest> taskManifests() {
    List<TaskManifest> manifests = new ArrayList<>(tasks);
    for (int t = 0; t < tasks; t++) {
      manifests.add(taskManifest(t));
    }
    return manifests;
  }

  synchronized int openUploadCount() {
    long total = (long) tasks * perTask;
    BitSet ended = (BitSet) completed.clone();
    ended.or(aborted);
    return (int) (total - ended.cardinality());
  }

  synchronized int completedCount() {
    return completed.cardinality();
  }

  private String key(int task, int n) {
    return destination.prefix()
        + String.format(Locale.ROOT, "day=%02d/part-%06d-%05d.parquet", task % 31, task, n);
  }

  private TaskManifest taskManifest(int task) {
    List<PendingUpload> uploads = new ArrayList<>(perTask);
    for (int n = 0; n < perTask; n++) {
      int id = task * perTask + n;
      uploads.add(
          new PendingUpload(
              bucket,
              key(task, n),
              "u-" + id,
              List.of(new UploadPart(1, String.format(Locale.ROOT, "%032x", id), 1 << 20)),
              attempt(task)));
    }
    return new TaskManifest(jobId, attempt(task), uploads, Map.of());
  }

  /** The task of a task manifest key, or -1. */
  private int taskOf(String key) {
    String prefix = layout.taskManifestPrefix(jobId);
    if (!key.startsWith(prefix) || !key.endsWith(".json")) {
      return -1;
    }
    String attempt = key.substring(prefix.length(), key.length() - ".json".length());
    try {
      // attempt_bench_0001_m_TTTTTT_0
      int task = Integer.parseInt(attempt.substring(21, 27));
      return attempt.equals(attempt(task)) && task < tasks ? task : -1;
    } catch (RuntimeException e) {
      return -1;
    }
  }

  private Path file(String key) {
    return directory.resolve(key);
  }

  @Override
  public String bucket() {
    return bucket;
  }

  @Override
  public RequestCounters counters() {
    return counters;
  }

  @Override
  public String createUpload(String key) {
    throw new UnsupportedOperationException("the synthetic job's uploads exist already");
  }

  @Override
  public UploadPart uploadPart(String key, String uploadId, int partNumber, ByteBuffer data) {
    throw new UnsupportedOperationException("the synthetic job's uploads exist already");
  }

  @Override
  public UploadPart uploadPart(
      String key, String uploadId, int partNumber, Path file, long offset, long length) {
    throw new UnsupportedOperationException("the synthetic job's uploads exist already");
  }

  private static int number(String uploadId) {
    return Integer.parseInt(uploadId.substring(2));
  }

  @Override
  public String completeUpload(PendingUpload upload) throws StoreException {
    counters.increment(RequestType.COMPLETE_UPLOAD);
    int n = number(upload.uploadId());
    synchronized (this) {
      if (completed.get(n) || aborted.get(n)) {
        throw new StoreException(
            ErrorKind.NO_SUCH_UPLOAD, 404, "NoSuchUpload " + upload.uploadId(), null);
      }
      completed.set(n);
    }
    return upload.expectedEtag().orElse("synthetic");
  }

  @Override
  public synchronized void abortUpload(String key, String uploadId) {
    counters.increment(RequestType.ABORT_UPLOAD);
    int n = number(uploadId);
    if (!completed.get(n)) {
      aborted.set(n);
    }
  }

  @Override
  public List<OpenUpload> listUploads(String key) {
    counters.increment(RequestType.LIST_UPLOADS);
    return List.of();
  }

  @Override
  public String putObject(String key, byte[] data, boolean ifNoneMatch) throws StoreException {
    counters.increment(RequestType.PUT_OBJECT);
    Path file = file(key);
    try {
      Files.createDirectories(file.getParent());
      synchronized (this) {
        if (ifNoneMatch && Files.exists(file)) {
          throw new StoreException(ErrorKind.PRECONDITION_FAILED, 412, key + " exists", null);
        }
        Files.write(file, data);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return Etags.md5Hex(data);
  }

  @Override
  public String replaceObject(String key, byte[] data, String etag) throws StoreException {
    return putObject(key, data, false);
  }

  @Override
  public Optional<byte[]> getObject(String key) {
    counters.increment(RequestType.GET_OBJECT);
    int task = taskOf(key);
    if (task >= 0) {
      synchronized (this) {
        if (taskManifestDeleted.get(task)) {
          return Optional.empty();
        }
      }
      return Optional.of(ManifestFormats.toJson(taskManifest(task)));
    }
    Path file = file(key);
    try {
      return Files.exists(file) ? Optional.of(Files.readAllBytes(file)) : Optional.empty();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public Optional<ObjectInfo> headObject(String key) {
    counters.increment(RequestType.HEAD_OBJECT);
    Path file = file(key);
    try {
      return Files.exists(file)
          ? Optional.of(new ObjectInfo(key, Files.size(file), "synthetic", 0))
          : Optional.empty();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public List<String> listChildren(String prefix, int maxEntries) {
    counters.increment(RequestType.LIST_OBJECTS);
    return List.of();
  }

  @Override
  public List<ObjectInfo> listObjects(String prefix) {
    counters.increment(RequestType.LIST_OBJECTS);
    List<ObjectInfo> found = new ArrayList<>();
    for (int t = 0; t < tasks; t++) {
      String key = layout.taskManifestKey(jobId, attempt(t));
      synchronized (this) {
        if (key.startsWith(prefix) && !taskManifestDeleted.get(t)) {
          found.add(new ObjectInfo(key, 1, "synthetic", 0));
        }
      }
    }
    if (!Files.isDirectory(directory)) {
      return found;
    }
    try (Stream<Path> files = Files.walk(directory)) {
      files
          .filter(Files::isRegularFile)
          .map(path -> directory.relativize(path).toString().replace('\\', '/'))
          .filter(key -> key.startsWith(prefix))
          .sorted(Comparator.naturalOrder())
          .forEach(key -> found.add(new ObjectInfo(key, 1, "synthetic", 0)));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return found;
  }

  @Override
  public boolean deleteObjectIfMatch(String key, String etag) {
    // The job record the engine removes last, once the job is finished: nobody else writes it.
    deleteObjects(List.of(key));
    return true;
  }

  @Override
  public long storeNowMillis() {
    return System.currentTimeMillis();
  }

  @Override
  public void deleteObjects(Collection<String> keys) {
    for (int i = 0; i < keys.size(); i += 1000) {
      counters.increment(RequestType.DELETE_OBJECTS);
    }
    for (String key : keys) {
      int task = taskOf(key);
      if (task >= 0) {
        synchronized (this) {
          taskManifestDeleted.set(task);
        }
        continue;
      }
      try {
        Files.deleteIfExists(file(key));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }
}
