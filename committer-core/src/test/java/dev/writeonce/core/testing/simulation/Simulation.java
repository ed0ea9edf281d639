package dev.writeonce.core.testing.simulation;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongFunction;
import java.util.function.Predicate;

/**
 * The seed loop of a simulation: runs the worlds of N schedules from a first seed, each plan drawn
 * from its seed, on one thread or a few; the first failing schedule (or a few) is shrunk to a
 * simpler plan that still fails and reported with its seed, its plan, what a traced run of it
 * shows, and how to replay it. A hunt fails only on, and shrinks only towards, schedules with a
 * violation containing a text.
 *
 * @param <P> the world's plan
 */
public final class Simulation<P extends Plan<P>> {

  private final String name;
  private final LongFunction<P> planOf;
  private final World.Factory<P> worlds;
  private int schedules = 1_000;
  private long firstSeed;
  private int threads = 1;
  private int reported = 1;
  private int shrinkBudget = 1_000;
  private boolean shrinking = true;
  private String hunt = "";
  private String replay = "";

  /**
   * @param name what the simulation checks, for its reports ("the protocol", "publish mode")
   * @param planOf the plan of a seed
   * @param worlds the world of a plan
   */
  public Simulation(String name, LongFunction<P> planOf, World.Factory<P> worlds) {
    this.name = name;
    this.planOf = planOf;
    this.worlds = worlds;
  }

  public Simulation<P> schedules(int count) {
    this.schedules = count;
    return this;
  }

  public Simulation<P> firstSeed(long seed) {
    this.firstSeed = seed;
    return this;
  }

  /** Schedules run at once, each a world and a scheduler of its own. */
  public Simulation<P> threads(int count) {
    this.threads = count;
    return this;
  }

  /** Failing schedules collected before the loop stops; the first is shrunk. */
  public Simulation<P> reported(int count) {
    this.reported = count;
    return this;
  }

  /** Runs a shrink may take; 0 reports a failing plan as it was drawn. */
  public Simulation<P> shrinkBudget(int runs) {
    this.shrinkBudget = runs;
    this.shrinking = runs > 0;
    return this;
  }

  /** Fails only on violations containing the text; all of them when it is empty. */
  public Simulation<P> hunting(String text) {
    this.hunt = text;
    return this;
  }

  /** How to replay a failing seed, a format whose one argument is the seed. */
  public Simulation<P> replayedWith(String format) {
    this.replay = format;
    return this;
  }

  /** Whether violations are a failure: any one that the hunt looks for. */
  public boolean fails(List<String> violations) {
    return violations.stream().anyMatch(violation -> violation.contains(hunt));
  }

  /** Runs a plan's world; a world that ends with an exception broke the schedule. */
  public List<String> violationsOf(P plan, boolean traced) {
    return run(worlds.of(plan, traced));
  }

  private static List<String> run(World world) {
    try {
      return world.run();
    } catch (Exception | AssertionError e) {
      return List.of("the schedule ended with " + e);
    }
  }

  /**
   * Runs every schedule.
   *
   * @throws AssertionError naming the failing seeds, the first shrunk, traced and with its replay
   */
  public void run() throws Exception {
    long start = System.nanoTime();
    List<Failure<P>> failures = Collections.synchronizedList(new ArrayList<>());
    AtomicInteger ran = new AtomicInteger();
    if (threads <= 1) {
      for (int i = 0; i < schedules && failures.size() < reported; i++) {
        runOne(firstSeed + i, failures, ran);
      }
    } else {
      ExecutorService pool = Executors.newFixedThreadPool(threads);
      try {
        List<Future<?>> all = new ArrayList<>();
        for (int i = 0; i < schedules; i++) {
          long seed = firstSeed + i;
          all.add(
              pool.submit(
                  () -> {
                    if (failures.size() < reported) {
                      runOne(seed, failures, ran);
                    }
                  }));
        }
        for (Future<?> future : all) {
          future.get();
        }
      } finally {
        pool.shutdown();
        pool.awaitTermination(1, TimeUnit.MINUTES);
      }
    }
    if (!failures.isEmpty()) {
      throw new AssertionError(report(failures));
    }
    // Printed whatever the log level: the build's output states how many schedules ran.
    System.out.printf(
        "Simulation of %s: %d schedules from seed %d kept every invariant in %.1f s%n",
        name, ran.get(), firstSeed, (System.nanoTime() - start) / 1e9);
    if (ran.get() != schedules) {
      throw new AssertionError(ran.get() + " of " + schedules + " schedules ran");
    }
  }

  private record Failure<P>(long seed, P plan, List<String> violations, String described) {}

  private void runOne(long seed, List<Failure<P>> failures, AtomicInteger ran) {
    P plan = planOf.apply(seed);
    World world = worlds.of(plan, false);
    List<String> violations = run(world);
    if (fails(violations)) {
      System.out.println("seed " + seed + " fails: " + violations + "\n" + plan.printed());
      failures.add(new Failure<>(seed, plan, violations, world.describe()));
    }
    ran.incrementAndGet();
  }

  private String report(List<Failure<P>> failures) {
    List<Failure<P>> sorted = new ArrayList<>(failures);
    sorted.sort((a, b) -> Long.compare(a.seed(), b.seed()));
    Failure<P> first = sorted.get(0);
    StringBuilder text = new StringBuilder();
    text.append("seed ")
        .append(first.seed())
        .append(" breaks ")
        .append(name)
        .append(" (")
        .append(first.violations())
        .append(")");
    P shrunk = shrinking ? shrink(first.plan()) : first.plan();
    text.append(shrinking ? ".\nShrunk schedule:\n" : ".\nSchedule:\n").append(shrunk.printed());
    World traced = worlds.of(shrunk, true);
    text.append("\nviolations: ").append(run(traced));
    String described = traced.describe();
    if (!described.isEmpty()) {
      text.append('\n').append(described);
    }
    if (!replay.isEmpty()) {
      text.append("\nReplay: ").append(String.format(replay, first.seed()));
    }
    for (Failure<P> other : sorted.subList(1, sorted.size())) {
      text.append("\n\nseed ").append(other.seed()).append(": ").append(other.violations());
      text.append('\n').append(other.described());
    }
    return text.toString();
  }

  /** Takes simpler plans for as long as they still fail the hunt, within the budget of runs. */
  public P shrink(P failing) {
    return shrink(failing, this::fails);
  }

  /** Takes simpler plans for as long as their violations satisfy {@code stillFails}. */
  public P shrink(P failing, Predicate<List<String>> stillFails) {
    P current = failing;
    int runs = 0;
    boolean progress = true;
    while (progress && runs < shrinkBudget) {
      progress = false;
      for (P candidate : current.simpler()) {
        runs++;
        if (stillFails.test(violationsOf(candidate, false))) {
          current = candidate;
          progress = true;
          break;
        }
      }
    }
    System.out.println("Shrinking took " + runs + " runs");
    return current;
  }

  /**
   * Runs each seed's schedule a number of times and returns the seeds that broke an invariant in
   * any run: a schedule whose outcome varies from run to run is not replayable.
   */
  public List<Long> repeat(List<Long> seeds, int times) {
    List<Long> broken = new ArrayList<>();
    for (long seed : seeds) {
      int violated = 0;
      String first = null;
      for (int run = 0; run < times; run++) {
        List<String> violations = violationsOf(planOf.apply(seed), false);
        if (fails(violations)) {
          violated++;
          first = first == null ? violations.get(0) : first;
        }
      }
      System.out.printf(
          "seed %d: %d of %d runs broke an invariant%s%n",
          seed, violated, times, first == null ? "" : ": " + first);
      if (violated > 0) {
        broken.add(seed);
      }
    }
    return broken;
  }

  /** Replays one seed traced, prints what it did, and returns its violations. */
  public List<String> replay(long seed) {
    World world = worlds.of(planOf.apply(seed), true);
    List<String> violations = run(world);
    System.out.println(world.describe());
    return violations;
  }
}
