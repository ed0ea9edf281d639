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

  /** The refusal of a read of {@code path}, whose data waits as an upload to {@code finalUri}. */
  static PendingFileNotReadableException of(org.apache.hadoop.fs.Path path, String finalUri) {
    return new PendingFileNotReadableException(
        "cannot read "
            + path
            + ": it is a pending upload to "
            + finalUri
            + " whose data becomes readable only when the commit renames it into place."
            + " Engines that read task output before the commit need it written plainly:"
            + " for Hive set hive.merge.mapfiles=false and hive.merge.mapredfiles=false;"
            + " otherwise list the file name in "
            + ShimConfig.PLAIN_FILES
            + " or leave this bucket out of "
            + ShimConfig.BUCKETS);
  }
}
