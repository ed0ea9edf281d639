package dev.writeonce.core.simulation;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * Runs the actors of one schedule (drivers, task attempts, recovery) each in a thread of its own,
 * but one at a time: an actor runs until its next store request, where it hands control back and
 * the scheduler picks, from a seeded random sequence, which actor goes next. Every interleaving of
 * store requests is thus reachable, and a seed replays one exactly.
 */
final class Scheduler {

  enum State {
    WAITING,
    RUNNING,
    BLOCKED,
    /** Blocked until its condition holds, or until no other actor can go on (a pause). */
    SLEEPING,
    DONE
  }

  /** One simulated process. */
  final class Actor {
    final String name;
    private State state = State.WAITING;
    private BooleanSupplier until = () -> true;
    private final Condition chosen = lock.newCondition();
    private final Thread thread;

    Actor(String name, Runnable body) {
      this.name = name;
      this.thread =
          new Thread(
              () -> {
                awaitTurn(this);
                try {
                  body.run();
                } catch (Throwable t) {
                  // the actor's own code reports what it must; a crash ends it here
                } finally {
                  finish(this);
                }
              },
              "sim-" + name);
      thread.setDaemon(true);
    }

    /** Read by conditions, which the scheduler evaluates while it holds the lock. */
    boolean isDone() {
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
  private Actor running;

  Scheduler(long seed) {
    this.random = new Random(seed);
  }

  Actor add(String name, Runnable body) {
    Actor actor = new Actor(name, body);
    actors.add(actor);
    return actor;
  }

  /** Called by an actor before each store request: waits until it is chosen to go on. */
  void pause(Actor actor) {
    yieldAs(actor, State.WAITING, () -> true);
  }

  /** Called by an actor that may go on only once a condition holds (its tasks have ended). */
  void blockUntil(Actor actor, BooleanSupplier condition) {
    yieldAs(actor, State.BLOCKED, condition);
  }

  /**
   * Called by an actor that stops for a while (a paused process): it goes on once the condition
   * holds (the clock passed its wake-up time), or earlier when no other actor can go on.
   */
  void sleepUntil(Actor actor, BooleanSupplier condition) {
    yieldAs(actor, State.SLEEPING, condition);
  }

  private void yieldAs(Actor actor, State state, BooleanSupplier condition) {
    lock.lock();
    try {
      if (actor.state == State.DONE) {
        return;
      }
      actor.state = state;
      actor.until = condition;
      if (running == actor) {
        running = null;
        idle.signal();
      }
      awaitTurnLocked(actor);
    } finally {
      lock.unlock();
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
    while (running != actor) {
      actor.chosen.awaitUninterruptibly();
    }
    actor.state = State.RUNNING;
  }

  private void finish(Actor actor) {
    lock.lock();
    try {
      actor.state = State.DONE;
      if (running == actor) {
        running = null;
      }
      idle.signal();
    } finally {
      lock.unlock();
    }
  }

  /** Runs every actor to its end; fails when the schedule does not end within the time given. */
  void run(long timeoutMillis) throws InterruptedException {
    actors.forEach(a -> a.thread.start());
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    lock.lock();
    try {
      while (true) {
        while (running != null) {
          long left = deadline - System.nanoTime();
          if (left <= 0) {
            throw new IllegalStateException("the schedule did not end: " + actors);
          }
          idle.awaitNanos(left);
        }
        List<Actor> runnable = new ArrayList<>();
        for (Actor actor : actors) {
          if (actor.state == State.WAITING
              || (actor.state == State.BLOCKED || actor.state == State.SLEEPING)
                  && actor.until.getAsBoolean()) {
            runnable.add(actor);
          }
        }
        if (runnable.isEmpty()) {
          for (Actor actor : actors) {
            if (actor.state == State.SLEEPING) {
              runnable.add(actor); // nobody else moves the clock: the sleepers wake
            }
          }
        }
        if (runnable.isEmpty()) {
          if (actors.stream().allMatch(Actor::isDone)) {
            return;
          }
          throw new IllegalStateException("no actor can go on: " + actors);
        }
        running = runnable.get(random.nextInt(runnable.size()));
        running.chosen.signal();
      }
    } finally {
      lock.unlock();
    }
  }
}
