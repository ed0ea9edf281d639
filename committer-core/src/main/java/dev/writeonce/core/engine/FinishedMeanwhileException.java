package dev.writeonce.core.engine;

import java.io.IOException;

/**
 * A chunk of a job manifest vanished because another process finished the job and removed its
 * records while this one was reading them: nothing is left to do, and nothing is damaged.
 */
final class FinishedMeanwhileException extends IOException {

  private static final long serialVersionUID = 1L;

  FinishedMeanwhileException(String jobId, String chunkUri) {
    super("job " + jobId + " was finished by another process while " + chunkUri + " was read");
  }
}
