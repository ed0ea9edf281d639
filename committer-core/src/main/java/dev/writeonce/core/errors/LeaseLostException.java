package dev.writeonce.core.errors;

/**
 * A holder of a lease lock could not prove, right before an action outside the store, that it still
 * holds the lock: another party took it over after its lease lapsed, or the conditional renewal
 * that proves it failed. The action was not taken.
 */
public final class LeaseLostException extends WriteonceException {

  private static final long serialVersionUID = 1L;

  public LeaseLostException(String message) {
    super(message);
  }

  public LeaseLostException(String message, Throwable cause) {
    super(message, cause);
  }
}
