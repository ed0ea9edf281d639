package dev.writeonce.core.publish;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.errors.LeaseLostException;
import dev.writeonce.core.lease.LeaseLock;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.model.RetireRecord;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.testing.InMemoryStore;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Metastore publish mode's three rules, each shown on one schedule with the real {@link
 * Publication} over the in-memory store and a metastore of the test's: a lease is not a fence,
 * remove what you recorded, one name one owner. The seeded simulation ({@code
 * PublicationSimulationTest}) generates these situations among many; these name them.
 */
class PublicationTest {

  private static final String ROOT = "s3a://bucket/warehouse/t";
  private static final Destination ROOT_DESTINATION = Destination.of(URI.create(ROOT));
  private static final long LEASE = 20_000;
  private static final long GRACE = 60_000;

  private final InMemoryStore memory = new InMemoryStore("bucket");
  private final TestCatalog catalog = new TestCatalog(ROOT);
  private final TestCatalog.Table table = catalog.table();

  @AfterEach
  void noHook() {
    Publication.stepHook = step -> {};
  }

  // ---- a lease is not a fence ------------------------------------------------------------------

  @Test
  void aStatementPausedPastItsLeaseBeforeItsCallFailsAndTheTakersRowsStay() throws Exception {
    catalog.partitions.put("p=0", uri("warehouse/t/p=0"));
    put("warehouse/t/p=0/old-0", "old");
    Publication first = publication("run-a", true);
    first.claim(memory);
    put("warehouse/t/_generations/run-a/p=0/part-a", "A");
    // A copies p=0, then stalls past its lease; B takes the lock over and publishes p=0.
    boolean[] paused = {false};
    Publication.stepHook =
        step -> {
          if (step.equals("copied") && !paused[0]) {
            paused[0] = true;
            memory.advanceClock(LEASE + 1);
            try {
              Publication second = publication("run-b", true);
              second.claim(memory);
              put("warehouse/t/_generations/run-b/p=0/part-b", "B");
              second.publish(memory, Set.of("p=0"));
            } catch (IOException e) {
              throw new IllegalStateException(e);
            }
          }
        };
    assertThatThrownBy(() -> first.publish(memory, Set.of("p=0")))
        .hasMessageContaining("db.t")
        .hasMessageContaining("does not publish");
    first.discardUnpublished(memory);
    assertThat(rows("p=0")).containsExactlyInAnyOrder("old", "B");
    assertThat(memory.keys()).noneMatch(k -> k.contains("/run-a/"));
  }

  @Test
  void aStatementWhoseLockWasTakenOverFailsAtItsFenceNamingTheTaker() throws Exception {
    catalog.partitions.put("p=0", uri("warehouse/t/p=0"));
    catalog.partitions.put("p=1", uri("warehouse/t/p=1"));
    Publication first = publication("run-a", false);
    first.claim(memory);
    put("warehouse/t/_generations/run-a/p=0/part-a", "A");
    // B takes the lapsed lock over and publishes another partition: A's partitions are where A
    // read them, so only the fence tells A that it no longer holds the lock.
    boolean[] paused = {false};
    Publication.stepHook =
        step -> {
          if (step.equals("copied") && !paused[0]) {
            paused[0] = true;
            memory.advanceClock(LEASE + 1);
            try {
              overwrite("run-b", "p=1", "B");
            } catch (IOException e) {
              throw new IllegalStateException(e);
            }
          }
        };
    // The taker released the lock when it finished: the message says so, since no object is
    // left to name it by (a taker that still holds the lock is named: LeaseLockTest).
    assertThatThrownBy(() -> first.publish(memory, Set.of("p=0")))
        .hasRootCauseInstanceOf(LeaseLostException.class)
        .rootCause()
        .hasMessageContaining("taken over by another statement")
        .hasMessageContaining("does not call the metastore for table db.t");
    assertThat(catalog.partitions.get("p=0")).isEqualTo(uri("warehouse/t/p=0"));
    assertThat(rows("p=1")).containsExactly("B");
  }

  @Test
  void aStatementWhoseTablesPartitionMovedSinceItReadItDoesNotPublish() throws Exception {
    catalog.partitions.put("p=0", uri("warehouse/t/p=0"));
    put("warehouse/t/p=0/old-0", "old");
    Publication statement = publication("run-a", true);
    statement.claim(memory);
    put("warehouse/t/_generations/run-a/p=0/part-a", "A");
    // A tool outside the mode points p=0 elsewhere between the statement's read and its call.
    Publication.stepHook =
        step -> {
          if (step.equals("copied")) {
            catalog.partitions.put("p=0", uri("warehouse/t/p0-by-hand"));
          }
        };
    assertThatThrownBy(() -> statement.publish(memory, Set.of("p=0")))
        .hasMessageContaining("partition (p='0') of table db.t was at")
        .hasMessageContaining("Run it again");
    assertThat(catalog.partitions.get("p=0")).isEqualTo(uri("warehouse/t/p0-by-hand"));
  }

  // ---- remove what you recorded, not where it was ----------------------------------------------

  @Test
  void anExternalTablesOldDirectoryIsNeverRemoved() throws Exception {
    catalog.owns = false;
    catalog.partitions.put("p=0", uri("warehouse/t/p=0"));
    put("warehouse/t/p=0/old-0", "old");
    overwrite("run-a", "p=0", "A");
    memory.advanceClock(GRACE + 1);
    overwrite("run-b", "p=0", "B");
    memory.advanceClock(GRACE + 1);
    overwrite("run-c", "p=0", "C");
    assertThat(memory.keys()).contains("warehouse/t/p=0/old-0");
    // Its generations are the mode's own: superseded ones go once due.
    assertThat(memory.keys()).noneMatch(k -> k.contains("/run-a/"));
  }

  @Test
  void anotherTablesFilesAndAProducersLaterFileUnderASupersededLocationStay() throws Exception {
    catalog.owns = true;
    catalog.partitions.put("p=0", uri("warehouse/t/p=0"));
    put("warehouse/t/p=0/old-0", "old");
    catalog.others.add(uri("warehouse/t/p=0/landing"));
    put("warehouse/t/p=0/landing/other-0", "the other table's");
    overwrite("run-a", "p=0", "A");
    // A producer that read the old location writes there after the statement superseded it.
    put("warehouse/t/p=0/late-0", "late");
    memory.advanceClock(GRACE + 1);
    overwrite("run-b", "p=0", "B");
    assertThat(memory.keys())
        .doesNotContain("warehouse/t/p=0/old-0")
        .contains("warehouse/t/p=0/landing/other-0", "warehouse/t/p=0/late-0");
  }

  @Test
  void aRecordedFileReplacedSinceItWasRecordedStays() throws Exception {
    catalog.owns = true;
    catalog.partitions.put("p=0", uri("warehouse/t/p=0"));
    put("warehouse/t/p=0/old-0", "old");
    overwrite("run-a", "p=0", "A");
    put("warehouse/t/p=0/old-0", "written again by someone else");
    memory.advanceClock(GRACE + 1);
    overwrite("run-b", "p=0", "B");
    assertThat(new String(memory.content("warehouse/t/p=0/old-0"), StandardCharsets.UTF_8))
        .isEqualTo("written again by someone else");
  }

  @Test
  void aStatementRecordsItsOwnObjectsBeforeItsCallAndWhatItSupersededAfter() throws Exception {
    catalog.owns = true;
    catalog.partitions.put("p=0", uri("warehouse/t/p=0"));
    put("warehouse/t/p=0/old-0", "old");
    List<RetireRecord.State> seen = new ArrayList<>();
    Publication.stepHook =
        step -> {
          if (step.equals("copied")) {
            seen.add(record("run-a").state());
          }
        };
    overwrite("run-a", "p=0", "A");
    RetireRecord after = record("run-a");
    assertThat(seen).containsExactly(RetireRecord.State.PENDING);
    assertThat(after.state()).isEqualTo(RetireRecord.State.SUPERSEDED);
    assertThat(after.superseded())
        .extracting(RetireRecord.RetiredObject::key)
        .containsExactly("warehouse/t/p=0/old-0");
  }

  // ---- one name, one owner ---------------------------------------------------------------------

  @Test
  void aStaticOverwriteGivesEachPartitionItEmptiesADirectoryOfItsOwn() throws Exception {
    for (String p : List.of("p=0", "p=1", "p=2")) {
      catalog.partitions.put(p, uri("warehouse/t/" + p));
      put("warehouse/t/" + p + "/old", "old " + p);
    }
    Publication statement =
        new Publication(table, ROOT, "run-a", "statement run-a", false, any -> true, conf())
            .withTiming(timing());
    statement.claim(memory);
    put("warehouse/t/_generations/run-a/p=0/part", "A");
    statement.publish(memory, Set.of("p=0"));
    assertThat(Set.copyOf(catalog.partitions.values())).hasSize(3);
    assertThat(catalog.partitions.get("p=1"))
        .isEqualTo(uri("warehouse/t/_generations/run-a/_empty/p=1"));
    assertThat(catalog.partitions.get("p=2"))
        .isEqualTo(uri("warehouse/t/_generations/run-a/_empty/p=2"));
  }

  @Test
  void aNewAndAnExistingPartitionInOneStatementGetTheirOwnDirectoriesInBothCalls()
      throws Exception {
    catalog.partitions.put("p=0", uri("warehouse/t/p=0"));
    List<Map<String, URI>> calls = new ArrayList<>();
    catalog.afterCall = () -> calls.add(new TreeMap<>(catalog.partitions));
    Publication statement = publication("run-a", false);
    statement.claim(memory);
    put("warehouse/t/_generations/run-a/p=0/part", "A0");
    put("warehouse/t/_generations/run-a/p=1/part", "A1");
    put("warehouse/t/_generations/run-a/p=2/part", "A2");
    statement.publish(memory, Set.of("p=0", "p=1", "p=2"));
    assertThat(calls).hasSize(2);
    for (Map<String, URI> state : calls) {
      assertThat(Set.copyOf(state.values())).hasSameSizeAs(state.values());
    }
    assertThat(rows("p=1")).containsExactly("A1");
    assertThat(rows("p=2")).containsExactly("A2");
  }

  @Test
  void aCatalogThatMapsTwoPartitionsToOneLocationIsRefusedNamingThemAndTheFix() throws Exception {
    catalog.partitions.put("p=1", uri("warehouse/t/shared"));
    catalog.partitions.put("p=2", uri("warehouse/t/shared"));
    Publication statement = publication("run-a", true);
    statement.claim(memory);
    put("warehouse/t/_generations/run-a/p=1/part", "A");
    assertThatThrownBy(() -> statement.publish(memory, Set.of("p=1")))
        .hasMessageContaining("p='1'")
        .hasMessageContaining("p='2'")
        .hasMessageContaining("ALTER TABLE");
    assertThat(catalog.partitions.get("p=1")).isEqualTo(uri("warehouse/t/shared"));
  }

  // ---- leftovers have an owner -----------------------------------------------------------------

  @Test
  void aClaimedGenerationWhoseStatementDiedIsRemovedOnceItsLeaseAndTheGraceHavePassed()
      throws Exception {
    catalog.partitions.put("p=0", uri("warehouse/t/p=0"));
    Publication dead = publication("run-dead", true);
    dead.claim(memory);
    put("warehouse/t/_generations/run-dead/p=0/part", "never published");
    memory.advanceClock(LEASE + GRACE + 1);
    overwrite("run-b", "p=1", "B");
    assertThat(record("run-dead").state()).isEqualTo(RetireRecord.State.SUPERSEDED);
    memory.advanceClock(GRACE + 1);
    overwrite("run-c", "p=2", "C");
    assertThat(memory.keys()).noneMatch(k -> k.contains("/run-dead/"));
  }

  @Test
  void aStatementThatFailsBeforeItsCallLeavesNothing() throws Exception {
    catalog.partitions.put("p=0", uri("warehouse/t/p=0"));
    put("warehouse/t/p=0/old-0", "old");
    Publication statement = publication("run-a", true);
    statement.claim(memory);
    put("warehouse/t/_generations/run-a/p=0/part", "A");
    Publication.stepHook =
        step -> {
          if (step.equals("copied")) {
            throw new IllegalStateException("cut");
          }
        };
    assertThatThrownBy(() -> statement.publish(memory, Set.of("p=0"))).hasMessageContaining("cut");
    statement.discardUnpublished(memory);
    assertThat(memory.keys())
        .containsExactlyInAnyOrder("warehouse/t/p=0/old-0")
        .allMatch(k -> !k.contains("_generations/"));
  }

  @Test
  void operatorsSeeATablesGenerationsRecordsAndLock() throws Exception {
    catalog.owns = true;
    catalog.partitions.put("p=0", uri("warehouse/t/p=0"));
    put("warehouse/t/p=0/old-0", "old");
    overwrite("run-a", "p=0", "A");
    overwrite("run-d", "p=1", "D"); // a new partition: nothing superseded, no record kept
    Publication running = publication("run-b", false);
    running.claim(memory);
    LeaseLock held = Publication.lockFor(memory, ROOT, "statement run-c", conf(), timing());
    PublicationState state = PublicationState.read(memory, ROOT_DESTINATION);
    assertThat(state.generations()).containsOnlyKeys("run-a", "run-d");
    assertThat(state.records()).containsOnlyKeys("run-a", "run-b");
    assertThat(state.records().get("run-a").record().state())
        .isEqualTo(RetireRecord.State.SUPERSEDED);
    assertThat(state.records().get("run-b").record().state()).isEqualTo(RetireRecord.State.CLAIMED);
    assertThat(state.lock()).get().extracting(l -> l.lock().holder()).isEqualTo("statement run-c");
    assertThat(state.unrecorded()).as("named by p=1, not by a record").containsExactly("run-d");
    held.release();
  }

  // ---- helpers ---------------------------------------------------------------------------------

  private void overwrite(String run, String partition, String row) throws IOException {
    Publication statement = publication(run, false);
    statement.claim(memory);
    put("warehouse/t/_generations/" + run + "/" + partition + "/part-" + run, row);
    statement.publish(memory, Set.of(partition));
  }

  private Publication publication(String run, boolean append) {
    return new Publication(table, ROOT, run, "statement " + run, append, null, conf())
        .withTiming(timing());
  }

  private LeaseLock.Timing timing() {
    return LeaseLock.Timing.manual(memory::clockMillis, memory::advanceClock);
  }

  private static Configuration conf() {
    Configuration conf = new Configuration(false);
    conf.set(Publication.GRACE, GRACE + "ms");
    conf.set(Publication.WAIT, (GRACE / 2) + "ms");
    conf.set(CommitterConfig.JOB_LEASE, LEASE + "ms");
    return conf;
  }

  private void put(String key, String content) throws IOException {
    memory.putObject(key, content.getBytes(StandardCharsets.UTF_8), false);
  }

  private RetireRecord record(String run) {
    try {
      return dev.writeonce.core.json.RetireRecordFormat.fromJson(
          memory.content(Generations.retiredKey(ROOT_DESTINATION, run)), run);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /** What a reader of a partition reads: the visible files under its location. */
  private List<String> rows(String partition) throws IOException {
    String prefix = Destination.of(catalog.partitions.get(partition)).prefix();
    List<String> rows = new ArrayList<>();
    for (ObjectInfo object : memory.listObjects(prefix)) {
      String relative = object.key().substring(prefix.length());
      if (Generations.visibleToReaders(relative) && !relative.endsWith("/")) {
        rows.add(new String(memory.content(object.key()), StandardCharsets.UTF_8));
      }
    }
    return rows;
  }

  private static URI uri(String key) {
    return URI.create("s3a://bucket/" + key);
  }
}
