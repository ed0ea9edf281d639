package dev.writeonce.core.engine;

import dev.writeonce.core.errors.InvalidJobException;
import dev.writeonce.core.model.CommitStatistics;
import dev.writeonce.core.model.ConflictMode;
import dev.writeonce.core.model.JobManifest;
import dev.writeonce.core.model.ManifestChunk;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.TaskManifest;
import dev.writeonce.core.store.StoreGateway;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Builds the job manifest, the commit point's content, from a commit request.
 *
 * <p>A job of up to {@code chunkUploads} uploads gets a manifest that lists them inline. A larger
 * job's uploads are written, as they are read, into chunk objects of that many uploads each, and
 * its manifest names the chunks: the stage holds one chunk, a bounded window of task manifests
 * being read, and 16 bytes per upload (hashes of its key and upload id, which find duplicates
 * without keeping the keys).
 */
final class ManifestStage {

  /** The job manifest and the task attempts whose uploads it takes. */
  record Built(JobManifest manifest, Set<String> takenAttempts, Map<String, Long> taskRequests) {}

  private ManifestStage() {}

  /**
   * The job manifest of a commit request: every upload of every task, each key written once, and in
   * replace mode the objects the job replaces.
   *
   * @param chunkUploads the most uploads listed inline, and the size of each chunk beyond that
   * @param readThreads how many stored task manifests are read at once
   * @throws InvalidJobException when the tasks cannot form one commit (nothing is changed; chunks
   *     already written are removed by the job's abort)
   */
  static Built build(
      StoreGateway store,
      JobLayout layout,
      JobRecords records,
      JobCommitRequest request,
      long now,
      ReplaceStage.Finisher finisher,
      int chunkUploads,
      int readThreads)
      throws IOException {
    Collector collector = new Collector(layout, records, request, chunkUploads);
    for (TaskManifest task : request.taskManifests()) {
      collector.add(task);
    }
    forEachStored(records, layout, request, readThreads, collector::add);
    JobManifest manifest = collector.manifest(now);
    try {
      if (request.conflictMode() == ConflictMode.REPLACE) {
        List<String> deletes =
            ReplaceStage.resolveWhenNoOtherJobIsUnfinished(
                store, layout, records, request, collector.writtenKeys(manifest), finisher);
        manifest =
            new JobManifest(
                manifest.jobId(),
                manifest.destination(),
                manifest.conflictMode(),
                manifest.committer(),
                manifest.createdAtMillis(),
                manifest.uploads(),
                deletes,
                manifest.chunks());
      }
    } catch (IllegalArgumentException e) {
      throw invalid(layout, request, e.getMessage());
    }
    return new Built(manifest, collector.taken, collector.taskRequests);
  }

  private static InvalidJobException invalid(
      JobLayout layout, JobCommitRequest request, String problem) {
    return new InvalidJobException(
        "job "
            + request.jobId()
            + " cannot be committed to "
            + layout.destination()
            + ": "
            + problem
            + ". Nothing was completed or deleted.",
        null);
  }

  private interface TaskAction {
    void accept(TaskManifest task) throws IOException;
  }

  /**
   * Reads the request's stored task manifests in order, at most {@code 2 * threads} ahead of the
   * one being added.
   */
  private static void forEachStored(
      JobRecords records,
      JobLayout layout,
      JobCommitRequest request,
      int threads,
      TaskAction action)
      throws IOException {
    List<String> keys = request.storedTaskManifests();
    if (keys.isEmpty()) {
      return;
    }
    String prefix = layout.taskManifestPrefix(request.jobId());
    for (String key : keys) {
      if (!key.startsWith(prefix)) {
        throw invalid(
            layout,
            request,
            "task manifest "
                + layout.destination().uriOf(key)
                + " does not lie under the job's task manifests "
                + layout.destination().uriOf(prefix));
      }
    }
    if (threads == 1) {
      // One at a time, in the caller's thread: the order of requests is the order of the keys.
      for (String key : keys) {
        action.accept(loadStored(records, layout, request, key));
      }
      return;
    }
    ExecutorService pool =
        Executors.newFixedThreadPool(
            threads,
            runnable -> {
              Thread thread = new Thread(runnable, "writeonce-manifest-reader-" + request.jobId());
              thread.setDaemon(true);
              return thread;
            });
    try {
      Deque<Future<TaskManifest>> window = new ArrayDeque<>();
      int next = 0;
      while (next < keys.size() || !window.isEmpty()) {
        while (next < keys.size() && window.size() < 2 * threads) {
          String key = keys.get(next++);
          window.add(pool.submit(() -> loadStored(records, layout, request, key)));
        }
        action.accept(await(window.poll()));
      }
    } finally {
      pool.shutdownNow();
    }
  }

  private static TaskManifest loadStored(
      JobRecords records, JobLayout layout, JobCommitRequest request, String key)
      throws IOException {
    return records
        .loadTaskManifest(request.jobId(), key)
        .orElseThrow(
            () ->
                invalid(
                    layout,
                    request,
                    "task manifest " + layout.destination().uriOf(key) + " is gone"));
  }

  private static TaskManifest await(Future<TaskManifest> future) throws IOException {
    try {
      return future.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted while reading task manifests");
    } catch (ExecutionException e) {
      if (e.getCause() instanceof IOException io) {
        throw io;
      }
      throw new IOException(e.getCause().getMessage(), e.getCause());
    }
  }

  /** Gathers uploads task by task, inline until there are too many, then into chunks. */
  private static final class Collector {

    private final JobLayout layout;
    private final JobRecords records;
    private final JobCommitRequest request;
    private final int chunkUploads;
    private final String runToken = UUID.randomUUID().toString();
    private final Set<String> taken = new LinkedHashSet<>();
    private final Map<String, Long> taskRequests = new HashMap<>();
    private final List<ManifestChunk> chunks = new ArrayList<>();
    private final LongList keyHashes = new LongList();
    private final LongList uploadIdHashes = new LongList();
    private List<PendingUpload> buffer = new ArrayList<>();

    /** Who writes each key, while the uploads are still inline; null once chunked. */
    private Map<String, String> writerOfKey = new HashMap<>();

    Collector(JobLayout layout, JobRecords records, JobCommitRequest request, int chunkUploads) {
      this.layout = layout;
      this.records = records;
      this.request = request;
      this.chunkUploads = chunkUploads;
    }

    void add(TaskManifest task) throws IOException {
      if (!task.jobId().equals(request.jobId())) {
        throw invalid(
            layout,
            request,
            "task attempt " + task.taskAttemptId() + " belongs to job " + task.jobId());
      }
      taken.add(task.taskAttemptId());
      task.statistics()
          .forEach(
              (name, count) -> {
                if (name.startsWith(CommitStatistics.REQUESTS_PREFIX)) {
                  taskRequests.merge(name, count, Long::sum);
                }
              });
      for (PendingUpload upload : task.uploads()) {
        try {
          JobManifest.requireInside(layout.destination(), upload);
        } catch (IllegalArgumentException e) {
          throw invalid(layout, request, e.getMessage());
        }
        if (writerOfKey != null) {
          String other = writerOfKey.putIfAbsent(upload.key(), task.taskAttemptId());
          if (other != null) {
            throw bothWrite(upload.key(), other, task.taskAttemptId());
          }
        }
        if (buffer.size() == chunkUploads) {
          flush();
        }
        keyHashes.add(hash(upload.key()));
        uploadIdHashes.add(hash(upload.uploadId()));
        buffer.add(upload);
      }
    }

    private void flush() throws IOException {
      chunks.add(records.saveManifestChunk(request.jobId(), runToken, chunks.size() + 1, buffer));
      buffer = new ArrayList<>();
      // From the first chunk on, keys are checked by their hashes: see checkUnique.
      writerOfKey = null;
    }

    JobManifest manifest(long now) throws IOException {
      try {
        if (chunks.isEmpty()) {
          return new JobManifest(
              request.jobId(),
              layout.destination(),
              request.conflictMode(),
              request.committer(),
              now,
              buffer,
              List.of());
        }
        if (!buffer.isEmpty()) {
          flush();
        }
        JobManifest manifest =
            new JobManifest(
                request.jobId(),
                layout.destination(),
                request.conflictMode(),
                request.committer(),
                now,
                List.of(),
                List.of(),
                chunks);
        checkUnique(manifest);
        return manifest;
      } catch (IllegalArgumentException e) {
        throw invalid(layout, request, e.getMessage());
      }
    }

    /**
     * Refuses a key written twice or an upload id given twice. Equal hashes are rare, so only their
     * keys are read back from the chunks and compared.
     */
    private void checkUnique(JobManifest manifest) throws IOException {
      long[] sameKeyHash = repeated(keyHashes.sorted());
      long[] sameIdHash = repeated(uploadIdHashes.sorted());
      if (sameKeyHash.length == 0 && sameIdHash.length == 0) {
        return;
      }
      Map<String, String> writer = new HashMap<>();
      Set<String> uploadIds = new HashSet<>();
      ManifestUploads.forEachBatch(
          records,
          manifest,
          batch -> {
            for (PendingUpload upload : batch) {
              if (Arrays.binarySearch(sameKeyHash, hash(upload.key())) >= 0) {
                String other = writer.putIfAbsent(upload.key(), upload.taskAttempt());
                if (other != null) {
                  throw bothWrite(upload.key(), other, upload.taskAttempt());
                }
              }
              if (Arrays.binarySearch(sameIdHash, hash(upload.uploadId())) >= 0
                  && !uploadIds.add(upload.uploadId())) {
                throw invalid(
                    layout,
                    request,
                    "upload id of " + upload.key() + " appears twice in job " + request.jobId());
              }
            }
          });
    }

    /** The keys this job writes, among candidates that replace mode would delete. */
    ReplaceStage.WrittenKeys writtenKeys(JobManifest manifest) {
      if (!manifest.isChunked()) {
        Set<String> written = writerOfKey.keySet();
        return candidates -> {
          Set<String> found = new HashSet<>(candidates);
          found.retainAll(written);
          return found;
        };
      }
      long[] sorted = keyHashes.sorted();
      return candidates -> {
        Set<String> maybe = new HashSet<>();
        for (String key : candidates) {
          if (Arrays.binarySearch(sorted, hash(key)) >= 0) {
            maybe.add(key);
          }
        }
        Set<String> found = new HashSet<>();
        if (!maybe.isEmpty()) {
          ManifestUploads.forEachBatch(
              records,
              manifest,
              batch -> {
                for (PendingUpload upload : batch) {
                  if (maybe.contains(upload.key())) {
                    found.add(upload.key());
                  }
                }
              });
        }
        return found;
      };
    }

    private InvalidJobException bothWrite(String key, String first, String second) {
      return invalid(
          layout,
          request,
          "key "
              + layout.destination().uriOf(key)
              + " is written by both task attempt "
              + first
              + " and "
              + second);
    }
  }

  /** The values that occur more than once in a sorted array. */
  private static long[] repeated(long[] sorted) {
    LongList found = new LongList();
    for (int i = 1; i < sorted.length; i++) {
      if (sorted[i] == sorted[i - 1] && (found.size == 0 || found.last() != sorted[i])) {
        found.add(sorted[i]);
      }
    }
    return found.sorted();
  }

  /** A 64-bit hash of a string (FNV-1a with a final mix), for finding duplicates cheaply. */
  static long hash(String value) {
    long h = 0xcbf29ce484222325L;
    for (int i = 0; i < value.length(); i++) {
      h ^= value.charAt(i);
      h *= 0x100000001b3L;
    }
    h ^= h >>> 33;
    h *= 0xff51afd7ed558ccdL;
    h ^= h >>> 33;
    return h;
  }

  /** A growable array of longs: 8 bytes per value, where a set of Long would take about 50. */
  private static final class LongList {
    private long[] values = new long[1024];
    private int size;

    void add(long value) {
      if (size == values.length) {
        values = Arrays.copyOf(values, size * 2);
      }
      values[size++] = value;
    }

    long last() {
      return values[size - 1];
    }

    long[] sorted() {
      long[] copy = Arrays.copyOf(values, size);
      Arrays.sort(copy);
      return copy;
    }
  }
}
