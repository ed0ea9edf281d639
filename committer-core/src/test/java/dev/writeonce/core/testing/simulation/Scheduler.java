package dev.writeonce.core.testing.simulation;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * Runs the actors of one schedule (drivers, tasks, statements, readers, recoveries, the threads of
 * a simulated pool) each in a thread of its own, but one at a time: an actor runs until its next
 * store request (or any other point its world makes a step), where it hands control back, and the
 * scheduler picks, from a seeded random sequence, which actor goes next. Every interleaving of
 * steps is thus reachable, and a seed replays one exactly.
 *
 * <p>An actor is either ready, blocked until a condition holds (its tasks ended, a future
 * completed), asleep until a condition holds or no other actor can go on (a paused process, whose
 * pause then ends by itself), or done. Threads that are not actors (a real component's own pools)
 * run on behalf of the actor that waits for them and pass every step without a turn.
 *
 * <p>Before each choice the scheduler runs the world's actions between steps ({@link
 * #beforeEachStep}: a clock step, another writer's request), which may draw from the same seeded
 * sequence ({@link #random}).
 */
public final class Scheduler {

  /** The most an actor may run without yielding before the schedule is declared stuck. */
  public static final long STUCK_AFTER_MILLIS = 60_000;

  private enum State {
    READY,
    RUNNING,
    BLOCKED,
    /** Blocked until its condition holds, or until no other actor can go on (a pause). */
    SLEEPING,
    DONE
  }

  /** One simulated thread. */
  public final class Actor {
    private final String name;
    private State state = State.READY;
    private BooleanSupplier until = () -> true;
    private final Condition turn = lock.newCondition();
    private Thread thread;

    private Actor(String name) {
      this.name = name;
    }

    public String name() {
      return name;
    }

    /** Read by conditions, which the scheduler evaluates while it holds the lock. */
    public boolean isDone() {
      return state == State.DONE;
    }

    @Override
    public String toString() {
      return name + " (" + state + ")";
    }
  }

  private final ReentrantLock lock = new ReentrantLock();
  private final Condition idle = lock.newCondition();
  private final Random random;
  private final List<Actor> actors = new ArrayList<>();
  private final Map<Thread, Actor> byThread = new HashMap<>();
  private Actor running;
  private int steps;
  private final List<Runnable> betweenSteps = new ArrayList<>();
  private final List<String> errors = Collections.synchronizedList(new ArrayList<>());

  public Scheduler(long seed) {
    this.random = new Random(seed);
  }

  /** Called before every choice, under no lock: the world's clock steps, another writer acts. */
  public void beforeEachStep(Runnable action) {
    betweenSteps.add(action);
  }

  /** The seeded sequence, for the choices the world makes between steps. */
  public Random random() {
    return random;
  }

  /**
   * Errors that ended an actor, other than a {@link Crash}: no caller of a real component expects
   * an Error (a stack overflow is an override that the component calls back into), so a world may
   * report each as a violation.
   */
  public List<String> errors() {
    return errors;
  }

  /** Steps taken so far. */
  public int steps() {
    lock.lock();
    try {
      return steps;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Adds an actor, ready to run its body when first chosen; its thread starts now and waits for its
   * turn. An actor may add others while it runs.
   */
  public Actor spawn(String name, Runnable body) {
    lock.lock();
    try {
      Actor actor = new Actor(name);
      actors.add(actor);
      Thread thread =
          new Thread(
              () -> {
                awaitTurn(actor);
                try {
                  body.run();
                } catch (Crash crash) {
                  // the process died under this actor
                } catch (Error error) {
                  errors.add(name + " ended with " + error);
                } catch (Throwable ended) {
                  // the actor's own code reports what it must; a failure ends it here
                } finally {
                  finish(actor);
                }
              },
              "sim-" + name);
      thread.setDaemon(true);
      actor.thread = thread;
      byThread.put(thread, actor);
      thread.start();
      return actor;
    } finally {
      lock.unlock();
    }
  }

  /** The actor the calling thread is, or null for a thread that is none. */
  public Actor current() {
    lock.lock();
    try {
      return byThread.get(Thread.currentThread());
    } finally {
      lock.unlock();
    }
  }

  /**
   * A step: the calling actor yields before its next store request (or other step), and goes on
   * when chosen. A thread that is no actor goes on at once.
   */
  public void yieldTurn() {
    yieldAs(null, State.READY, () -> true);
  }

  /**
   * A step taken as the given actor, from its own thread or from a thread that works for it while
   * it waits (a pool of the component under test): the calling thread goes on when the actor is
   * chosen.
   */
  public void yieldTurn(Actor actor) {
    yieldAs(actor, State.READY, () -> true);
  }

  /**
   * The calling actor may go on only once the condition holds (its tasks have ended, a future
   * completed); it yields even when the condition holds already. A thread that is no actor waits
   * until the condition holds after another actor's step.
   */
  public void blockUntil(BooleanSupplier condition) {
    yieldAs(null, State.BLOCKED, condition);
  }

  /** {@link #blockUntil(BooleanSupplier)} as the given actor, as {@link #yieldTurn(Actor)}. */
  public void blockUntil(Actor actor, BooleanSupplier condition) {
    yieldAs(actor, State.BLOCKED, condition);
  }

  /**
   * The calling actor stops for a while (a paused process): it goes on once the condition holds
   * (the clock passed its wake-up time), or earlier when no other actor can go on.
   */
  public void sleepUntil(BooleanSupplier condition) {
    yieldAs(null, State.SLEEPING, condition);
  }

  /** {@link #sleepUntil(BooleanSupplier)} as the given actor, as {@link #yieldTurn(Actor)}. */
  public void sleepUntil(Actor actor, BooleanSupplier condition) {
    yieldAs(actor, State.SLEEPING, condition);
  }

  /** A change that conditions may read: threads that are no actors look again. */
  public void changed() {
    lock.lock();
    try {
      idle.signalAll();
    } finally {
      lock.unlock();
    }
  }

  private void yieldAs(Actor as, State state, BooleanSupplier condition) {
    lock.lock();
    try {
      Actor actor = as != null ? as : byThread.get(Thread.currentThread());
      if (actor == null) {
        // A thread that is no actor runs for an actor that waits for it.
        while (state != State.READY && !condition.getAsBoolean()) {
          idle.awaitUninterruptibly();
        }
        return;
      }
      if (actor.state == State.DONE) {
        return;
      }
      actor.state = state;
      actor.until = condition;
      if (running == actor) {
        running = null;
      }
      idle.signalAll();
      awaitTurnLocked(actor);
    } finally {
      lock.unlock();
    }
  }

  /** Runs until every actor has ended. */
  public void run() {
    run(Long.MAX_VALUE);
  }

  /**
   * Runs until every actor has ended.
   *
   * @throws IllegalStateException when the schedule does not end within the time given, when actors
   *     wait for each other with none ready (a deadlock), or when one runs longer than {@link
   *     #STUCK_AFTER_MILLIS} without yielding
   */
  public void run(long timeoutMillis) {
    long start = System.nanoTime();
    long end =
        timeoutMillis == Long.MAX_VALUE
            ? Long.MAX_VALUE
            : start + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    while (true) {
      for (Runnable action : betweenSteps) {
        action.run();
      }
      lock.lock();
      try {
        long now = System.nanoTime();
        long stuck = now + TimeUnit.MILLISECONDS.toNanos(STUCK_AFTER_MILLIS);
        while (running != null) {
          long left = Math.min(end, stuck) - System.nanoTime();
          if (left <= 0) {
            throw new IllegalStateException(
                end <= stuck
                    ? "the schedule did not end: " + actors
                    : "stuck: " + running + " never yielded; " + dump());
          }
          idle.awaitNanos(left);
        }
        List<Actor> ready = new ArrayList<>();
        for (Actor actor : actors) {
          if (actor.state == State.READY
              || (actor.state == State.BLOCKED || actor.state == State.SLEEPING)
                  && actor.until.getAsBoolean()) {
            ready.add(actor);
          }
        }
        if (ready.isEmpty()) {
          for (Actor actor : actors) {
            if (actor.state == State.SLEEPING) {
              ready.add(actor); // nobody else moves the clock: the sleepers wake
            }
          }
        }
        if (ready.isEmpty()) {
          if (actors.stream().allMatch(Actor::isDone)) {
            return;
          }
          throw new IllegalStateException("no actor can go on (a deadlock): " + dump());
        }
        Actor chosen = ready.get(random.nextInt(ready.size()));
        chosen.state = State.RUNNING;
        running = chosen;
        steps++;
        chosen.turn.signal();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted", e);
      } finally {
        lock.unlock();
      }
    }
  }

  private void awaitTurn(Actor actor) {
    lock.lock();
    try {
      awaitTurnLocked(actor);
    } finally {
      lock.unlock();
    }
  }

  private void awaitTurnLocked(Actor actor) {
    while (actor.state != State.RUNNING) {
      actor.turn.awaitUninterruptibly();
    }
  }

  private void finish(Actor actor) {
    lock.lock();
    try {
      actor.state = State.DONE;
      byThread.remove(actor.thread);
      if (running == actor) {
        running = null;
      }
      idle.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /** The actors and, for those not done, where their threads are. */
  public String dump() {
    lock.lock();
    try {
      StringBuilder out = new StringBuilder();
      for (Actor actor : actors) {
        out.append("\n  ").append(actor);
        if (actor.state != State.DONE && actor.thread != null) {
          for (StackTraceElement frame : actor.thread.getStackTrace()) {
            out.append("\n      at ").append(frame);
          }
        }
      }
      return out.toString();
    } finally {
      lock.unlock();
    }
  }
}
