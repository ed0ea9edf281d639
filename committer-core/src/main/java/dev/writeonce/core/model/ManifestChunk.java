package dev.writeonce.core.model;

import java.util.Locale;
import java.util.Objects;

/**
 * One part of a large job manifest: an object the driver wrote before the commit point, holding a
 * share of the job's uploads. The job manifest names each chunk with its count, bytes and SHA-256,
 * so a chunk changed or replaced after the commit point is refused rather than completed.
 *
 * @param key the chunk's object key, under the job's records
 * @param fileCount the uploads it lists
 * @param totalBytes the bytes of those uploads
 * @param sha256 the hex SHA-256 of the chunk's bytes
 */
public record ManifestChunk(String key, int fileCount, long totalBytes, String sha256) {

  public ManifestChunk {
    PendingUpload.requireText(key, "key");
    Objects.requireNonNull(sha256, "sha256");
    if (!sha256.matches("[0-9a-f]{64}")) {
      throw new IllegalArgumentException(
          "chunk " + key + " has SHA-256 '" + sha256 + "', not 64 lowercase hex digits");
    }
    if (fileCount < 1 || totalBytes < 0) {
      throw new IllegalArgumentException(
          String.format(
              Locale.ROOT, "chunk %s declares %d files and %d bytes", key, fileCount, totalBytes));
    }
  }
}
