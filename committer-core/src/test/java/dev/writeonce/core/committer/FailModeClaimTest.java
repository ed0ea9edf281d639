package dev.writeonce.core.committer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.engine.JobLayout;
import dev.writeonce.core.engine.JobRecords;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.model.JobRecord;
import dev.writeonce.core.store.RequestType;
import dev.writeonce.core.testing.InMemoryStore;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The fail-mode claim is removed only by the run that holds it. */
class FailModeClaimTest {

  private static final Destination DEST = Destination.of("s3a://bucket/table/");

  private final InMemoryStore store = new InMemoryStore("bucket", System.currentTimeMillis());

  private JobRecord job(String jobId, String uuid) {
    long now = store.clockMillis();
    return new JobRecord(jobId, uuid, DEST, JobRecord.State.COMMITTING, "host", now, now, 600_000L);
  }

  @Test
  void aRunWhoseClaimWasRemovedAndTakenByAnotherJobLeavesThatJobsClaim() throws Exception {
    JobRecord slow = job("job_1", "run-1");
    String key = FailModeClaim.take(store, DEST, slow);
    // An operator's recover judged the claim stale and removed it; another job took it.
    store.deleteObjects(List.of(key));
    JobRecord next = job("job_2", "run-2");
    FailModeClaim.take(store, DEST, next);

    FailModeClaim.release(store, DEST, slow, key);

    assertThat(new JobRecords(store, new JobLayout(DEST)).loadFailModeClaim())
        .hasValueSatisfying(claim -> assertThat(claim.jobId()).isEqualTo("job_2"));
  }

  @Test
  void theHolderRemovesItsOwnClaimWithOneReadAndOneConditionalDelete() throws Exception {
    JobRecord holder = job("job_1", "run-1");
    String key = FailModeClaim.take(store, DEST, holder);
    var before = store.counters().snapshot();

    FailModeClaim.release(store, DEST, holder, key);

    assertThat(store.keys()).isEmpty();
    var sent = store.counters().since(before);
    assertThat(sent.get(RequestType.GET_OBJECT)).isEqualTo(1);
    assertThat(sent.get(RequestType.DELETE_OBJECTS)).isEqualTo(1);
  }
}
