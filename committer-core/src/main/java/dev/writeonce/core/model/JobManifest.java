package dev.writeonce.core.model;

import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * The commit point of a job. Once this record is durably in the store, the job is committed: any
 * process can finish it from this record alone by completing every upload, deleting the replaced
 * objects and writing {@code _SUCCESS}. Its existence is its state; it is never rewritten.
 *
 * @param jobId the job
 * @param destination where the output goes; every key below lies under it
 * @param conflictMode the mode the job ran with
 * @param committer the name of the committer that wrote it
 * @param createdAtMillis when the commit point was written, in epoch millis
 * @param uploads every upload the commit completes, when they are listed inline
 * @param deletes existing objects that replace mode deletes after the commit point
 * @param chunks for a large job, the objects that list its uploads instead, in order; then {@code
 *     uploads} is empty. The driver writes them before the commit point and never again.
 */
public record JobManifest(
    String jobId,
    Destination destination,
    ConflictMode conflictMode,
    String committer,
    long createdAtMillis,
    List<PendingUpload> uploads,
    List<String> deletes,
    List<ManifestChunk> chunks) {

  /** A manifest that lists its uploads inline. */
  public JobManifest(
      String jobId,
      Destination destination,
      ConflictMode conflictMode,
      String committer,
      long createdAtMillis,
      List<PendingUpload> uploads,
      List<String> deletes) {
    this(jobId, destination, conflictMode, committer, createdAtMillis, uploads, deletes, List.of());
  }

  public JobManifest {
    PendingUpload.requireText(jobId, "jobId");
    Objects.requireNonNull(destination, "destination");
    Objects.requireNonNull(conflictMode, "conflictMode");
    PendingUpload.requireText(committer, "committer");
    uploads = List.copyOf(Objects.requireNonNull(uploads, "uploads"));
    deletes = List.copyOf(Objects.requireNonNull(deletes, "deletes"));
    chunks = List.copyOf(Objects.requireNonNull(chunks, "chunks"));
    if (!chunks.isEmpty() && !uploads.isEmpty()) {
      throw new IllegalArgumentException(
          "job " + jobId + " lists uploads both inline and in chunks");
    }
    Set<String> chunkKeys = new HashSet<>();
    for (ManifestChunk chunk : chunks) {
      if (!chunkKeys.add(chunk.key())) {
        throw new IllegalArgumentException("chunk " + chunk.key() + " is named twice");
      }
    }
    if (!deletes.isEmpty() && conflictMode != ConflictMode.REPLACE) {
      throw new IllegalArgumentException(
          "job " + jobId + " lists deletes but runs in conflict mode " + conflictMode.id());
    }
    Set<String> keys = new HashSet<>();
    Set<String> uploadIds = new HashSet<>();
    for (PendingUpload upload : uploads) {
      requireInside(destination, upload);
      if (!keys.add(upload.key())) {
        throw new IllegalArgumentException(
            "key " + upload.key() + " is written by more than one upload of job " + jobId);
      }
      if (!uploadIds.add(upload.uploadId())) {
        throw new IllegalArgumentException(
            "upload id of " + upload.key() + " appears twice in job " + jobId);
      }
    }
    for (String key : deletes) {
      if (!destination.contains(key)) {
        throw new IllegalArgumentException(
            "delete of " + destination.uriOf(key) + " lies outside the destination " + destination);
      }
      if (keys.contains(key)) {
        throw new IllegalArgumentException(
            "key " + key + " is both written and deleted by job " + jobId);
      }
    }
  }

  /** Refuses an upload whose object would lie outside the destination. */
  public static void requireInside(Destination destination, PendingUpload upload) {
    if (!upload.bucket().equals(destination.bucket()) || !destination.contains(upload.key())) {
      throw new IllegalArgumentException(
          "upload of "
              + destination.uriOf(upload.key())
              + " (bucket "
              + upload.bucket()
              + ") lies outside the destination "
              + destination);
    }
  }

  /** Whether the uploads are listed in chunks rather than inline. */
  public boolean isChunked() {
    return !chunks.isEmpty();
  }

  /** The files the job publishes. */
  public long fileCount() {
    long count = uploads.size();
    for (ManifestChunk chunk : chunks) {
      count += chunk.fileCount();
    }
    return count;
  }

  /** The bytes the job publishes. */
  public long totalBytes() {
    long total = uploads.stream().mapToLong(PendingUpload::length).sum();
    for (ManifestChunk chunk : chunks) {
      total += chunk.totalBytes();
    }
    return total;
  }
}
