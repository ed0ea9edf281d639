package dev.writeonce.core.errors;

/**
 * The store does not honour a request a guarantee rests on, as {@code writeonce check-store} finds:
 * the library refuses to run there rather than write anyway. Nothing was written for the job.
 */
public final class UntrustedStoreException extends WriteonceException implements CleanableFailure {

  private static final long serialVersionUID = 1L;

  public UntrustedStoreException(String message) {
    super(message);
  }
}
