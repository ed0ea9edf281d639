package dev.writeonce.core.engine;

import java.io.IOException;

/**
 * The job's state forbids the request: another commit of the same job id already passed the commit
 * point, or an abort was asked for a job that is already committed.
 */
public final class CommitConflictException extends IOException {

  private static final long serialVersionUID = 1L;

  public CommitConflictException(String message) {
    super(message);
  }
}
