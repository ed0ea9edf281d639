package dev.writeonce.spark.streaming;

import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.json.ManifestFormats;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.TaskIntent;
import dev.writeonce.core.model.TaskManifest;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.OpenUpload;
import dev.writeonce.core.store.StoreGateway;
import dev.writeonce.core.upload.UploadCompletion;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The records a streaming sink's batches leave under {@code <sink>/_writeonce/streaming/}: one per
 * run of a batch, naming its uploads, written before the batch's log entry and removed once its
 * uploads are completed or aborted. The sink log decides each record left by a run that died or
 * lost: the batch's entry names the run (its files carry the run's id), so its files are complete
 * (roll forward); the entry names another run, so they are aborted; the log holds no entry for the
 * batch yet, so the record is left to its run, which may still win it.
 *
 * <p>Records are settled when a query opens the sink's log (its start, and every Spark reader of
 * the sink with the checkpoint file manager) and around each batch the commit protocol commits.
 */
final class StreamingRecords {

  private static final Logger LOG = LoggerFactory.getLogger(StreamingRecords.class);

  private static final Pattern NAME = Pattern.compile("(\\d+)-([0-9a-f-]{36})\\.json");

  private static final Pattern JOB = Pattern.compile("stream-(\\d+)-([0-9a-f-]{36})/.*");

  private static final Pattern LOG_FILE = Pattern.compile("(\\d+)(\\.compact)?");

  /** The sink log's directory under a sink. */
  static final String LOG_DIR = "_spark_metadata/";

  /**
   * Per sink, how many times this JVM may have left records on it: a batch began, or failed.
   * Changes only grow.
   */
  private static final ConcurrentHashMap<String, Long> CHANGES = new ConcurrentHashMap<>();

  /**
   * Per sink, the count of changes at which a settle of this JVM found nothing left undecided:
   * while it equals {@link #CHANGES}, a batch's settle sends no listing.
   */
  private static final ConcurrentHashMap<String, Long> SETTLED_AT = new ConcurrentHashMap<>();

  /**
   * The JVM whose counts a caller reads: one per JVM, so empty; a simulation of several JVMs in one
   * gives each its own.
   */
  static volatile java.util.function.Supplier<String> jvm = () -> "";

  private static String countsKey(Destination sink) {
    return jvm.get() + sink;
  }

  private final StoreGateway store;
  private final Destination sink;

  StreamingRecords(StoreGateway store, Destination sink) {
    this.store = store;
    this.sink = sink;
  }

  /**
   * The sink may hold a record this JVM did not settle (a batch of it began, or failed): the next
   * settle lists the records again, and a settle that listed before now does not count.
   */
  static void unsettled(Destination sink) {
    CHANGES.merge(countsKey(sink), 1L, Long::sum);
  }

  /** The changes of a sink so far, to hand back to {@link #settledAgain}. */
  static long changes(Destination sink) {
    return CHANGES.getOrDefault(countsKey(sink), 0L);
  }

  /** Whether this JVM found the sink without records of other runs since its last change. */
  static boolean isSettled(Destination sink) {
    Long at = SETTLED_AT.get(countsKey(sink));
    return at != null && at == changes(sink);
  }

  /**
   * A batch that found the sink settled committed and removed its own records: settled as it was,
   * unless something changed the sink since {@code changes} was read.
   */
  static void settledAgain(Destination sink, long changes) {
    markSettled(sink, changes);
  }

  private static void markSettled(Destination sink, long changes) {
    if (changes(sink) == changes) {
      SETTLED_AT.merge(countsKey(sink), changes, Math::max);
    }
  }

  /**
   * Settles the records of other runs that the log decides; one LIST when there are none. A batch
   * ({@code everyTime} false) sends none while this JVM knows the sink settled; opening the sink's
   * log (a query's start, a reader) always lists, so that what another JVM left is settled there. A
   * record that cannot be settled (unreadable, outside the sink, its uploads gone) is logged and
   * left; the others are settled all the same.
   */
  void settle(String ownRun, boolean everyTime) throws IOException {
    if (!everyTime && isSettled(sink)) {
      return;
    }
    long changesAtStart = changes(sink);
    // One listing finds both the runs' records and their task attempts' intents: a run that died
    // before its record left intents alone.
    java.util.SortedMap<String, Run> runs = new java.util.TreeMap<>();
    String recordsDir = sink.prefix() + WriteonceStreamingCommitProtocol.RECORDS;
    String jobsDir = new dev.writeonce.core.engine.JobLayout(sink).recordsPrefix() + "jobs/";
    for (ObjectInfo object :
        store.listObjects(sink.prefix() + dev.writeonce.core.engine.JobLayout.RECORDS_DIR)) {
      String key = object.key();
      Matcher record = NAME.matcher(key.substring(Math.min(key.length(), recordsDir.length())));
      Matcher job = JOB.matcher(key.substring(Math.min(key.length(), jobsDir.length())));
      if (key.startsWith(recordsDir) && record.matches()) {
        long batch = Long.parseLong(record.group(1));
        runs.computeIfAbsent(record.group(2), run -> new Run(batch)).record = key;
      } else if (key.startsWith(jobsDir) && job.matches()) {
        long batch = Long.parseLong(job.group(1));
        runs.computeIfAbsent(job.group(2), run -> new Run(batch));
      }
    }
    boolean undecided = false;
    for (java.util.Map.Entry<String, Run> each : runs.entrySet()) {
      String run = each.getKey();
      if (run.equals(ownRun)) {
        continue;
      }
      try {
        undecided |= !settleRun(run, each.getValue());
      } catch (IOException | RuntimeException e) {
        undecided = true;
        LOG.warn(
            "{}: the records of run {} of batch {} were left as they are: {}",
            sink,
            run,
            each.getValue().batch,
            e.toString());
      }
    }
    if (!undecided) {
      markSettled(sink, changesAtStart);
    }
  }

  /** Settles one run by the log; false when the log does not decide it yet. */
  private boolean settleRun(String run, Run found) throws IOException {
    long batch = found.batch;
    Optional<String> entry = logEntry(batch);
    if (entry.isEmpty()) {
      return false; // its run may still win the batch
    }
    String recordsJobId = WriteonceStreamingCommitProtocol.recordsJobId(batch, run);
    if (entry.get().contains(run)) {
      // The run won: its record was written before its entry, so it is there now even if the
      // listing, taken earlier, showed only its intents. Without it the run's uploads are not
      // known, and nothing of the run is touched.
      String record =
          found.record != null
              ? found.record
              : sink.prefix()
                  + WriteonceStreamingCommitProtocol.RECORDS
                  + batch
                  + "-"
                  + run
                  + ".json";
      Optional<byte[]> body = store.getObject(record);
      if (body.isEmpty()) {
        // The record goes only once the run's files are complete: what the run's intents still
        // name was left by an attempt that reached the store after the batch finished.
        return settleLateAttempts(run, batch, entry.get());
      }
      List<PendingUpload> uploads = read(body.get(), record).uploads();
      complete(store, sink, batch, uploads);
      java.util.Set<String> attempts = new java.util.HashSet<>();
      uploads.forEach(upload -> attempts.add(upload.taskAttempt()));
      removeAfterCommit(store, sink, record, recordsJobId, run, attempts, uploads);
      LOG.info(
          "{}: batch {} of a run that stopped after its commit point: {} files completed",
          sink,
          batch,
          uploads.size());
    } else {
      String record = found.record;
      Optional<byte[]> body = record == null ? Optional.empty() : store.getObject(record);
      List<PendingUpload> uploads = body.isEmpty() ? List.of() : read(body.get(), record).uploads();
      abortRun(store, sink, recordsJobId, run, uploads);
      remove(store, sink, record, recordsJobId);
      LOG.info("{}: batch {} of a run that did not commit it: its uploads aborted", sink, batch);
    }
    return true;
  }

  /**
   * A run whose batch is finished (its entry names it, its record is gone) still has intents: a
   * task attempt of it wrote its intent and started its upload after the batch's cleanup (an
   * executor taken for lost that went on, a request that landed late). Every upload of the run open
   * under a key its intents name is such an attempt's, since the batch's own are complete; the one
   * upload left alone, with the run's intents, is one open under a key the entry lists whose object
   * is not there (its record removed by someone else before the completions, or the file deleted
   * since), which is logged, until the bucket's lifecycle rule aborts it. Returns whether the run
   * is settled.
   */
  private boolean settleLateAttempts(String run, long batch, String entry) throws IOException {
    String recordsJobId = WriteonceStreamingCommitProtocol.recordsJobId(batch, run);
    dev.writeonce.core.engine.JobLayout layout = new dev.writeonce.core.engine.JobLayout(sink);
    List<String> left = new ArrayList<>();
    for (ObjectInfo object : store.listObjects(layout.jobPrefix(recordsJobId))) {
      left.add(object.key());
      if (!object.key().startsWith(layout.intentPrefix(recordsJobId))) {
        continue;
      }
      for (String key : keysOfRun(store, sink, object.key(), run)) {
        List<OpenUpload> open = store.listUploads(key);
        if (open.isEmpty()) {
          continue;
        }
        if (entry.contains('"' + listedPath(sink, key) + '"') && store.headObject(key).isEmpty()) {
          LOG.warn(
              "{}: batch {} is run {}'s in the log, its record is gone, and its file {} is not"
                  + " there while an upload of it is open: left as it is",
              sink,
              batch,
              run,
              sink.uriOf(key));
          return false;
        }
        for (OpenUpload upload : open) {
          store.abortUpload(upload.key(), upload.uploadId());
        }
      }
    }
    if (!left.isEmpty()) {
      store.deleteObjects(left);
      LOG.info("{}: batch {}: what an attempt of its run left late was removed", sink, batch);
    }
    return true;
  }

  /**
   * The keys a task attempt's intent names that are its run's: under the sink, carrying the run's
   * id (no other run holds an upload of them); none when the intent is gone.
   */
  private static List<String> keysOfRun(
      StoreGateway store, Destination sink, String intentKey, String run) throws IOException {
    Optional<byte[]> body = store.getObject(intentKey);
    if (body.isEmpty()) {
      return List.of();
    }
    TaskIntent intent = ManifestFormats.taskIntentFromJson(body.get(), sink.uriOf(intentKey));
    return intent.keys().stream()
        .filter(key -> key.startsWith(sink.prefix()) && key.contains(run))
        .toList();
  }

  /**
   * How the sink log lists the file at a key, as Spark's own sink does: its Hadoop path,
   * URL-encoded, which Spark's readers decode.
   */
  static String listedPath(Destination sink, String key) {
    return new org.apache.hadoop.fs.Path(sink.uriOf(key)).toUri().toString();
  }

  /** A run of a batch found in the store: its record, if it wrote one. */
  private static final class Run {
    final long batch;
    String record;

    Run(long batch) {
      this.batch = batch;
    }
  }

  /** Whose files a batch's sink log entry names. */
  enum Owner {
    THIS_RUN,
    OTHER_RUN,
    /** The entry lists no file: whoever wrote it, a run that wrote no file has nothing at stake. */
    EMPTY,
    NO_ENTRY,
    UNREADABLE
  }

  /** Whose files the batch's entry names, read from the store (never from a cache). */
  Owner ownerOfEntry(long batch, String run) {
    try {
      Optional<String> entry = logEntry(batch);
      if (entry.isEmpty()) {
        return Owner.NO_ENTRY;
      }
      if (entry.get().contains(run)) {
        return Owner.THIS_RUN;
      }
      // An entry without files names no run: a batch that wrote nothing loses nothing to it.
      return entry.get().contains("\"path\"") ? Owner.OTHER_RUN : Owner.EMPTY;
    } catch (IOException | RuntimeException e) {
      LOG.warn("{}: the log entry of batch {} could not be read: {}", sink, batch, e.toString());
      return Owner.UNREADABLE;
    }
  }

  /**
   * The text of the sink log's entry for a batch: its own file, or the compaction that holds it
   * (Spark removes a compacted batch's file only after later batches ran, which settle first).
   */
  private Optional<String> logEntry(long batch) throws IOException {
    String dir = sink.prefix() + LOG_DIR;
    for (String name : List.of(Long.toString(batch), batch + ".compact")) {
      Optional<byte[]> text = store.getObject(dir + name);
      if (text.isPresent()) {
        return Optional.of(new String(text.get(), java.nio.charset.StandardCharsets.UTF_8));
      }
    }
    // Compacted and removed: the first compaction after it holds it.
    long compaction = Long.MAX_VALUE;
    for (String child : store.listChildren(dir, Integer.MAX_VALUE)) {
      Matcher m = LOG_FILE.matcher(child.substring(dir.length()));
      if (m.matches() && m.group(2) != null) {
        long at = Long.parseLong(m.group(1));
        if (at > batch && at < compaction) {
          compaction = at;
        }
      }
    }
    if (compaction == Long.MAX_VALUE) {
      return Optional.empty();
    }
    Optional<byte[]> text = store.getObject(dir + compaction + ".compact");
    return text.map(t -> new String(t, java.nio.charset.StandardCharsets.UTF_8));
  }

  /** A record as it was written, its uploads all under the sink. */
  private TaskManifest read(byte[] body, String key) throws IOException {
    TaskManifest manifest = ManifestFormats.taskManifestFromJson(body, sink.uriOf(key));
    for (PendingUpload upload : manifest.uploads()) {
      if (!upload.bucket().equals(sink.bucket()) || !upload.key().startsWith(sink.prefix())) {
        throw new FormatException(
            sink.uriOf(key),
            "names an upload outside the sink: s3a://" + upload.bucket() + "/" + upload.key());
      }
    }
    return manifest;
  }

  /**
   * Completes the uploads of a batch the sink log gives to their run, or confirms an earlier
   * completion; an upload that is gone without having made its object fails, naming it.
   */
  static void complete(
      StoreGateway store, Destination sink, long batch, List<PendingUpload> uploads)
      throws IOException {
    for (PendingUpload upload : uploads) {
      UploadCompletion.completeOrConfirm(
          store,
          upload,
          (failure, found) ->
              new IOException(
                  sink.uriOf(upload.key())
                      + ": listed in the sink log by batch "
                      + batch
                      + ", its upload is gone and the object at its key is not it; "
                      + failure.getMessage(),
                  failure));
    }
  }

  /**
   * Aborts a run's uploads: those it named, by id, and those its task attempts recorded an intent
   * for, by key. Only keys that carry the run's id are aborted by key: no other run holds an upload
   * of them.
   */
  static void abortRun(
      StoreGateway store,
      Destination sink,
      String recordsJobId,
      String run,
      List<PendingUpload> named)
      throws IOException {
    for (PendingUpload upload : named) {
      store.abortUpload(upload.key(), upload.uploadId());
    }
    String intents = new dev.writeonce.core.engine.JobLayout(sink).intentPrefix(recordsJobId);
    for (ObjectInfo intent : store.listObjects(intents)) {
      for (String key : keysOfRun(store, sink, intent.key(), run)) {
        for (OpenUpload open : store.listUploads(key)) {
          store.abortUpload(open.key(), open.uploadId());
        }
      }
    }
  }

  /**
   * Removes the records of a run whose batch committed. An attempt of the run that did not commit
   * (it failed, and Spark ran the task again) may have left an upload under a key the run
   * committed: the uploads its intent names are aborted unless they are the committed ones. When
   * every attempt committed, this is one LIST and one DeleteObjects.
   */
  static void removeAfterCommit(
      StoreGateway store,
      Destination sink,
      String recordKey,
      String recordsJobId,
      String run,
      java.util.Set<String> committedAttempts,
      List<PendingUpload> committed)
      throws IOException {
    dev.writeonce.core.engine.JobLayout layout = new dev.writeonce.core.engine.JobLayout(sink);
    java.util.Set<String> committedIds = new java.util.HashSet<>();
    committed.forEach(upload -> committedIds.add(upload.uploadId()));
    java.util.Set<String> committedIntents = new java.util.HashSet<>();
    for (String attempt : committedAttempts) {
      committedIntents.add(layout.intentKey(recordsJobId, attempt));
    }
    List<String> keys = new ArrayList<>();
    if (recordKey != null) {
      keys.add(recordKey);
    }
    for (ObjectInfo object : store.listObjects(layout.jobPrefix(recordsJobId))) {
      keys.add(object.key());
      if (!object.key().startsWith(layout.intentPrefix(recordsJobId))
          || committedIntents.contains(object.key())) {
        continue;
      }
      for (String key : keysOfRun(store, sink, object.key(), run)) {
        for (OpenUpload open : store.listUploads(key)) {
          if (!committedIds.contains(open.uploadId())) {
            store.abortUpload(open.key(), open.uploadId());
          }
        }
      }
    }
    if (!keys.isEmpty()) {
      store.deleteObjects(keys);
    }
  }

  /**
   * Removes a run's record (if it wrote one) and its task attempts' records, by the names it wrote
   * them under.
   */
  static void remove(StoreGateway store, Destination sink, String recordKey, String recordsJobId)
      throws IOException {
    List<String> keys = new ArrayList<>();
    if (recordKey != null) {
      keys.add(recordKey);
    }
    String job = new dev.writeonce.core.engine.JobLayout(sink).jobPrefix(recordsJobId);
    for (ObjectInfo object : store.listObjects(job)) {
      keys.add(object.key());
    }
    if (!keys.isEmpty()) {
      store.deleteObjects(keys);
    }
  }
}
