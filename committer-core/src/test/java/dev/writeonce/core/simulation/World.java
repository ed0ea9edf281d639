package dev.writeonce.core.simulation;

import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.json.ManifestFormats;
import dev.writeonce.core.model.JobManifest;
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
      JobManifest manifest = ManifestFormats.jobManifestFromJson(bytes, key);
      committed.add(manifest);
      manifest.uploads().forEach(u -> committedUploadIds.add(u.uploadId()));
    } catch (FormatException notAManifest) {
      // an abort fence
    }
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
