package dev.writeonce.core.testing.simulation;

/**
 * A simulated process died: thrown at its crash and by every request after it. An Error, so that
 * the real component under test, which catches exceptions to clean up, cannot go on in a process
 * that is gone; the {@link Scheduler} takes an actor that ends with it for one the schedule ended.
 */
public final class Crash extends Error {
  private static final long serialVersionUID = 1L;

  public Crash(String process) {
    super(process + " crashed", null, false, false);
  }
}
