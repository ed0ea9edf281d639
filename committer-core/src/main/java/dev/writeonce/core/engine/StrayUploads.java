package dev.writeonce.core.engine;

import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.model.JobRecord;
import dev.writeonce.core.model.TaskIntent;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.OpenUpload;
import dev.writeonce.core.store.StoreGateway;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Aborts the uploads that task attempts of an ended job started but never recorded in a task
 * manifest (they died while uploading), found from their intents by key, and only where the upload
 * can be attributed to an ended run.
 *
 * <p>Keys repeat across runs (MapReduce's {@code part-r-00000}), so a key alone proves nothing: an
 * open upload of a key may belong to the next run of the same job. The proof that it does not rests
 * on two orders. A writer names a key in its attempt's intent before it creates an upload of it.
 * This scanner lists a key's open uploads first and reads the other jobs' records after. So an
 * upload that a run of this library owns was created after that run's intent named the key, the
 * intent was in the store before the listing, and the scan reads it. A key that another job's
 * intent names, while that job has not ended (finished, or fenced by an abort), is skipped; so is
 * every key while another live job has no intent at all, for it may write without one (the magic
 * committer). What is skipped stays named by the ended job's intent, which is kept for the
 * retention: a later scan aborts it once the other run has ended.
 *
 * <p>Cost: one ListMultipartUploads per key named; only when one of them is open, one LIST of the
 * destination's job records and one GET per other job's intent and state.
 */
final class StrayUploads {

  private static final Logger LOG = LoggerFactory.getLogger(StrayUploads.class);

  /** What a scan did: uploads aborted, and uploads left because another run may own them. */
  record Sweep(int aborted, List<OpenUpload> deferred) {}

  private final StoreGateway store;
  private final JobLayout layout;
  private final JobRecords records;

  StrayUploads(StoreGateway store, JobLayout layout, JobRecords records) {
    this.store = store;
    this.layout = layout;
    this.records = records;
  }

  /** Aborts the open uploads of the keys the ended job's stray intents name, where attributable. */
  Sweep abort(String jobId, Collection<TaskIntent> strays) throws IOException {
    Set<String> keys = new TreeSet<>();
    strays.forEach(intent -> keys.addAll(intent.keys()));
    Map<String, List<OpenUpload>> open = new TreeMap<>();
    for (String key : keys) {
      List<OpenUpload> uploads = store.listUploads(key);
      if (!uploads.isEmpty()) {
        open.put(key, uploads);
      }
    }
    if (open.isEmpty()) {
      return new Sweep(0, List.of());
    }
    Claims claims = claimsOfOtherJobs(jobId, open.keySet());
    int aborted = 0;
    List<OpenUpload> deferred = new ArrayList<>();
    for (Map.Entry<String, List<OpenUpload>> entry : open.entrySet()) {
      for (OpenUpload upload : entry.getValue()) {
        if (claims.covers(upload)) {
          deferred.add(upload);
          continue;
        }
        store.abortUpload(upload.key(), upload.uploadId());
        aborted++;
      }
    }
    if (aborted > 0) {
      LOG.info(
          "Job {}: aborted {} uploads that its task attempts started but never recorded",
          jobId,
          aborted);
    }
    if (!deferred.isEmpty()) {
      LOG.info(
          "Job {}: {} open uploads of keys its dead task attempts named are left alone, because {}"
              + " may own them; a later recovery aborts them once that run has ended",
          jobId,
          deferred.size(),
          claims.why());
    }
    return new Sweep(aborted, deferred);
  }

  /**
   * What runs of other jobs that have not ended may own: uploads by id (a committed job's manifest
   * names all of its), and by key (an uncommitted job's intents), or every key.
   */
  private record Claims(boolean all, Set<String> keys, Set<String> uploadIds, String why) {
    boolean covers(OpenUpload upload) {
      return all || keys.contains(upload.key()) || uploadIds.contains(upload.uploadId());
    }
  }

  private Claims claimsOfOtherJobs(String jobId, Set<String> wanted) throws IOException {
    String jobsPrefix = layout.recordsPrefix() + "jobs/";
    Map<String, List<String>> intentsByJob = new TreeMap<>();
    for (ObjectInfo object : store.listObjects(jobsPrefix)) {
      String rest = object.key().substring(jobsPrefix.length());
      int slash = rest.indexOf('/');
      if (slash <= 0 || rest.substring(0, slash).equals(jobId)) {
        continue;
      }
      String other = rest.substring(0, slash);
      List<String> intents = intentsByJob.computeIfAbsent(other, j -> new ArrayList<>());
      if (rest.startsWith("intents/", slash + 1)) {
        intents.add(object.key());
      }
    }
    Set<String> claimed = new HashSet<>();
    Set<String> claimedIds = new HashSet<>();
    List<String> owners = new ArrayList<>();
    for (Map.Entry<String, List<String>> job : intentsByJob.entrySet()) {
      String other = job.getKey();
      Set<String> named = new HashSet<>();
      boolean unknown = job.getValue().isEmpty();
      for (String intentKey : job.getValue()) {
        try {
          records.loadTaskIntent(other, intentKey).ifPresent(i -> named.addAll(i.keys()));
        } catch (FormatException e) {
          unknown = true; // an intent that cannot be read proves nothing
        }
      }
      named.retainAll(wanted);
      if (!unknown && named.isEmpty()) {
        continue;
      }
      Standing standing = standing(other);
      if (standing == Standing.ENDED) {
        continue;
      }
      if (standing == Standing.COMMITTED) {
        // Its manifest names every upload it will ever complete, by id: nothing else is its.
        claimedIds.addAll(committedUploadIds(other));
        owners.add(other);
        continue;
      }
      if (unknown) {
        return new Claims(
            true, Set.of(), Set.of(), "job " + other + ", not ended, names no keys it writes");
      }
      claimed.addAll(named);
      owners.add(other);
    }
    return new Claims(
        false, claimed, claimedIds, "jobs " + owners + ", not ended, may own uploads of them");
  }

  /** Where another job stands, as far as its uploads go. */
  private enum Standing {
    /** Finished, or fenced by an abort: none of its open uploads is worth keeping. */
    ENDED,
    /** Past its commit point, unfinished: its manifest names its uploads. */
    COMMITTED,
    /** Running, or unreadable: it may own any upload its intents name. */
    OPEN
  }

  private Standing standing(String jobId) throws IOException {
    try {
      Optional<JobRecord> record = records.loadJobRecord(jobId);
      if (record.isPresent() && record.get().state() == JobRecord.State.FINISHED) {
        return Standing.ENDED;
      }
      return switch (records.loadCommitPoint(jobId)) {
        case FENCED -> Standing.ENDED;
        case COMMITTED -> Standing.COMMITTED;
        case NONE -> Standing.OPEN;
      };
    } catch (FormatException e) {
      return Standing.OPEN;
    }
  }

  private Set<String> committedUploadIds(String jobId) throws IOException {
    Set<String> ids = new HashSet<>();
    try {
      Optional<dev.writeonce.core.model.JobManifest> manifest = records.loadJobManifest(jobId);
      if (manifest.isPresent()) {
        ManifestUploads.all(records, manifest.get()).forEach(u -> ids.add(u.uploadId()));
      }
    } catch (FinishedMeanwhileException finished) {
      // it finished meanwhile: every upload it took is completed
    }
    return ids;
  }
}
