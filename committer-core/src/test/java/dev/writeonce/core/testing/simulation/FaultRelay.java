package dev.writeonce.core.testing.simulation;

import java.util.Random;
import java.util.function.Consumer;

/**
 * One connection of a simulated process to the store, through which every world sends its requests:
 * before each, the actor yields to the {@link Scheduler} (a step), waits while its process is
 * paused, and then the relay decides from its seeded sequence and its {@link Faults} what becomes
 * of the request. The world applies the decision to its store (an SDK client's hook, a gateway), so
 * that a fault added here reaches every world.
 */
public final class FaultRelay {

  /** What becomes of one request. */
  public enum Fate {
    /** It reaches the store and its answer comes back. */
    PROCEED,
    /** A transient failure: it is not sent. */
    FAIL_UNSENT,
    /** It takes effect and its answer is lost. */
    LOSE_ANSWER,
    /** The process was dead before it sent the request: nothing is sent. */
    DEAD,
    /** The process dies at this request, which is not sent. */
    CRASH,
    /** The process dies at this request, which takes effect. */
    CRASH_APPLIED,
    /** The process dies at this request, which reaches the store later. */
    CRASH_LANDS_LATE;

    /** Whether the process is dead once the request is decided. */
    public boolean crashed() {
      return this == DEAD || this == CRASH || this == CRASH_APPLIED || this == CRASH_LANDS_LATE;
    }
  }

  /** A request's number on this connection (0 when nothing was sent) and what becomes of it. */
  public record Request(int number, Fate fate) {}

  private final Scheduler scheduler;
  private final Scheduler.Actor owner;
  private final SimProcess process;
  private final SimClock clock;
  private final Faults faults;
  private final Random random;
  private final Consumer<String> trace;
  private int requests;

  /**
   * @param scheduler the schedule's scheduler, or null for a connection outside it (an operator
   *     after the schedule): no steps, no pauses
   * @param owner the actor whose steps the connection's requests are, from whichever thread they
   *     come (a pool working for it); null when each is the calling thread's, and a thread that is
   *     no actor passes without a step
   * @param trace where the relay notes a pause, or null
   */
  public FaultRelay(
      Scheduler scheduler,
      Scheduler.Actor owner,
      SimProcess process,
      SimClock clock,
      Faults faults,
      long seed,
      Consumer<String> trace) {
    this.scheduler = scheduler;
    this.owner = owner;
    this.process = process;
    this.clock = clock;
    this.faults = faults;
    this.random = new Random(seed);
    this.trace = trace;
  }

  public SimProcess process() {
    return process;
  }

  /** The requests this connection has sent, or tried to. */
  public synchronized int requests() {
    return requests;
  }

  /** Takes the step before a request and decides what becomes of it. */
  public Request next() {
    if (process.dead()) {
      return new Request(0, Fate.DEAD);
    }
    if (scheduler != null) {
      scheduler.yieldTurn(owner);
      // Another thread of this process paused it: nothing is sent until it goes on.
      if (process.paused()) {
        scheduler.blockUntil(owner, () -> !process.paused() || process.dead());
      }
      if (process.dead()) {
        return new Request(0, Fate.DEAD);
      }
    }
    int n;
    double roll;
    int tick;
    synchronized (this) {
      n = ++requests;
      roll = random.nextDouble();
      tick = faults.tickMillis() > 0 ? random.nextInt(faults.tickMillis()) : 0;
    }
    if (n == faults.pauseAt() && scheduler != null) {
      pauseProcess();
    }
    if (process.dead()) {
      return new Request(n, Fate.DEAD);
    }
    if (tick > 0) {
      clock.advance(tick);
    }
    if (n == faults.crashAt()) {
      process.die();
      return new Request(
          n,
          switch (faults.atCrash()) {
            case UNSENT -> Fate.CRASH;
            case APPLIED -> Fate.CRASH_APPLIED;
            case LANDS_LATE -> Fate.CRASH_LANDS_LATE;
          });
    }
    if (roll < faults.transientRate()) {
      return new Request(n, Fate.FAIL_UNSENT);
    }
    if (roll < faults.transientRate() + faults.lostAnswerRate()) {
      return new Request(n, Fate.LOSE_ANSWER);
    }
    return new Request(n, Fate.PROCEED);
  }

  /** The entries a listing's page holds: fewer than asked, at the rate of short pages. */
  public synchronized int pageSize(int requested) {
    if (faults.shortPageRate() > 0 && random.nextDouble() < faults.shortPageRate()) {
      return 1 + random.nextInt(Math.max(1, Math.min(requested, 3)));
    }
    return requested;
  }

  /**
   * The process stops: none of its threads sends anything until the clock has moved on by the
   * pause, or until no other actor can go on, when the pause ends by itself.
   */
  private void pauseProcess() {
    long resumeAt = clock.millis() + faults.pauseMillis();
    process.paused(true);
    if (trace != null) {
      trace.accept(process.name() + " pauses until " + resumeAt);
    }
    scheduler.sleepUntil(owner, () -> clock.millis() >= resumeAt);
    long behind = resumeAt - clock.millis();
    if (behind > 0) {
      clock.advance(behind);
    }
    process.paused(false);
  }
}
