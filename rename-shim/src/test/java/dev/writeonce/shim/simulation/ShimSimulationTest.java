package dev.writeonce.shim.simulation;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The rename shim under seeded schedules ({@link ShimSimulation}): {@code
 * -Dwriteonce.shim.simulation.schedules=N} runs N of them from {@code
 * -Dwriteonce.shim.simulation.first-seed}, {@code -Dwriteonce.shim.simulation.seed=S} replays one
 * with every request traced.
 */
class ShimSimulationTest {

  private static final int SCHEDULES =
      Integer.getInteger("writeonce.shim.simulation.schedules", 10_000);
  private static final long FIRST_SEED = Long.getLong("writeonce.shim.simulation.first-seed", 1);
  private static final int REPORTED = Integer.getInteger("writeonce.shim.simulation.reported", 5);

  @Test
  void everyScheduleKeepsTheInvariants() throws Exception {
    String listed = System.getProperty("writeonce.shim.simulation.seeds");
    if (listed != null) {
      // Each seed of the list, run a number of times: how often it breaks an invariant.
      int repeat = Integer.getInteger("writeonce.shim.simulation.repeat", 1);
      List<String> broken = new ArrayList<>();
      for (String seed : listed.split(",")) {
        int violated = 0;
        String first = null;
        for (int run = 0; run < repeat; run++) {
          List<String> violations =
              new ShimSimulation(Plan.of(Long.parseLong(seed.trim())), false).run();
          if (!violations.isEmpty()) {
            violated++;
            first = first == null ? violations.get(0) : first;
          }
        }
        System.out.printf(
            "seed %s: %d of %d runs broke an invariant%s%n",
            seed.trim(), violated, repeat, first == null ? "" : ": " + first);
        if (violated > 0) {
          broken.add(seed.trim());
        }
      }
      assertThat(broken).as("seeds that broke an invariant").isEmpty();
      return;
    }
    Long replay = Long.getLong("writeonce.shim.simulation.seed");
    if (replay != null) {
      ShimSimulation simulation = new ShimSimulation(Plan.of(replay), true);
      List<String> violations = simulation.run();
      System.out.println(simulation.describe());
      assertThat(violations).as("seed " + replay).isEmpty();
      return;
    }
    long start = System.nanoTime();
    List<String> failures = Collections.synchronizedList(new ArrayList<>());
    AtomicInteger ran = new AtomicInteger();
    ExecutorService threads =
        Executors.newFixedThreadPool(Integer.getInteger("writeonce.shim.simulation.threads", 2));
    List<Future<?>> all = new ArrayList<>();
    for (int i = 0; i < SCHEDULES; i++) {
      long seed = FIRST_SEED + i;
      all.add(
          threads.submit(
              () -> {
                if (failures.size() >= REPORTED) {
                  return;
                }
                ShimSimulation simulation = new ShimSimulation(Plan.of(seed), false);
                try {
                  List<String> violations = simulation.run();
                  if (!violations.isEmpty()) {
                    failures.add("seed " + seed + ": " + violations + "\n" + simulation.describe());
                  }
                } catch (Throwable e) {
                  failures.add("seed " + seed + ": " + e + "\n" + simulation.describe());
                }
                ran.incrementAndGet();
              }));
    }
    for (Future<?> future : all) {
      future.get();
    }
    threads.shutdown();
    threads.awaitTermination(1, TimeUnit.MINUTES);
    System.out.printf(
        "rename shim simulation: %d schedules from seed %d in %.1f s%n",
        ran.get(), FIRST_SEED, (System.nanoTime() - start) / 1e9);
    assertThat(failures)
        .as("schedules that broke an invariant (at most %d shown)", REPORTED)
        .isEmpty();
    assertThat(ran.get()).isEqualTo(SCHEDULES);
  }
}
