package dev.writeonce.spark.streaming;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.testing.simulation.Simulation;
import dev.writeonce.spark.streaming.CheckpointSimulation.CheckpointPlan;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The checkpoint file manager under the seeded simulation harness ({@link Simulation}): runs of one
 * query writing its offsets log at once, restarting, and losing the answers of their requests (see
 * {@link CheckpointSimulation}). A failing seed is shrunk and printed.
 */
class CheckpointSimulationTest {

  /** Schedules per build; {@code -Dwriteonce.checkpoint.schedules=N} runs more or fewer. */
  private static final int SCHEDULES = Integer.getInteger("writeonce.checkpoint.schedules", 2_000);

  /** The first seed; {@code -Dwriteonce.checkpoint.seed=S} replays from another. */
  private static final long FIRST_SEED = Long.getLong("writeonce.checkpoint.seed", 20_261_129L);

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

  private static Simulation<CheckpointPlan> simulation(boolean plant) {
    return new Simulation<>(
            "the checkpoint file manager",
            seed -> CheckpointPlan.generate(seed, plant),
            CheckpointSimulation::new)
        .firstSeed(FIRST_SEED)
        .replayedWith("-Dwriteonce.checkpoint.seed=%d -Dwriteonce.checkpoint.schedules=1");
  }

  @Test
  void everyScheduleWritesEachBatchByExactlyOneRun() throws Exception {
    long start = System.nanoTime();
    simulation(false).schedules(SCHEDULES).run();
    System.out.printf(
        "checkpoint simulation: %d schedules in %.1f s%n",
        SCHEDULES, (System.nanoTime() - start) / 1e9);
  }

  /** The fault the simulation exists to find: a store that ignores If-None-Match. */
  @Test
  void aStoreThatIgnoresTheConditionIsFoundWritingOneBatchByTwoRuns() {
    Simulation<CheckpointPlan> planted = simulation(true).shrinkBudget(0);
    boolean found = false;
    long seed = FIRST_SEED;
    for (; seed < FIRST_SEED + 200 && !found; seed++) {
      List<String> violations = planted.violationsOf(CheckpointPlan.generate(seed, true), false);
      found = violations.stream().anyMatch(v -> v.contains("written by runs"));
    }
    assertThat(found).as("a double write found within 200 schedules").isTrue();
    System.out.printf(
        "checkpoint simulation: the planted double write found by schedule %d%n",
        seed - FIRST_SEED);
  }
}
