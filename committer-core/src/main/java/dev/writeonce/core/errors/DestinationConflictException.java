package dev.writeonce.core.errors;

/** The destination already holds data and the conflict mode is fail. */
public final class DestinationConflictException extends WriteonceException
    implements CleanableFailure {

  private static final long serialVersionUID = 1L;

  public DestinationConflictException(String message) {
    super(message);
  }
}
