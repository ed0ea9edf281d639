package dev.writeonce.core.committer;

import dev.writeonce.core.engine.JobLayout;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.store.ErrorKind;
import dev.writeonce.core.store.StoreException;
import dev.writeonce.core.store.StoreGateway;
import java.io.IOException;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The claim a job takes on its destination while it commits in conflict mode fail. */
final class FailModeClaim {

  private static final Logger LOG = LoggerFactory.getLogger(FailModeClaim.class);

  private FailModeClaim() {}

  /**
   * Releases the fail-mode claim. A failure here must not turn a commit that went through into a
   * reported failure: the claim is only left behind, and the message says how to remove it.
   */
  static void release(StoreGateway store, Destination destination, String jobId, String claim) {
    try {
      store.deleteObjects(List.of(claim));
    } catch (IOException e) {
      LOG.warn(
          "Job {}: the fail-mode claim {} could not be removed ({}); later fail-mode jobs on {}"
              + " are refused until it is deleted",
          jobId,
          destination.uriOf(claim),
          e.getMessage(),
          destination);
    }
  }

  /**
   * In fail mode, one job at a time may commit to a destination: the claim is a conditional PUT
   * ({@code If-None-Match: *}), held from before the emptiness check until the commit ends. Two
   * jobs that both passed their setup check cannot then both commit.
   */
  static String take(StoreGateway store, Destination destination, String jobId) throws IOException {
    String key = new JobLayout(destination).recordsPrefix() + "fail-mode.claim";
    try {
      store.putObject(key, jobId.getBytes(java.nio.charset.StandardCharsets.UTF_8), true);
      return key;
    } catch (StoreException e) {
      if (!e.is(ErrorKind.PRECONDITION_FAILED)) {
        throw e;
      }
      String holder =
          store
              .getObject(key)
              .map(b -> new String(b, java.nio.charset.StandardCharsets.UTF_8))
              .orElse("another job");
      throw new DestinationConflictException(
          "job "
              + jobId
              + " cannot commit to "
              + destination
              + ": job "
              + holder
              + " is committing there and writeonce.conflict-mode is fail, which lets one job"
              + " write the destination. If no job is committing (a driver died), delete "
              + destination.uriOf(key));
    }
  }
}
