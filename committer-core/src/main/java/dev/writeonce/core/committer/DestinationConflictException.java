package dev.writeonce.core.committer;

import java.io.IOException;

/** The destination already holds data and the conflict mode is fail. */
public final class DestinationConflictException extends IOException {

  private static final long serialVersionUID = 1L;

  public DestinationConflictException(String message) {
    super(message);
  }
}
