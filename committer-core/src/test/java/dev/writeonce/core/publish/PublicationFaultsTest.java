package dev.writeonce.core.publish;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.json.RetireRecordFormat;
import dev.writeonce.core.lease.LeaseLock;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.model.RetireRecord;
import dev.writeonce.core.testing.ForwardingStore;
import dev.writeonce.core.testing.InMemoryStore;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.TreeSet;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;

/**
 * Schedules under which {@link Publication} and {@link RetireRecords} lost rows, or left objects
 * that no record named and no location read, until they were fixed: a lost answer of the metastore
 * call, a two-step publication failing between its calls, a file added to an appended partition
 * after its copy, a completion landing after a failed statement's discard, a table over the root.
 *
 * <p>The table is {@code s3a://bucket/warehouse/t}, partitioned by {@code p}, managed (owns its
 * location) unless a test says otherwise. Lease 10 s, grace 60 s, wait 30 s, all on the in-memory
 * store's clock; claims and locks are not renewed behind the test's back (manual timing).
 */
class PublicationFaultsTest {

  private static final String ROOT = "s3a://bucket/warehouse/t";
  private static final Destination ROOT_DEST = Destination.of(URI.create(ROOT));
  private static final long LEASE = 10_000;
  private static final long GRACE = 60_000;
  private static final long WAIT = 30_000;

  private final InMemoryStore memory = new InMemoryStore("bucket");

  private final TestCatalog catalog = new TestCatalog(ROOT);
  private int cleanups;

  /**
   * X writes p=1 (existing) and p=2 (new): its add_partitions lands (p=2 at X's empty directory),
   * its alter_partitions fails, and its failure path runs.
   */
  private void twoStepPublicationFailingBetweenItsCalls() throws IOException {
    TestCatalog.Table xTable = catalog.table();
    xTable.onRelocate =
        (locations, apply) -> {
          throw new IOException("alter_partitions: MetaException: the metastore is unavailable");
        };
    Publication x = statement("X", false, xTable);
    write(x, "X", "p=1", "p=2");
    assertThatThrownBy(() -> x.publish(memory, Set.of("p=1", "p=2")))
        .isInstanceOf(IOException.class);
    x.discardUnpublished(memory);
  }

  // ---- helpers ---------------------------------------------------------------------------------

  private static Configuration conf() {
    Configuration conf = new Configuration(false);
    conf.set(Publication.GRACE, GRACE + "ms");
    conf.set(CommitterConfig.JOB_LEASE, LEASE + "ms");
    conf.set(Publication.WAIT, WAIT + "ms");
    return conf;
  }

  private Publication statement(String run, boolean append, MetastoreTable table) {
    return new Publication(table, ROOT, run, "statement " + run, append, null, conf())
        .withTiming(LeaseLock.Timing.manual(memory::clockMillis, memory::advanceClock));
  }

  private static String key(String relative) {
    return ROOT_DEST.keyOf(relative);
  }

  private static URI location(String relative) {
    return URI.create(ROOT + "/" + relative);
  }

  /** The file a run writes into its generation of a partition (its "row"). */
  private static String rowKey(String run, String fragment) {
    return key(Generations.partitionDir(run, fragment) + "part-" + run);
  }

  private static URI generation(String run, String fragment) {
    return location(Generations.runDir(run) + fragment);
  }

  private void put(String key, String body) throws StoreException {
    memory.putObject(key, body.getBytes(StandardCharsets.UTF_8), false);
  }

  /** A table that was written before the mode: partition p at warehouse/t/p/, one file. */
  private String preModePartition(String fragment) throws StoreException {
    String file = key(fragment + "/000000_0");
    put(file, "old row of " + fragment);
    catalog.partitions.put(fragment, location(fragment));
    return file;
  }

  /** A run claims its generation, its files land, and it publishes them. */
  private void write(Publication publication, String run, String... fragments) throws IOException {
    publication.claim(memory);
    for (String fragment : fragments) {
      put(rowKey(run, fragment), "row of " + run + " in " + fragment);
    }
  }

  /** An ordinary, fault-free statement that overwrites the given catalog.partitions. */
  private void ordinaryStatement(String run, String... fragments) throws IOException {
    Publication publication = statement(run, false, catalog.table());
    write(publication, run, fragments);
    publication.publish(memory, Set.of(fragments));
  }

  /**
   * Lets {@code rounds} times the lease plus the grace pass, each followed by a fault-free
   * statement into a fresh partition of its own: every due record is acted on, repeatedly.
   */
  private void timePassesWithCleanups(int rounds) throws IOException {
    for (int i = 0; i < rounds; i++) {
      memory.advanceClock(GRACE + LEASE + 1);
      String run = "cleanup-" + (++cleanups);
      ordinaryStatement(run, "p=cleanup" + cleanups);
    }
  }

  /** Every key any retire record of the table names (own or superseded). */
  private Set<String> recordedKeys() throws IOException {
    Set<String> recorded = new TreeSet<>();
    for (String key : memory.keys()) {
      if (key.startsWith(key(Generations.RETIRED))) {
        RetireRecord record = RetireRecordFormat.fromJson(memory.content(key), key);
        record.own().forEach(o -> recorded.add(o.key()));
        record.superseded().forEach(o -> recorded.add(o.key()));
      }
    }
    return recorded;
  }

  /** Whether a partition location of the table reads the key. */
  private boolean readByTheTable(String key) {
    return catalog.partitions.values().stream()
        .anyMatch(location -> key.startsWith(Destination.of(location).prefix()));
  }

  private RetireRecord.State recordState(String run) throws IOException {
    String key = Generations.retiredKey(ROOT_DEST, run);
    return RetireRecordFormat.fromJson(memory.content(key), key).state();
  }

  @Test
  void aCallWhoseAnswerWasLostLeavesTheLockToLapseSoTheNextStatementWaitsALease() throws Exception {
    preModePartition("p=1");
    TestCatalog.Table xTable = catalog.table();
    xTable.onRelocate =
        (locations, apply) -> {
          throw new IOException(
              "alter_partitions: java.net.SocketTimeoutException: Read timed out");
        };
    Publication x = statement("X", false, xTable);
    write(x, "X", "p=1");
    assertThatThrownBy(() -> x.publish(memory, Set.of("p=1"))).isInstanceOf(IOException.class);
    x.discardUnpublished(memory);
    // The call may still land in the metastore: the lock is not released but left to lapse.
    assertThat(memory.keys()).contains(key(Generations.DIR + LeaseLock.OBJECT_NAME));
    long failedAt = memory.clockMillis();
    ordinaryStatement("Y", "p=1");
    assertThat(memory.clockMillis() - failedAt).isGreaterThanOrEqualTo(LEASE);
    assertThat(catalog.partitions.get("p=1")).isEqualTo(generation("Y", "p=1"));
  }

  @Test
  void aTwoStepPublicationFailingBetweenItsCallsHasItsFilesRemovedAfterTheGrace() throws Exception {
    String old = preModePartition("p=1");
    twoStepPublicationFailingBetweenItsCalls();
    // p=2 was added at its empty directory; p=1 was never switched.
    assertThat(catalog.partitions.get("p=2"))
        .isEqualTo(location(Generations.emptyDir("X", "p=2").replaceAll("/$", "")));
    timePassesWithCleanups(3);
    assertThat(memory.keys()).doesNotContain(rowKey("X", "p=1"), rowKey("X", "p=2"));
    assertThat(memory.keys()).contains(old);
    assertThat(readByTheTable(old)).isTrue();
  }

  @Test
  void aCallThatLandedWithItsAnswerLostHasWhatItReplacedRemovedAfterTheGrace() throws Exception {
    String old = preModePartition("p=1");
    TestCatalog.Table xTable = catalog.table();
    xTable.onRelocate =
        (locations, apply) -> {
          apply.run();
          throw new IOException("alter_partitions: connection reset after the call landed");
        };
    Publication x = statement("X", false, xTable);
    write(x, "X", "p=1");
    assertThatThrownBy(() -> x.publish(memory, Set.of("p=1"))).isInstanceOf(IOException.class);
    x.discardUnpublished(memory);
    assertThat(catalog.partitions.get("p=1")).isEqualTo(generation("X", "p=1"));
    timePassesWithCleanups(3);
    assertThat(memory.keys()).doesNotContain(old);
    assertThat(memory.keys()).contains(rowKey("X", "p=1"));
    assertThat(readByTheTable(rowKey("X", "p=1"))).isTrue();
  }

  @Test
  void aFileAddedToAnAppendedPartitionAfterItsCopyRefusesTheCall() throws Exception {
    preModePartition("p=1");
    String late = key("p=1/000001_0");
    String xRecord = Generations.retiredKey(ROOT_DEST, "X");
    ForwardingStore store =
        new ForwardingStore(memory) {
          @Override
          public String replaceObject(String key, byte[] data, String etag) throws StoreException {
            String written = super.replaceObject(key, data, etag);
            if (key.equals(xRecord)
                && new String(data, StandardCharsets.UTF_8).contains("\"pending\"")) {
              put(late, "row an outside writer added"); // after X's last catch-up
            }
            return written;
          }
        };
    Publication x = statement("X", true, catalog.table());
    x.claim(store);
    put(rowKey("X", "p=1"), "row of X");
    assertThatThrownBy(() -> x.publish(store, Set.of("p=1")))
        .hasMessageContaining("changed after this statement copied them");
    assertThat(catalog.partitions.get("p=1")).isEqualTo(location("p=1"));
    assertThat(readByTheTable(late)).isTrue();
  }

  @Test
  void aFileLandingAfterAFailedStatementDiscardedItsGenerationIsRemovedUnderItsLapsedClaim()
      throws Exception {
    Publication x = statement("X", false, catalog.table());
    write(x, "X", "p=1");
    x.discardUnpublished(memory);
    assertThat(recordState("X")).isEqualTo(RetireRecord.State.CLAIMED);
    String lateCompletion = key(Generations.partitionDir("X", "p=1") + "000001_0");
    put(lateCompletion, "a queued completion lands after the discard");
    timePassesWithCleanups(3);
    assertThat(memory.keys()).doesNotContain(lateCompletion);
    assertThat(memory.keys()).noneMatch(k -> k.contains("/X"));
  }

  @Test
  void aTableOverTheRootKeepsOnlyWhatItReadsAndRecordsKeepWhatItNames() throws Exception {
    String old = preModePartition("p=1");
    ordinaryStatement("X", "p=1");
    catalog.others.add(URI.create("s3a://bucket/warehouse"));
    ordinaryStatement("Y", "p=1");
    timePassesWithCleanups(3);
    // The table over warehouse/ reads t/p=1/ but not t/_generations/: X's generation goes, the
    // old file stays, and stays recorded.
    assertThat(memory.keys()).contains(old).doesNotContain(rowKey("X", "p=1"));
    assertThat(recordedKeys()).contains(old);
    catalog.others.clear(); // DROP TABLE of the external table over warehouse/
    timePassesWithCleanups(2);
    assertThat(memory.keys()).doesNotContain(old);
  }

  @Test
  void aStatementWithAShorterGraceWaitsForTheGraceOfTheStatementThatRecorded() throws Exception {
    String old = preModePartition("p=1");
    ordinaryStatement("X", "p=1"); // grace 60 s
    memory.advanceClock(6_000);
    Configuration shortGrace = conf();
    shortGrace.set(Publication.GRACE, "5000ms");
    Publication y =
        new Publication(catalog.table(), ROOT, "Y", "statement Y", false, null, shortGrace)
            .withTiming(LeaseLock.Timing.manual(memory::clockMillis, memory::advanceClock));
    write(y, "Y", "p=2");
    y.publish(memory, Set.of("p=2"));
    assertThat(memory.keys()).contains(old); // 6 s after X's call, not X's 60 s
    timePassesWithCleanups(1);
    assertThat(memory.keys()).doesNotContain(old);
  }

  // ---- found by a second review of the fixes ---------------------------------------------------

  @Test
  void aFileRolledBackIntoTheTableByHandStaysForTheGraceOfTheStatementThatReplacesItAgain()
      throws Exception {
    ordinaryStatement("W", "p=1");
    String wFile = rowKey("W", "p=1");
    ordinaryStatement("X", "p=1");
    catalog.partitions.put("p=1", generation("W", "p=1")); // ALTER ... SET LOCATION by hand
    memory.advanceClock(GRACE + 1);
    ordinaryStatement("C1", "p=9"); // X's record due: W's file is the table's again
    memory.advanceClock(GRACE + 1);
    ordinaryStatement("Y", "p=1"); // takes W's file out of the table again
    assertThat(memory.keys()).contains(wFile);
    timePassesWithCleanups(1);
    assertThat(memory.keys()).doesNotContain(wFile);
  }

  @Test
  void aPlaceholdersEmptyDirectoryStaysForTheGraceOfTheStatementThatFillsItsPartition()
      throws Exception {
    preModePartition("p=1");
    twoStepPublicationFailingBetweenItsCalls();
    String marker = key(Generations.emptyDir("X", "p=2"));
    timePassesWithCleanups(2);
    memory.advanceClock(GRACE + LEASE + 1);
    ordinaryStatement("Y", "p=2");
    assertThat(memory.keys()).contains(marker);
    timePassesWithCleanups(1);
    assertThat(memory.keys()).doesNotContain(marker);
  }

  @Test
  void aLandedCallsSupersededFileThatAnotherTableReadsStaysRecordedUntilItIsRemoved()
      throws Exception {
    String old = preModePartition("p=1");
    catalog.others.add(URI.create("s3a://bucket/warehouse"));
    TestCatalog.Table xTable = catalog.table();
    xTable.onRelocate =
        (locations, apply) -> {
          apply.run();
          throw new IOException("alter_partitions: connection reset after the call landed");
        };
    Publication x = statement("X", false, xTable);
    write(x, "X", "p=1");
    assertThatThrownBy(() -> x.publish(memory, Set.of("p=1"))).isInstanceOf(IOException.class);
    x.discardUnpublished(memory);
    timePassesWithCleanups(3);
    assertThat(memory.keys()).contains(old);
    assertThat(recordedKeys()).contains(old);
    catalog.others.clear();
    timePassesWithCleanups(3);
    assertThat(memory.keys()).doesNotContain(old);
  }

  @Test
  void anotherStatementsStagingChangingUnderAnAppendedPartitionDoesNotRefuseTheAppend()
      throws Exception {
    preModePartition("p=1");
    String stagingTmp = key("p=1/.hive-staging_hive_Z/_task_tmp.-ext-10000/_tmp.000000_0");
    String stagingFinal = key("p=1/.hive-staging_hive_Z/_tmp.-ext-10000/000000_0");
    put(stagingTmp, "Z's task output, being committed");
    ForwardingStore store =
        new ForwardingStore(memory) {
          @Override
          public String copyObject(String sourceKey, String targetKey) throws StoreException {
            String etag = super.copyObject(sourceKey, targetKey);
            if (memory.keys().contains(stagingTmp)) {
              put(stagingFinal, "Z's task output, being committed");
              memory.deleteObjects(java.util.List.of(stagingTmp));
            }
            return etag;
          }
        };
    Publication x = statement("X", true, catalog.table());
    x.claim(store);
    put(rowKey("X", "p=1"), "row of X");
    x.publish(store, Set.of("p=1"));
    assertThat(catalog.partitions.get("p=1")).isEqualTo(generation("X", "p=1"));
  }

  @Test
  void aPlaceholderNamedByTheTableCostsNoScanOfTheMetastoreInLaterPasses() throws Exception {
    preModePartition("p=1");
    twoStepPublicationFailingBetweenItsCalls();
    timePassesWithCleanups(3);
    // The placeholder's directory is the table's: whoever fills p=2 records it.
    assertThat(memory.keys()).doesNotContain(Generations.retiredKey(ROOT_DEST, "X"));
  }
}
