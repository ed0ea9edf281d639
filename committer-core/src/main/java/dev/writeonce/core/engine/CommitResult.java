package dev.writeonce.core.engine;

import dev.writeonce.core.model.SuccessData;
import dev.writeonce.core.store.RequestType;
import java.util.Map;

/**
 * What a finished job commit did.
 *
 * @param jobId the job
 * @param files objects the job published
 * @param bytes their total length
 * @param completed uploads completed by this run
 * @param confirmed uploads found already completed and confirmed by HEAD (after a crash)
 * @param deleted replaced objects deleted
 * @param requests store requests this run sent, by type
 * @param stageMillis the duration of each stage
 * @param success the {@code _SUCCESS} written
 */
public record CommitResult(
    String jobId,
    int files,
    long bytes,
    int completed,
    int confirmed,
    int deleted,
    Map<RequestType, Long> requests,
    Map<String, Long> stageMillis,
    SuccessData success) {

  public CommitResult {
    requests = Map.copyOf(requests);
    stageMillis = Map.copyOf(stageMillis);
  }
}
