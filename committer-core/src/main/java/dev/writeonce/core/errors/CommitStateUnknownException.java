package dev.writeonce.core.errors;

/**
 * The write of the job manifest failed in a way that leaves open whether it landed. The job may be
 * committed: nothing may be cleaned up or aborted. Running recovery later finds out by reading the
 * manifest's key.
 */
public final class CommitStateUnknownException extends WriteonceException {

  private static final long serialVersionUID = 1L;

  public CommitStateUnknownException(String message, Throwable cause) {
    super(message, cause);
  }
}
