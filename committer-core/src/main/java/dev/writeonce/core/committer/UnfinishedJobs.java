package dev.writeonce.core.committer;

import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.engine.JobCommitEngine;
import dev.writeonce.core.engine.JobInspector;
import dev.writeonce.core.engine.JobLayout;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.store.StoreGateway;
import java.io.IOException;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What job setup does about jobs on its destination that passed their commit point without
 * finishing: their output is decided and must not be mixed with a new job's, so setup finishes them
 * ({@value CommitterConfig#RECOVERY_ON_SETUP}{@code =recover}) or fails naming them.
 */
final class UnfinishedJobs {

  private static final Logger LOG = LoggerFactory.getLogger(UnfinishedJobs.class);

  private final StoreGateway store;
  private final Destination destination;
  private final CommitterConfig config;

  UnfinishedJobs(StoreGateway store, Destination destination, CommitterConfig config) {
    this.store = store;
    this.destination = destination;
    this.config = config;
  }

  /** The jobs with records on the destination: one LIST when there are none, the usual case. */
  Optional<JobInspector.Report> inspect() throws IOException {
    JobLayout layout = new JobLayout(destination);
    if (store.listChildren(layout.recordsPrefix() + "jobs/", 1).isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(new JobInspector(store, layout).inspect());
  }

  void finishOrRefuse(String newJobId, JobInspector.Report report, JobCommitEngine engine)
      throws IOException {
    long idleSince = store.storeNowMillis() - config.unfinishedAfterMillis();
    List<JobInspector.Job> unfinished = report.in(JobInspector.State.COMMITTED_UNFINISHED);
    for (JobInspector.Job job : unfinished) {
      if (job.lastModifiedMillis() > idleSince) {
        // Committed moments ago: its own driver is most likely finishing it right now.
        LOG.info(
            "Job {}: job {} on {} is committed and still finishing; leaving it to its driver",
            newJobId,
            job.jobId(),
            destination);
        continue;
      }
      if (!config.recoverOnSetup()) {
        throw new IOException(
            "job "
                + newJobId
                + " cannot start: "
                + destination
                + " holds job "
                + job.jobId()
                + ", which passed its commit point but did not finish ("
                + job.files()
                + " files). Run 'writeonce recover "
                + destination
                + "', or set "
                + CommitterConfig.RECOVERY_ON_SETUP
                + "=recover to let job setup finish it");
      }
      LOG.warn(
          "Job {}: finishing job {} first, committed on {} but unfinished ({}=recover)",
          newJobId,
          job.jobId(),
          destination,
          CommitterConfig.RECOVERY_ON_SETUP);
      engine.resume(job.jobId());
    }
  }
}
