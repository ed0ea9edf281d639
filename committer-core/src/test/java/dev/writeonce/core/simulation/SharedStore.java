package dev.writeonce.core.simulation;

import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.json.ManifestFormats;
import dev.writeonce.core.model.JobManifest;
import dev.writeonce.core.model.ManifestChunk;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.testing.InMemoryStore;
import dev.writeonce.core.testing.simulation.SimClock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What every actor of one schedule shares: the store, and what the checker needs to know of it
 * beyond its objects: the job manifests that were written (each a commit point passed), the bytes
 * of every upload, and the violations seen while the schedule ran.
 */
final class SharedStore {

  static final String BUCKET = "bucket";

  /** A clock near now: records look fresh to job setup and abort fences stand. */
  final InMemoryStore memory = new InMemoryStore(BUCKET, System.currentTimeMillis());

  /** The store's clock, which the schedule moves. */
  final SimClock clock = SimClock.of(memory::clockMillis, memory::advanceClock);

  /** Whether every request is printed, for the report of a failing schedule. */
  final boolean traced;

  SharedStore(boolean traced) {
    this.traced = traced;
  }

  /**
   * Sees every request that reached the store, as it lands: the publication's checker. Called in
   * the sending actor's turn, so that it sees the world between two requests.
   */
  interface Observer {
    default void afterRequest(String actor, String what) {}

    default void afterPut(String actor, String key, byte[] data) {}

    default void beforeDelete(String actor, java.util.Collection<String> keys) {}
  }

  volatile Observer observer = new Observer() {};

  /** Whether DELETE If-Match is ignored, as on the pinned MinIO and Ceph RGW 16. */
  volatile boolean deleteIfMatchIgnored;

  final List<JobManifest> committed = new ArrayList<>();
  final Set<String> committedUploadIds = new HashSet<>();
  final Map<String, byte[]> uploadBytes = new HashMap<>();
  final List<String> violations = new ArrayList<>();

  synchronized void manifestWritten(String key, byte[] bytes) {
    if (!key.endsWith("/manifest.json")) {
      return;
    }
    try {
      JobManifest manifest = inline(ManifestFormats.jobManifestFromJson(bytes, key));
      committed.add(manifest);
      manifest.uploads().forEach(u -> committedUploadIds.add(u.uploadId()));
    } catch (FormatException notAManifest) {
      // an abort fence
    }
  }

  /**
   * The manifest with its chunks' uploads listed inline, as they are at its commit point: the
   * checker's record of what the job publishes.
   */
  private JobManifest inline(JobManifest manifest) throws FormatException {
    if (!manifest.isChunked()) {
      return manifest;
    }
    List<PendingUpload> uploads = new ArrayList<>();
    for (ManifestChunk chunk : manifest.chunks()) {
      if (!memory.keys().contains(chunk.key())) {
        violations.add("job manifest of " + manifest.jobId() + " names a missing chunk");
        continue;
      }
      uploads.addAll(
          ManifestFormats.chunkFromJson(
              memory.content(chunk.key()), manifest.jobId(), chunk.key()));
    }
    return new JobManifest(
        manifest.jobId(),
        manifest.destination(),
        manifest.conflictMode(),
        manifest.committer(),
        manifest.createdAtMillis(),
        uploads,
        manifest.deletes());
  }

  /** Requests of crashed actors that were on the wire and reach the store later. */
  final List<Runnable> inFlight = new ArrayList<>();

  /** Lets every request still in flight reach the store, in the order they were sent. */
  void land() {
    List<Runnable> arriving;
    synchronized (this) {
      arriving = new ArrayList<>(inFlight);
      inFlight.clear();
    }
    arriving.forEach(Runnable::run);
  }

  /** Which job's actors created each upload: "job N". */
  final Map<String, String> uploadOwners = new HashMap<>();

  /** The key of each job's commit point (its manifest or abort fence): "job N" to key. */
  final Map<String, String> commitPoints = new HashMap<>();

  /** Jobs whose driver is still at work (neither returned nor crashed): "job N". */
  final Set<String> liveJobs = new HashSet<>();

  /** The job an actor works for, from its name ("driver N", "job N task ..."), or null. */
  static String jobOf(String actor) {
    if (actor.startsWith("driver ")) {
      return "job " + actor.substring("driver ".length());
    }
    if (actor.startsWith("job ")) {
      int space = actor.indexOf(' ', "job ".length());
      return space < 0 ? actor : actor.substring(0, space);
    }
    return null;
  }

  synchronized void created(String actor, String uploadId) {
    String job = jobOf(actor);
    if (job != null) {
      uploadOwners.put(uploadId, job);
    }
  }

  synchronized void aborting(String actor, String key, String uploadId) {
    if (!memory.openUploadIds().contains(uploadId)) {
      return;
    }
    if (committedUploadIds.contains(uploadId)) {
      violations.add(
          actor + " aborted upload " + uploadId + " of " + key + ", which a committed job names");
    }
    // Another party may abort a live job's upload once that job's outcome is decided: an abort
    // fenced it, or its manifest (which then does not name the upload) is written.
    String owner = uploadOwners.get(uploadId);
    String commitPoint = owner == null ? null : commitPoints.get(owner);
    boolean decided = commitPoint != null && memory.content(commitPoint) != null;
    if (owner != null && !owner.equals(jobOf(actor)) && liveJobs.contains(owner) && !decided) {
      violations.add(
          actor + " aborted upload " + uploadId + " of " + key + ", which live " + owner + " owns");
    }
  }

  synchronized void violation(String text) {
    violations.add(text);
  }
}
