package dev.writeonce.core.errors;

import java.util.List;

/**
 * A committed job's upload is gone and its object is absent or different: the upload was aborted by
 * someone else or expired (MinIO removes incomplete uploads after 24 hours, a bucket lifecycle rule
 * may too) before the job was finished. The data of that file cannot be recovered by this library;
 * every other file of the job is completed regardless, and {@code writeonce recover --accept-lost}
 * ends the job with a {@code _SUCCESS} that lists the lost files.
 */
public final class UploadLostException extends WriteonceException {

  private static final long serialVersionUID = 1L;

  private final List<String> lostKeys;

  public UploadLostException(String lostKey, String message, Throwable cause) {
    this(List.of(lostKey), message, cause);
  }

  public UploadLostException(List<String> lostKeys, String message, Throwable cause) {
    super(message, cause);
    this.lostKeys = List.copyOf(lostKeys);
  }

  /** The keys whose uploads are lost. */
  public List<String> lostKeys() {
    return lostKeys;
  }
}
