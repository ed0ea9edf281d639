package dev.writeonce.shim.simulation;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.testing.simulation.Simulation;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The rename shim under seeded schedules ({@link ShimSimulation}) of the simulation harness ({@link
 * Simulation}): {@code -Dwriteonce.shim.simulation.schedules=N} runs N of them from {@code
 * -Dwriteonce.shim.simulation.first-seed}, {@code -Dwriteonce.shim.simulation.seed=S} replays one
 * with every request traced, {@code -Dwriteonce.shim.simulation.seeds=S,T} with {@code ...repeat=R}
 * runs each of a list of seeds R times.
 */
class ShimSimulationTest {

  private static final int SCHEDULES =
      Integer.getInteger("writeonce.shim.simulation.schedules", 10_000);
  private static final long FIRST_SEED = Long.getLong("writeonce.shim.simulation.first-seed", 1);
  private static final int REPORTED = Integer.getInteger("writeonce.shim.simulation.reported", 5);

  private static Simulation<ShimPlan> simulation() {
    return new Simulation<>("the rename shim", ShimPlan::of, ShimSimulation::new)
        .schedules(SCHEDULES)
        .firstSeed(FIRST_SEED)
        .threads(Integer.getInteger("writeonce.shim.simulation.threads", 2))
        .reported(REPORTED)
        .replayedWith("-Dwriteonce.shim.simulation.seed=%d");
  }

  @Test
  void everyScheduleKeepsTheInvariants() throws Exception {
    String listed = System.getProperty("writeonce.shim.simulation.seeds");
    if (listed != null) {
      // Each seed of the list, run a number of times: how often it breaks an invariant.
      List<Long> seeds = new ArrayList<>();
      for (String seed : listed.split(",")) {
        seeds.add(Long.parseLong(seed.trim()));
      }
      int repeat = Integer.getInteger("writeonce.shim.simulation.repeat", 1);
      assertThat(simulation().repeat(seeds, repeat)).as("seeds that broke an invariant").isEmpty();
      return;
    }
    Long replay = Long.getLong("writeonce.shim.simulation.seed");
    if (replay != null) {
      assertThat(simulation().replay(replay)).as("seed " + replay).isEmpty();
      return;
    }
    simulation().run();
  }
}
