package dev.writeonce.core.testing.simulation;

/**
 * A simulated process: its threads die together and pause together. Each of its connections to the
 * store is a {@link FaultRelay} of its own.
 */
public final class SimProcess {
  private final String name;
  private volatile boolean dead;
  private volatile boolean paused;

  public SimProcess(String name) {
    this.name = name;
  }

  public String name() {
    return name;
  }

  public boolean dead() {
    return dead;
  }

  /** The process dies: nothing it sends from now on reaches the store. */
  public void die() {
    dead = true;
  }

  public boolean paused() {
    return paused;
  }

  void paused(boolean value) {
    paused = value;
  }
}
