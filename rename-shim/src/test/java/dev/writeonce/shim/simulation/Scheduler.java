package dev.writeonce.shim.simulation;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Runs a schedule's actors (drivers, tasks, readers, and every task the shim hands its thread
 * pools) one at a time, each in a thread of its own: an actor runs until it sends a store request,
 * waits for another actor's work, or ends; then the scheduler picks, from a seeded random sequence,
 * which ready actor goes next. Every interleaving of store requests between actors is reachable,
 * and a seed replays one.
 *
 * <p>Threads that are not actors (S3A's own pools) run on behalf of the actor that waits for them
 * and pass the gate without a turn: only actors are scheduled.
 */
final class Scheduler {

  /** The most an actor may run without yielding before the schedule is declared stuck. */
  static final long STUCK_AFTER_MILLIS = 60_000;

  private enum State {
    READY,
    RUNNING,
    WAITING,
    DONE
  }

  /** One simulated thread. */
  final class Actor {
    final String name;
    final int order;
    private State state = State.READY;
    private final Condition turn = lock.newCondition();
    private Thread thread;
    private SimFuture<?> awaited;

    private Actor(String name, int order) {
      this.name = name;
      this.order = order;
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

  Scheduler(long seed) {
    this.random = new Random(seed);
  }

  /** Called before every choice, under no lock: the world's clock steps, another writer acts. */
  void beforeEachStep(Runnable action) {
    betweenSteps.add(action);
  }

  /** The seeded sequence, for the choices the world makes between steps. */
  Random random() {
    return random;
  }

  /** Errors that ended an actor: never a crash the schedule caused, always a fault. */
  List<String> errors() {
    return errors;
  }

  /** Steps taken so far. */
  int steps() {
    return steps;
  }

  /** Adds an actor, ready to run its body when first chosen; its thread starts now. */
  Actor spawn(String name, Runnable body) {
    lock.lock();
    try {
      Actor actor = new Actor(name, actors.size());
      actors.add(actor);
      Thread thread =
          new Thread(
              () -> {
                awaitTurn(actor);
                try {
                  body.run();
                } catch (Process.Crash crash) {
                  // the process died under this actor
                } catch (Error error) {
                  // No caller of a file system expects an Error: a stack overflow is an override
                  // that S3A calls back into. The schedule reports it.
                  errors.add(name + " ended with " + error);
                } catch (Throwable ended) {
                  // the actor's body reports what it must
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
  Actor current() {
    lock.lock();
    try {
      return byThread.get(Thread.currentThread());
    } finally {
      lock.unlock();
    }
  }

  /** Called by an actor before each store request: it yields, and goes on when chosen. */
  void yieldTurn() {
    lock.lock();
    try {
      Actor actor = byThread.get(Thread.currentThread());
      if (actor == null) {
        return; // S3A's own threads run for an actor that waits for them
      }
      actor.state = State.READY;
      running = null;
      idle.signalAll();
      awaitTurnLocked(actor);
    } finally {
      lock.unlock();
    }
  }

  /** An actor waits for a future another actor completes. */
  void await(SimFuture<?> future) {
    lock.lock();
    try {
      Actor actor = byThread.get(Thread.currentThread());
      if (actor == null) {
        while (!future.isDone()) {
          idle.awaitUninterruptibly();
        }
        return;
      }
      if (future.isDone()) {
        return;
      }
      actor.state = State.WAITING;
      actor.awaited = future;
      running = null;
      idle.signalAll();
      awaitTurnLocked(actor);
    } finally {
      lock.unlock();
    }
  }

  /** A future completed: the actors waiting for it become ready. */
  void completed(SimFuture<?> future) {
    lock.lock();
    try {
      for (Actor actor : actors) {
        if (actor.state == State.WAITING && actor.awaited == future) {
          actor.state = State.READY;
          actor.awaited = null;
        }
      }
      idle.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Runs until every actor has ended.
   *
   * @throws IllegalStateException when actors wait for each other with none ready (a deadlock), or
   *     one runs longer than {@link #STUCK_AFTER_MILLIS} without yielding
   */
  void run() {
    while (true) {
      for (Runnable action : betweenSteps) {
        action.run();
      }
      lock.lock();
      try {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(STUCK_AFTER_MILLIS);
        while (running != null) {
          long left = deadline - System.nanoTime();
          if (left <= 0) {
            throw new IllegalStateException("stuck: " + running + " never yielded; " + dump());
          }
          idle.awaitNanos(left);
        }
        List<Actor> ready = new ArrayList<>();
        boolean waiting = false;
        for (Actor actor : actors) {
          if (actor.state == State.READY) {
            ready.add(actor);
          } else if (actor.state == State.WAITING) {
            waiting = true;
          }
        }
        if (ready.isEmpty()) {
          if (waiting) {
            throw new IllegalStateException("deadlock: " + dump());
          }
          return;
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
  String dump() {
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
  }
}
