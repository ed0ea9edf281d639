package dev.writeonce.core.store;

import dev.writeonce.core.model.CommitStatistics;
import java.util.Locale;

/** The S3 requests the gateway sends, one counter each. */
public enum RequestType {
  CREATE_UPLOAD,
  UPLOAD_PART,
  COMPLETE_UPLOAD,
  ABORT_UPLOAD,
  LIST_UPLOADS,
  PUT_OBJECT,
  GET_OBJECT,
  HEAD_OBJECT,
  LIST_OBJECTS,
  DELETE_OBJECTS,
  /** A server-side copy: no byte passes through the client. */
  COPY_OBJECT;

  /** The counter name used in statistics and {@code _SUCCESS}. */
  public String counterName() {
    return CommitStatistics.REQUESTS_PREFIX + name().toLowerCase(Locale.ROOT);
  }
}
