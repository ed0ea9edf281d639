package dev.writeonce.core.errors;

/** What a failed store request means for the caller; decided once, in {@link StoreErrors}. */
public enum ErrorKind {
  /** The object or bucket does not exist. */
  NOT_FOUND,
  /** The multipart upload is unknown: completed, aborted, expired, or never created. */
  NO_SUCH_UPLOAD,
  /** A conditional request lost: for a create, the object already exists. */
  PRECONDITION_FAILED,
  /**
   * Throttling, a server error or a broken connection that survived the SDK's retries. The request
   * may or may not have taken effect.
   */
  TRANSIENT,
  /** Credentials, permissions or request errors that a retry will not fix. */
  FATAL
}
