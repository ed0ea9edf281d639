package dev.writeonce.core.simulation;

import dev.writeonce.core.testing.simulation.Plan;
import dev.writeonce.core.testing.simulation.Scheduler;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * One schedule's cast and faults, generated from a seed: jobs on one or two destinations (some with
 * the same job id, some retrying an earlier job), their task attempts (failed, lost, duplicated),
 * drivers that commit, abort or commit twice, recovery run at any moment, crashes at any store
 * request, lost answers and transient errors. The interleaving comes from the same seed, in the
 * {@link Scheduler}. Plans shrink: {@link #simpler} lists the plans one step simpler.
 */
record ProtocolPlan(
    long seed,
    List<JobPlan> jobs,
    List<Integer> recoveries,
    double transientRate,
    double lostAnswerRate,
    boolean[] oldData)
    implements Plan<ProtocolPlan> {

  enum AttemptEnd {
    COMMIT,
    ABORT,
    VANISH
  }

  /** A task attempt: which task, its number, what it does, and the request it crashes at. */
  record AttemptPlan(int task, int attempt, AttemptEnd end, boolean required, int crashAt) {
    AttemptPlan withCrashAt(int n) {
      return new AttemptPlan(task, attempt, end, required, n);
    }
  }

  /**
   * A job: its destination (0 or 1), its job id (of 0 or 1: the same id twice is possible), the
   * conflict mode, its attempts, what its driver does, where the driver crashes, whether job setup
   * recovers unfinished jobs, and which earlier job it retries (-1: none).
   */
  record JobPlan(
      int index,
      int destination,
      int jobIdNumber,
      String mode,
      List<AttemptPlan> attempts,
      boolean abortInstead,
      boolean commitTwice,
      int driverCrashAt,
      boolean recoverOnSetup,
      int retryOf) {

    JobPlan with(List<AttemptPlan> newAttempts, boolean abort, boolean twice, int crash) {
      return new JobPlan(
          index,
          destination,
          jobIdNumber,
          mode,
          newAttempts,
          abort,
          twice,
          crash,
          recoverOnSetup,
          retryOf);
    }
  }

  static ProtocolPlan generate(long seed) {
    Random random = new Random(seed);
    int jobCount = 1 + random.nextInt(3);
    List<JobPlan> jobs = new ArrayList<>();
    String[] modes = {"append", "append", "replace", "fail"};
    for (int j = 0; j < jobCount; j++) {
      List<AttemptPlan> attempts = new ArrayList<>();
      int tasks = 1 + random.nextInt(3);
      for (int t = 0; t < tasks; t++) {
        int attempt = 0;
        // Failed or lost attempts before the one that commits, as a retrying engine runs them.
        while (random.nextInt(6) == 0 && attempt < 2) {
          AttemptEnd failed = random.nextBoolean() ? AttemptEnd.ABORT : AttemptEnd.VANISH;
          attempts.add(new AttemptPlan(t, attempt++, failed, true, crash(random, 12)));
        }
        attempts.add(new AttemptPlan(t, attempt++, AttemptEnd.COMMIT, true, crash(random, 12)));
        if (random.nextInt(5) == 0) {
          // A duplicate or speculative attempt that nobody waits for: it may commit late.
          AttemptEnd extra = AttemptEnd.values()[random.nextInt(3)];
          attempts.add(new AttemptPlan(t, attempt, extra, false, crash(random, 12)));
        }
      }
      int retryOf = j > 0 && random.nextInt(5) == 0 ? random.nextInt(j) : -1;
      JobPlan earlier = retryOf >= 0 ? jobs.get(retryOf) : null;
      jobs.add(
          new JobPlan(
              j,
              earlier != null ? earlier.destination() : random.nextInt(2),
              earlier != null ? earlier.jobIdNumber() : random.nextInt(2),
              modes[random.nextInt(modes.length)],
              attempts,
              random.nextInt(10) == 0,
              random.nextInt(8) == 0,
              crash(random, 40),
              random.nextBoolean(),
              retryOf));
    }
    List<Integer> recoveries = new ArrayList<>();
    int recoveryCount = random.nextInt(3);
    for (int r = 0; r < recoveryCount; r++) {
      recoveries.add(crash(random, 30));
    }
    double transientRate = random.nextInt(3) == 0 ? 0.03 : 0;
    double lostRate = random.nextInt(3) == 0 ? 0.03 : 0;
    return new ProtocolPlan(
        seed,
        jobs,
        recoveries,
        transientRate,
        lostRate,
        new boolean[] {random.nextBoolean(), random.nextBoolean()});
  }

  /**
   * Whether the jobs of this schedule name their files as MapReduce does, {@code part-r-0000T} in
   * every job, so that reruns and concurrent jobs on one destination share keys: one schedule in
   * three. Derived from the seed, so shrinking keeps it.
   */
  boolean sharedNames() {
    return seed % 3 == 0;
  }

  /**
   * Whether a job's driver, once crashed, is restarted as MapReduce restarts an application master
   * (attempt 1, same job id, a new run id), and whether the request it crashed at was in flight and
   * lands only after the restart's setup: one crashing driver in two. Derived, so that shrinking
   * the crash away removes the restart too.
   */
  boolean restarts(JobPlan job) {
    // YARN restarts application masters, and its job ids are unique: no other job of the
    // schedule has this one's id, which is all a restarted master can tell its earlier attempt by.
    return job.driverCrashAt() > 0
        && ((seed >>> 1) + job.index()) % 2 == 0
        && jobs.stream()
            .noneMatch(
                other -> other.index() != job.index() && other.jobIdNumber() == job.jobIdNumber());
  }

  /** A crash at a random request, one time in three; 0 for none. */
  private static int crash(Random random, int maxCall) {
    return random.nextInt(3) == 0 ? 1 + random.nextInt(maxCall) : 0;
  }

  /** Plans one step simpler than this one, for shrinking a failing schedule. */
  @Override
  public List<ProtocolPlan> simpler() {
    List<ProtocolPlan> simpler = new ArrayList<>();
    if (transientRate > 0) {
      simpler.add(new ProtocolPlan(seed, jobs, recoveries, 0, lostAnswerRate, oldData));
    }
    if (lostAnswerRate > 0) {
      simpler.add(new ProtocolPlan(seed, jobs, recoveries, transientRate, 0, oldData));
    }
    for (int r = 0; r < recoveries.size(); r++) {
      List<Integer> fewer = new ArrayList<>(recoveries);
      fewer.remove(r);
      simpler.add(new ProtocolPlan(seed, jobs, fewer, transientRate, lostAnswerRate, oldData));
      if (recoveries.get(r) != 0) {
        List<Integer> noCrash = new ArrayList<>(recoveries);
        noCrash.set(r, 0);
        simpler.add(new ProtocolPlan(seed, jobs, noCrash, transientRate, lostAnswerRate, oldData));
      }
    }
    for (int j = 0; j < jobs.size(); j++) {
      JobPlan job = jobs.get(j);
      int removed = job.index();
      if (jobs.stream().noneMatch(other -> other.retryOf() == removed)) {
        List<JobPlan> fewer = new ArrayList<>();
        for (JobPlan other : jobs) {
          if (other.index() != removed) {
            fewer.add(other);
          }
        }
        simpler.add(
            new ProtocolPlan(seed, fewer, recoveries, transientRate, lostAnswerRate, oldData));
      }
      List<JobPlan> variant;
      if (job.driverCrashAt() != 0) {
        variant = new ArrayList<>(jobs);
        variant.set(j, job.with(job.attempts(), job.abortInstead(), job.commitTwice(), 0));
        simpler.add(
            new ProtocolPlan(seed, variant, recoveries, transientRate, lostAnswerRate, oldData));
      }
      if (job.commitTwice() || job.abortInstead()) {
        variant = new ArrayList<>(jobs);
        variant.set(j, job.with(job.attempts(), false, false, job.driverCrashAt()));
        simpler.add(
            new ProtocolPlan(seed, variant, recoveries, transientRate, lostAnswerRate, oldData));
      }
      for (int a = 0; a < job.attempts().size(); a++) {
        AttemptPlan attempt = job.attempts().get(a);
        if (attempt.crashAt() != 0) {
          List<AttemptPlan> attempts = new ArrayList<>(job.attempts());
          attempts.set(a, attempt.withCrashAt(0));
          variant = new ArrayList<>(jobs);
          variant.set(
              j, job.with(attempts, job.abortInstead(), job.commitTwice(), job.driverCrashAt()));
          simpler.add(
              new ProtocolPlan(seed, variant, recoveries, transientRate, lostAnswerRate, oldData));
        }
        boolean lastOfTask =
            job.attempts().stream().filter(o -> o.task() == attempt.task()).count() == 1;
        if (!attempt.required() || !lastOfTask && attempt.end() != AttemptEnd.COMMIT) {
          List<AttemptPlan> attempts = new ArrayList<>(job.attempts());
          attempts.remove(a);
          variant = new ArrayList<>(jobs);
          variant.set(
              j, job.with(attempts, job.abortInstead(), job.commitTwice(), job.driverCrashAt()));
          simpler.add(
              new ProtocolPlan(seed, variant, recoveries, transientRate, lostAnswerRate, oldData));
        }
      }
    }
    return simpler;
  }

  @Override
  public String toString() {
    StringBuilder text = new StringBuilder();
    text.append("seed ").append(seed);
    text.append(", transient ")
        .append(transientRate)
        .append(", lost answers ")
        .append(lostAnswerRate);
    text.append(", old data in t0/t1: ").append(oldData[0]).append('/').append(oldData[1]);
    text.append(sharedNames() ? ", every job names its files part-r-0000T" : "");
    for (JobPlan job : jobs) {
      text.append("\n  job ").append(job.index()).append(": job_sim_000").append(job.jobIdNumber());
      text.append(" on t").append(job.destination()).append(", ").append(job.mode());
      if (job.retryOf() >= 0) {
        text.append(", retries job ").append(job.retryOf());
      }
      text.append(job.abortInstead() ? ", driver aborts" : ", driver commits");
      text.append(job.commitTwice() ? " twice" : "");
      text.append(
          job.driverCrashAt() > 0 ? ", driver crashes at request " + job.driverCrashAt() : "");
      text.append(job.recoverOnSetup() ? ", setup recovers" : "");
      text.append(
          restarts(job)
              ? ", its request in flight at the crash lands late, and the driver restarts as"
                  + " application attempt 1"
              : "");
      for (AttemptPlan attempt : job.attempts()) {
        text.append("\n    task ")
            .append(attempt.task())
            .append(" attempt ")
            .append(attempt.attempt());
        text.append(": ").append(attempt.end()).append(attempt.required() ? "" : " (unawaited)");
        text.append(attempt.crashAt() > 0 ? ", crashes at request " + attempt.crashAt() : "");
      }
    }
    for (int r = 0; r < recoveries.size(); r++) {
      text.append("\n  recovery ").append(r);
      text.append(recoveries.get(r) > 0 ? ", crashes at request " + recoveries.get(r) : "");
    }
    return text.toString();
  }
}
