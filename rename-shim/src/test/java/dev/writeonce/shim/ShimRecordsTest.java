package dev.writeonce.shim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.model.PendingFile;
import dev.writeonce.core.store.RequestType;
import dev.writeonce.core.testing.InMemoryStore;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ShimRecordsTest {

  private static final String KEY = "out/_temporary/0/task_1/day=1/part-0";

  private final InMemoryStore store = new InMemoryStore("bucket");
  private final ShimRecords records = new ShimRecords(store, new ShimStatistics());

  private String written() throws Exception {
    PendingFile file =
        PendingFile.writing("bucket", "out/day=1/part-0", "upload-1", "attempt_1", 1);
    records.write(KEY, file);
    return store.headObject(KEY).orElseThrow().etag();
  }

  private long gets() {
    return store.counters().snapshot().getOrDefault(RequestType.GET_OBJECT, 0L);
  }

  @Test
  void aListedRecordThisInstanceWroteIsKnownByItsQuotedEtagWithoutAGet() throws Exception {
    String etag = written();
    long before = gets();

    Optional<PendingFile> listed = records.recordOf(KEY, 200, '"' + etag + '"');

    assertThat(listed).isPresent();
    assertThat(listed.get().key()).isEqualTo("out/day=1/part-0");
    assertThat(gets() - before).as("GETs of a record this instance knows").isZero();
  }

  @Test
  void theDirectoriesAboveAKnownRecordExistUntilItsRecordGoes() throws Exception {
    written();
    assertThat(records.holdsKnownRecords("out/_temporary/0/task_1/day=1")).isTrue();
    assertThat(records.holdsKnownRecords("out/_temporary/0/task_1")).isTrue();
    assertThat(records.holdsKnownRecords("out/_temporary/0/task_2")).isFalse();

    records.delete(java.util.List.of(KEY));
    assertThat(records.holdsKnownRecords("out/_temporary/0/task_1/day=1")).isFalse();
    assertThat(records.holdsKnownRecords("out/_temporary")).isFalse();
  }

  @Test
  void aListedObjectWithAnotherEtagAtARecordsKeyIsReadAgain() throws Exception {
    written();
    // Another writer replaced the object since: its ETag differs, so the cache is not trusted.
    store.putObject(KEY, "not a record".getBytes(java.nio.charset.StandardCharsets.UTF_8), false);
    String replaced = store.headObject(KEY).orElseThrow().etag();
    long before = gets();

    Optional<PendingFile> listed = records.recordOf(KEY, 12, '"' + replaced + '"');

    assertThat(listed).isEmpty();
    assertThat(gets() - before).isEqualTo(1);
  }
}
