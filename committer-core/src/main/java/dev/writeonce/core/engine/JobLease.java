package dev.writeonce.core.engine;

import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.json.JobRecordFormat;
import dev.writeonce.core.lease.Renewer;
import dev.writeonce.core.model.JobRecord;
import dev.writeonce.core.store.StoreGateway;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A driver's lease on its job: while the job is set up or committing, the driver rewrites {@code
 * lease.json} beside the job record every quarter of the lease, so that recover and purge can tell
 * a live job, however idle its tasks, from one whose driver died. Writing the job record counts as
 * a renewal too, so a job shorter than a quarter of the lease sends no lease request at all.
 *
 * <p>The lease is a separate object so that a renewal never races a change of the job's state. It
 * is released, waiting for a renewal in flight, before the job's end is written and before any of
 * its records are removed, so that a renewal never brings a removed job back. Leases are held per
 * job and store bucket for the whole process: the job may be set up by one committer instance and
 * committed by another.
 */
final class JobLease {

  private static final Logger LOG = LoggerFactory.getLogger(JobLease.class);

  private static final Map<String, JobLease> HELD = new ConcurrentHashMap<>();

  private final StoreGateway store;
  private final String key;
  private final JobRecord record;
  private final Object lock = new Object();
  private boolean released;
  private volatile ScheduledFuture<?> renewal;

  private JobLease(StoreGateway store, String key, JobRecord record) {
    this.store = store;
    this.key = key;
    this.record = record;
  }

  private static String id(StoreGateway store, String key) {
    return store.bucket() + "/" + key;
  }

  /** Starts renewing the job's lease; replaces a lease this process held on the same job. */
  static void hold(StoreGateway store, JobLayout layout, JobRecord record) {
    String key = layout.leaseKey(record.jobId());
    JobLease lease = new JobLease(store, key, record);
    JobLease previous = HELD.put(id(store, key), lease);
    if (previous != null) {
      previous.stop();
    }
    lease.renewal = Renewer.every(record.leaseMillis() / 4, lease::renew);
  }

  /** Stops renewing the job's lease, after a renewal in flight has ended. */
  static void release(StoreGateway store, JobLayout layout, String jobId) {
    JobLease lease = HELD.remove(id(store, layout.leaseKey(jobId)));
    if (lease != null) {
      lease.stop();
    }
  }

  /**
   * The driver of this run gave the job up (its commit or abort failed): stops renewing and marks
   * the lease released, so that recover may act on the job at once rather than once the lease has
   * lapsed. Does nothing unless this process holds the lease for this run.
   */
  static void giveUp(StoreGateway store, JobLayout layout, String jobId, String uuid) {
    String id = id(store, layout.leaseKey(jobId));
    JobLease lease = HELD.get(id);
    if (lease == null || !lease.record.uuid().equals(uuid) || !HELD.remove(id, lease)) {
      return;
    }
    lease.stop();
    try {
      lease.store.putObject(
          lease.key,
          JobRecordFormat.leaseToJson(lease.record, System.currentTimeMillis(), true),
          false);
    } catch (StoreException e) {
      LOG.warn(
          "Job {}: marking its lease released failed ({}); recover treats the job as live until"
              + " the lease lapses, {} ms after its last renewal",
          jobId,
          e.getMessage(),
          lease.record.leaseMillis());
    }
  }

  /** Stops every renewal of this process; returns how many leases it held. */
  static int releaseAll() {
    int released = 0;
    for (String id : List.copyOf(HELD.keySet())) {
      JobLease lease = HELD.remove(id);
      if (lease != null) {
        lease.stop();
        released++;
      }
    }
    return released;
  }

  /** Whether this process renews a lease on the job: for tests. */
  static boolean isHeld(StoreGateway store, JobLayout layout, String jobId) {
    return HELD.containsKey(id(store, layout.leaseKey(jobId)));
  }

  private void stop() {
    synchronized (lock) {
      released = true;
    }
    ScheduledFuture<?> scheduled = renewal;
    if (scheduled != null) {
      scheduled.cancel(false);
    }
  }

  private void renew() {
    synchronized (lock) {
      if (released) {
        return;
      }
      try {
        store.putObject(
            key, JobRecordFormat.leaseToJson(record, System.currentTimeMillis(), false), false);
      } catch (StoreException e) {
        LOG.warn(
            "Job {}: renewing its lease at {} failed ({}); the next renewal tries again. A lease"
                + " that lapses lets recover and purge treat the job as abandoned",
            record.jobId(),
            record.destination().uriOf(key),
            e.getMessage());
      } catch (RuntimeException e) {
        // The store's client is closed: whoever held this job is gone from this process.
        LOG.debug("Job {}: lease renewal stops: {}", record.jobId(), e.toString());
        released = true;
        HELD.remove(id(store, key), this);
        ScheduledFuture<?> scheduled = renewal;
        if (scheduled != null) {
          scheduled.cancel(false);
        }
      }
    }
  }
}
