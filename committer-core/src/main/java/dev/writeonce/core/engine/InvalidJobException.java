package dev.writeonce.core.engine;

import java.io.IOException;

/** The job's task manifests cannot form a valid commit; nothing was completed or deleted. */
public final class InvalidJobException extends IOException {

  private static final long serialVersionUID = 1L;

  public InvalidJobException(String message, Throwable cause) {
    super(message, cause);
  }
}
