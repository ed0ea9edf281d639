package dev.writeonce.core.testing.simulation;

import java.util.List;

/**
 * One schedule's cast and faults, drawn from its seed; the same seed drives the {@link Scheduler}'s
 * interleaving, so a seed replays a schedule. A plan that can shrink lists the plans one step
 * simpler, from which {@link Simulation} keeps those that still fail.
 *
 * @param <P> the plan type itself
 */
public interface Plan<P extends Plan<P>> {

  /** The seed the plan was drawn from, and that the scheduler's interleaving comes from. */
  long seed();

  /** Plans one step simpler than this one, for shrinking a failing schedule; none by default. */
  default List<P> simpler() {
    return List.of();
  }

  /** The plan as a reader of a failure's report wants it: readable steps. */
  default String printed() {
    return toString();
  }
}
