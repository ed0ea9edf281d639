package dev.writeonce.core.engine;

import dev.writeonce.core.model.Destination;
import dev.writeonce.core.model.JobRecord;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.StoreGateway;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Replace mode in two halves: before the commit point, list what the job replaces and record it in
 * the manifest; after it, delete exactly what was recorded. Objects the job writes itself, this
 * library's records and the destination's {@code _SUCCESS} are never listed for deletion: the job
 * replaces {@code _SUCCESS} itself, carrying over the history of earlier jobs that it holds.
 */
final class ReplaceStage {

  private static final Logger LOG = LoggerFactory.getLogger(ReplaceStage.class);

  private ReplaceStage() {}

  /**
   * Which of some keys the job writes: those it must not delete, since completing replaces them.
   */
  interface WrittenKeys {
    Set<String> among(Set<String> candidates) throws IOException;
  }

  static List<String> resolve(
      StoreGateway store, JobLayout layout, List<String> prefixes, WrittenKeys writtenKeys)
      throws IOException {
    Destination destination = layout.destination();
    Set<String> deletes = new TreeSet<>();
    String successKey = layout.successKey();
    for (String prefix : prefixes) {
      if (!prefix.startsWith(destination.prefix())) {
        throw new IllegalArgumentException(
            "replace prefix " + destination.uriOf(prefix) + " lies outside " + destination);
      }
      for (ObjectInfo object : store.listObjects(prefix)) {
        String key = object.key();
        if (destination.contains(key) && !layout.isRecord(key) && !key.equals(successKey)) {
          deletes.add(key);
        }
      }
    }
    if (!deletes.isEmpty()) {
      deletes.removeAll(writtenKeys.among(deletes));
    }
    return new ArrayList<>(deletes);
  }

  /** Finishes a committed job: the engine's resume. */
  interface Finisher {
    Object finish(String jobId) throws IOException;
  }

  /**
   * Lists what replace mode deletes, once no other job on the destination is committed but
   * unfinished: such a job's files may be among those listed, and deleting them before it finished
   * would leave it unable ever to confirm them. It is finished first (finishing is idempotent, so
   * its own driver may be doing the same), and the listing is taken again.
   */
  static List<String> resolveWhenNoOtherJobIsUnfinished(
      StoreGateway store,
      JobLayout layout,
      JobRecords records,
      JobCommitRequest request,
      WrittenKeys written,
      Finisher finisher)
      throws IOException {
    for (int round = 0; ; round++) {
      List<String> deletes = resolve(store, layout, request.replacePrefixes(), written);
      List<String> unfinished = otherCommittedJobs(store, layout, records, request.jobId());
      if (unfinished.isEmpty()) {
        return deletes;
      }
      if (round == 2) {
        throw new IOException(
            "job "
                + request.jobId()
                + " cannot replace data on "
                + layout.destination()
                + ": other jobs keep committing there ("
                + unfinished
                + "); nothing was completed or deleted");
      }
      for (String other : unfinished) {
        LOG.info(
            "Job {}: finishing job {} first, committed on {} but unfinished, before replacing",
            request.jobId(),
            other,
            layout.destination());
        finisher.finish(other);
      }
    }
  }

  /** Ids of other jobs on the destination past their commit point and not finished. */
  private static List<String> otherCommittedJobs(
      StoreGateway store, JobLayout layout, JobRecords records, String self) throws IOException {
    String jobsPrefix = layout.recordsPrefix() + "jobs/";
    List<String> found = new ArrayList<>();
    for (ObjectInfo object : store.listObjects(jobsPrefix)) {
      String rest = object.key().substring(jobsPrefix.length());
      int slash = rest.indexOf('/');
      if (slash <= 0 || !rest.substring(slash + 1).equals("manifest.json")) {
        continue;
      }
      String jobId = rest.substring(0, slash);
      if (jobId.equals(self)) {
        continue;
      }
      Optional<JobRecord> record = records.loadJobRecord(jobId);
      if (record.isPresent() && record.get().state() == JobRecord.State.FINISHED) {
        continue;
      }
      if (records.loadCommitPoint(jobId) == JobRecords.CommitPoint.COMMITTED) {
        found.add(jobId);
      }
    }
    return found;
  }
}
