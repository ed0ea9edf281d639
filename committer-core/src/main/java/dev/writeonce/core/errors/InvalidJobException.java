package dev.writeonce.core.errors;

/** The job's task manifests cannot form a valid commit; nothing was completed or deleted. */
public final class InvalidJobException extends WriteonceException implements CleanableFailure {

  private static final long serialVersionUID = 1L;

  public InvalidJobException(String message, Throwable cause) {
    super(message, cause);
  }
}
