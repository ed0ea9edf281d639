package dev.writeonce.core.errors;

/**
 * The job's state forbids the request: another commit of the same job id already passed the commit
 * point, or an abort was asked for a job that is already committed.
 */
public final class CommitConflictException extends WriteonceException {

  private static final long serialVersionUID = 1L;

  public CommitConflictException(String message) {
    super(message);
  }
}
