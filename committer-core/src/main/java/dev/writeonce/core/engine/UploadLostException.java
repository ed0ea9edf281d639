package dev.writeonce.core.engine;

import java.io.IOException;

/**
 * A committed job's upload is gone and its object is absent or different: the upload was aborted by
 * someone else or expired (MinIO removes incomplete uploads after 24 hours) before the job was
 * finished. The data of that file cannot be recovered by this library.
 */
public final class UploadLostException extends IOException {

  private static final long serialVersionUID = 1L;

  public UploadLostException(String message, Throwable cause) {
    super(message, cause);
  }
}
