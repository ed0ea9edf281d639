package dev.writeonce.core.errors;

import java.io.IOException;

/**
 * The base of every failure this library reports. It is an {@link IOException}, as Hadoop's and
 * Spark's commit APIs declare; {@link CleanableFailure} marks the ones after which the job's
 * uploads may be aborted.
 */
public abstract class WriteonceException extends IOException {

  private static final long serialVersionUID = 1L;

  protected WriteonceException(String message) {
    super(message);
  }

  protected WriteonceException(String message, Throwable cause) {
    super(message, cause);
  }
}
