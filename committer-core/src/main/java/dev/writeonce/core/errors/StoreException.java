package dev.writeonce.core.errors;

/**
 * A store request that failed, with its kind. The message names the operation, the object and the
 * store's error code and request id; it never carries credentials.
 */
public final class StoreException extends WriteonceException {

  private static final long serialVersionUID = 1L;

  private final ErrorKind kind;
  private final int statusCode;

  public StoreException(ErrorKind kind, int statusCode, String message, Throwable cause) {
    super(message, cause);
    this.kind = kind;
    this.statusCode = statusCode;
  }

  public ErrorKind kind() {
    return kind;
  }

  /** The HTTP status, or 0 when no response arrived. */
  public int statusCode() {
    return statusCode;
  }

  public boolean is(ErrorKind expected) {
    return kind == expected;
  }
}
