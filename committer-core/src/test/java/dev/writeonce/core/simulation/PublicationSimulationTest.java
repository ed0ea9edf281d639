package dev.writeonce.core.simulation;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.simulation.PublicationPlan.CallFault;
import dev.writeonce.core.simulation.PublicationPlan.Engine;
import dev.writeonce.core.simulation.PublicationPlan.OtherTable;
import dev.writeonce.core.simulation.PublicationPlan.StatementPlan;
import dev.writeonce.core.simulation.PublicationPlan.Verb;
import dev.writeonce.core.testing.simulation.Simulation;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Metastore publish mode under the seeded simulation harness ({@link Simulation}): schedules of
 * Spark and Hive statements on one table at once, paused past their leases, crashing at any store
 * request, losing the answers of store requests and metastore calls, renewals failing with 503s,
 * another table on a location the table supersedes and an outside writer, each checked after every
 * step (see {@link PublicationSimulation}). A failing seed is shrunk and printed; each fault found
 * keeps its schedule below as a named test.
 */
class PublicationSimulationTest {

  /** Schedules per build; {@code -Dwriteonce.publication.schedules=N} runs more or fewer. */
  private static final int SCHEDULES = Integer.getInteger("writeonce.publication.schedules", 2_000);

  /** The first seed; {@code -Dwriteonce.publication.seed=S} replays from another. */
  private static final long FIRST_SEED = Long.getLong("writeonce.publication.seed", 20_261_128L);

  private static org.apache.log4j.Level libraryLevel;

  @BeforeAll
  static void quietLibraryLogs() {
    org.apache.log4j.Logger library = org.apache.log4j.Logger.getLogger("dev.writeonce");
    libraryLevel = library.getLevel();
    library.setLevel(org.apache.log4j.Level.OFF);
  }

  @AfterAll
  static void restoreLibraryLogs() {
    org.apache.log4j.Logger.getLogger("dev.writeonce").setLevel(libraryLevel);
  }

  /**
   * Hunts one kind of fault: {@code -Dwriteonce.publication.hunt=<text>} fails only on, and shrinks
   * only towards, schedules with a violation containing the text.
   */
  private static final String HUNT = System.getProperty("writeonce.publication.hunt", "");

  @Test
  void everyScheduleKeepsTheInvariantsOfPublishMode() throws Exception {
    new Simulation<>("publish mode", PublicationPlan::generate, PublicationSimulation::new)
        .schedules(SCHEDULES)
        .firstSeed(FIRST_SEED)
        .hunting(HUNT)
        .shrinkBudget(Boolean.getBoolean("writeonce.simulation.no-shrink") ? 0 : 1_000)
        .replayedWith("-Dwriteonce.publication.seed=%d -Dwriteonce.publication.schedules=1")
        .run();
  }

  // ---- schedules that found faults, kept -------------------------------------------------------

  /**
   * Without the fence: run-2 pauses past its lease after copying p=1, run-3 takes the lock over and
   * publishes p=1 with its row, run-2 resumes and points p=1 at its own copy, so run-3's row is
   * gone while both statements succeeded.
   */
  @Test
  void aStatementPausedPastItsLeaseFailsAndTheTakersRowsStay() throws Exception {
    assertKeepsTheInvariants(
        new PublicationPlan(
            20261148L,
            false,
            OtherTable.NONE,
            List.of(
                new StatementPlan(
                    2,
                    Engine.SPARK,
                    Verb.APPEND,
                    Set.of("p=1", "p=3"),
                    36531,
                    0,
                    10,
                    CallFault.NONE,
                    false),
                new StatementPlan(
                    3, Engine.HIVE, Verb.APPEND, Set.of("p=1"), 59211, 0, 0, CallFault.NONE, true)),
            0,
            0.0,
            0.0,
            false));
  }

  /**
   * Removal by location: an external table's static overwrite supersedes p=0, whose directory holds
   * another table's; one grace later the other table's file (written there by its producer) went.
   */
  @Test
  void removalLeavesAnotherTablesFilesUnderASupersededPartition() throws Exception {
    assertKeepsTheInvariants(
        new PublicationPlan(
            20261134L,
            false,
            OtherTable.UNDER_FIRST_PARTITION,
            List.of(
                new StatementPlan(
                    1, Engine.HIVE, Verb.STATIC, Set.of("p=2"), 0, 0, 0, CallFault.NONE, true)),
            0,
            0.0,
            0.0,
            true));
  }

  /**
   * One shared empty directory: run-3's static overwrite points p=1 and p=2 at one {@code empty/}
   * directory; run-2's append then routes its p=2 row by location to p=1.
   */
  @Test
  void everyPartitionAStatementEmptiesGetsADirectoryOfItsOwn() throws Exception {
    assertKeepsTheInvariants(
        new PublicationPlan(
            20261218L,
            true,
            OtherTable.NONE,
            List.of(
                new StatementPlan(
                    0,
                    Engine.HIVE,
                    Verb.DYNAMIC,
                    Set.of("p=1", "p=2"),
                    0,
                    0,
                    0,
                    CallFault.NONE,
                    false),
                new StatementPlan(
                    1, Engine.SPARK, Verb.APPEND, Set.of("p=3"), 0, 7, 0, CallFault.NONE, true),
                new StatementPlan(
                    2, Engine.SPARK, Verb.APPEND, Set.of("p=1"), 95642, 0, 0, CallFault.NONE, true),
                new StatementPlan(
                    3,
                    Engine.HIVE,
                    Verb.STATIC,
                    Set.of("p=0"),
                    67156,
                    0,
                    0,
                    CallFault.NONE,
                    false)),
            0,
            0.0,
            0.0,
            true));
  }

  /**
   * A load in place without the publication lock: run-2's file lands in p=0 while run-3's static
   * overwrite of the table is between its read and its call; the call drops it.
   */
  @Test
  void aLoadInPlaceTakesThePublicationLockOfItsTable() throws Exception {
    assertKeepsTheInvariants(
        new PublicationPlan(
            20261209L,
            false,
            OtherTable.NONE,
            List.of(
                new StatementPlan(
                    1,
                    Engine.HIVE,
                    Verb.IN_PLACE,
                    Set.of("p=1"),
                    86549,
                    0,
                    0,
                    CallFault.NONE,
                    false),
                new StatementPlan(
                    2,
                    Engine.HIVE,
                    Verb.IN_PLACE,
                    Set.of("p=0"),
                    87063,
                    0,
                    0,
                    CallFault.NONE,
                    true),
                new StatementPlan(
                    3,
                    Engine.SPARK,
                    Verb.STATIC,
                    Set.of("p=3"),
                    43506,
                    0,
                    0,
                    CallFault.NONE,
                    false)),
            0,
            0.0,
            0.0,
            false));
  }

  /**
   * A load in place pauses past its lease after reading its partition's location; a static
   * overwrite takes the lock over and replaces the partition; the load's file then lands where no
   * partition reads it. The load proves its lock once its files landed, and fails instead of
   * returning as if its rows were in the table.
   */
  @Test
  void aLoadInPlaceWhoseLockLapsedUnderItFailsInsteadOfLosingItsRowsQuietly() throws Exception {
    assertKeepsTheInvariants(
        new PublicationPlan(
            20268416L,
            false,
            OtherTable.NONE,
            List.of(
                new StatementPlan(
                    1, Engine.HIVE, Verb.IN_PLACE, Set.of("p=1"), 0, 0, 2, CallFault.NONE, false),
                new StatementPlan(
                    2, Engine.HIVE, Verb.STATIC, Set.of("p=1"), 0, 0, 0, CallFault.NONE, true)),
            0,
            0.0,
            0.0,
            true));
  }

  /**
   * A statement dies once its call landed; the next one supersedes its generation, which readers
   * sent there just before may still read for the grace period.
   */
  @Test
  void aGenerationWhoseStatementDiedAfterItsCallStaysForTheGraceOnceSuperseded() throws Exception {
    assertKeepsTheInvariants(
        new PublicationPlan(
            20261130L,
            true,
            OtherTable.NONE,
            List.of(
                new StatementPlan(
                    0,
                    Engine.SPARK,
                    Verb.APPEND,
                    Set.of("p=0"),
                    0,
                    0,
                    0,
                    CallFault.CRASH_AFTER,
                    false),
                new StatementPlan(
                    1,
                    Engine.HIVE,
                    Verb.DYNAMIC,
                    Set.of("p=0"),
                    10_000,
                    0,
                    0,
                    CallFault.NONE,
                    true)),
            0,
            0.0,
            0.0,
            false));
  }

  /**
   * Seeds whose schedules found faults while the mode was made safe: the three faults above, a Hive
   * load in place lost (20261284, 20262069), a producer's file deleted (20261132), a claim taken
   * for lapsed while its statement still wrote (20269310), and the pending record of a call that
   * never landed (20263340).
   */
  @ParameterizedTest
  @ValueSource(
      longs = {
        20261993L, 20261400L, 20261129L, 20261132L, 20261284L, 20262069L, 20261131L, 20269310L,
        20263340L
      })
  void schedulesThatFoundFaultsKeepTheInvariants(long seed) throws Exception {
    assertKeepsTheInvariants(PublicationPlan.generate(seed));
  }

  private static void assertKeepsTheInvariants(PublicationPlan plan) throws Exception {
    assertThat(new PublicationSimulation(plan).run()).as(plan.toString()).isEmpty();
  }

  @Test
  void aShrunkScheduleIsPrintedAsReadableSteps() {
    assertThat(PublicationPlan.generate(7).toString()).startsWith("seed 7").contains("run-0: ");
  }
}
