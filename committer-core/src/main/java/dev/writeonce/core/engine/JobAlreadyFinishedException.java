package dev.writeonce.core.engine;

import java.io.IOException;

/**
 * A commit of a job that has already finished: its output is published. The repeated commit is
 * refused and changes nothing; the job must not be run again, or its output would be written twice.
 */
public final class JobAlreadyFinishedException extends IOException {

  private static final long serialVersionUID = 1L;

  public JobAlreadyFinishedException(String message) {
    super(message);
  }
}
