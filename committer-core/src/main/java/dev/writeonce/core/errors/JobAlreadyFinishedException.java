package dev.writeonce.core.errors;

/**
 * A commit of a job that has already finished: its output is published. The repeated commit is
 * refused and changes nothing; the job must not be run again, or its output would be written twice.
 */
public final class JobAlreadyFinishedException extends WriteonceException {

  private static final long serialVersionUID = 1L;

  public JobAlreadyFinishedException(String message) {
    super(message);
  }
}
