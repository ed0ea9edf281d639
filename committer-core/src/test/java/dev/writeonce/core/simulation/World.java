package dev.writeonce.core.simulation;

import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.json.ManifestFormats;
import dev.writeonce.core.model.JobManifest;
import dev.writeonce.core.model.ManifestChunk;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.testing.InMemoryStore;
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
final class World {

  static final String BUCKET = "bucket";

  /** A clock near now: records look fresh to job setup and abort fences stand. */
  final InMemoryStore memory = new InMemoryStore(BUCKET, System.currentTimeMillis());

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

  synchronized void aborting(String actor, String key, String uploadId) {
    if (committedUploadIds.contains(uploadId) && memory.openUploadIds().contains(uploadId)) {
      violations.add(
          actor + " aborted upload " + uploadId + " of " + key + ", which a committed job names");
    }
  }

  synchronized void violation(String text) {
    violations.add(text);
  }
}
