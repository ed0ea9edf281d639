package dev.writeonce.core.testing.simulation;

import java.util.List;

/**
 * The thing under test in one schedule: real classes driven by the actors of a {@link Scheduler}
 * over simulated stores and clocks whose faults come from {@link FaultRelay}s, and the invariants
 * it checks, after every step and once every actor has ended. A world runs once.
 */
public interface World {

  /** Runs the schedule and returns the invariants it broke; none when everything held. */
  List<String> run() throws Exception;

  /** What the schedule did, for a failure's report; nothing by default. */
  default String describe() {
    return "";
  }

  /** Builds the world of a plan, traced (every request printed or recorded) or not. */
  @FunctionalInterface
  interface Factory<P extends Plan<P>> {
    World of(P plan, boolean traced);
  }
}
