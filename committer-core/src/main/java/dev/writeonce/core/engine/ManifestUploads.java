package dev.writeonce.core.engine;

import dev.writeonce.core.model.JobManifest;
import dev.writeonce.core.model.ManifestChunk;
import dev.writeonce.core.model.PendingUpload;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The uploads of a job manifest, one batch at a time: the inline list as one batch, or one chunk
 * per batch, each checked against the SHA-256 the manifest names. One chunk is in memory at a time;
 * it is read in the caller's thread (one GET per chunk of thousands of completions), which keeps
 * the order of requests that of the manifest.
 */
final class ManifestUploads {

  /** What is done with each batch. */
  interface BatchAction {
    void accept(List<PendingUpload> batch) throws IOException;
  }

  private ManifestUploads() {}

  static void forEachBatch(JobRecords records, JobManifest manifest, BatchAction action)
      throws IOException {
    if (!manifest.isChunked()) {
      action.accept(manifest.uploads());
      return;
    }
    for (ManifestChunk chunk : manifest.chunks()) {
      action.accept(records.loadManifestChunk(manifest, chunk));
    }
  }

  /** Every upload of the manifest in one list: for operator views, never for the job commit. */
  static List<PendingUpload> all(JobRecords records, JobManifest manifest) throws IOException {
    List<PendingUpload> uploads = new ArrayList<>();
    forEachBatch(records, manifest, uploads::addAll);
    return uploads;
  }
}
