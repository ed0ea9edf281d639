package dev.writeonce.shim;

import dev.writeonce.core.errors.WriteonceException;

/**
 * A read of a file that exists only as a pending upload: its bytes are in the store but become an
 * object only when the commit renames the file into place.
 */
public final class PendingFileNotReadableException extends WriteonceException {

  private static final long serialVersionUID = 1L;

  public PendingFileNotReadableException(String message) {
    super(message);
  }
}
