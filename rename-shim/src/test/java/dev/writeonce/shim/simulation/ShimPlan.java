package dev.writeonce.shim.simulation;

import dev.writeonce.core.testing.simulation.Plan;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * One schedule's scenario, drawn from its seed: the jobs, their tasks and attempts, the statement
 * Hive moves, the readers, and the faults. The seed also drives the scheduler's choices, so a seed
 * replays a schedule; a plan can be narrowed by hand (fewer jobs, fewer faults) into a regression
 * test.
 */
record ShimPlan(
    long seed,
    List<JobPlan> jobs,
    HivePlan hive,
    int readers,
    boolean clockSteps,
    boolean foreignWrites,
    Faults faults,
    int pageSize)
    implements Plan<ShimPlan> {

  /**
   * A FileOutputCommitter job on its own output, {@code out<index>}: its tasks, how its job's own
   * settings differ from the process's, whether the driver's file system cache is disabled, and
   * whether the driver closes its file systems between the job commit and what follows it.
   */
  record JobPlan(
      int index,
      int algorithm,
      List<TaskPlan> tasks,
      boolean partitioned,
      boolean sharedNames,
      boolean successMarker,
      boolean cleanupSkipped,
      boolean cleanupFailuresIgnored,
      boolean cacheDisabled,
      boolean oldFiles,
      boolean dynamicOverwrite,
      boolean hiveInsert,
      boolean closesBetween) {
    String output() {
      return "out" + index;
    }

    /** Whether FileOutputCommitter writes into a temporary directory moved into place after. */
    boolean staged() {
      return dynamicOverwrite || hiveInsert;
    }

    /**
     * Where FileOutputCommitter writes: the output; for Spark's dynamic partition overwrite its
     * staging directory, whose partitions replace the output's after the job commit; for Spark's
     * insert into a Hive table, Hive's staging directory, whose files Hive's client moves into the
     * table after the job commit.
     */
    String committerOutput() {
      if (dynamicOverwrite) {
        return output() + "/.spark-staging-6f1c2d3e-0000-4000-8000-00000000000" + index;
      }
      if (hiveInsert) {
        return output() + "/.hive-staging_hive_2026-11-26_00-00-00_000_" + index + "/-ext-10000";
      }
      return output();
    }
  }

  /** A task: each attempt fails before its commit or commits; the last commits unless all fail. */
  record TaskPlan(int task, int files, List<Boolean> attemptFails) {}

  /**
   * A Hive statement adding {@code files} files to table {@code t}, whose directory already holds
   * {@code existing} files, among them the statement's first file name.
   */
  record HivePlan(int files, int existing) {}

  /**
   * The faults: a completion that fails (by a 5xx past retries, or because another tool aborted its
   * upload), request rates of transient failures, lost answers and short pages, and a crash of the
   * driver at one of its requests (0: none).
   */
  record Faults(
      int failedCompletion,
      boolean failedByForeignAbort,
      double transientRate,
      double lostAnswerRate,
      double shortPageRate,
      int driverCrashAt,
      boolean crashAfterApplying) {
    static final Faults NONE = new Faults(-1, false, 0, 0, 0, 0, false);
  }

  /**
   * Whether a task's committed attempt runs again under the same attempt id, one in eight; drawn
   * from the seed apart from the plan's other choices, which stay as they were.
   */
  boolean reruns(int job, int task) {
    return new Random(seed * 1_000_003L + job * 1_009L + task).nextInt(8) == 0;
  }

  /** The plan of a seed. */
  static ShimPlan of(long seed) {
    Random random = new Random(seed * 7919 + 17);
    List<JobPlan> jobs = new ArrayList<>();
    HivePlan hive = null;
    if (random.nextInt(6) == 0) {
      hive = new HivePlan(1 + random.nextInt(3), 1 + random.nextInt(6));
    } else {
      int count = random.nextInt(5) == 0 ? 2 : 1;
      for (int j = 0; j < count; j++) {
        jobs.add(job(j, random));
      }
    }
    boolean anyFault = random.nextInt(3) > 0;
    Faults faults =
        anyFault
            ? new Faults(
                random.nextInt(3) == 0 ? random.nextInt(6) : -1,
                random.nextBoolean(),
                random.nextInt(4) == 0 ? 0.02 : 0,
                random.nextInt(4) == 0 ? 0.02 : 0,
                random.nextInt(3) == 0 ? 0.5 : 0,
                random.nextInt(4) == 0 ? 1 + random.nextInt(80) : 0,
                random.nextBoolean())
            : Faults.NONE;
    return new ShimPlan(
        seed,
        jobs,
        hive,
        random.nextInt(3) == 0 ? 0 : 1 + random.nextInt(2),
        random.nextBoolean(),
        random.nextInt(4) == 0,
        faults,
        // Drawn last, so that a seed's other choices stay as they were: half the schedules take
        // pages of 1 to 4 objects, so that their job attempts are listed task by task and their
        // records deleted beside the merge.
        random.nextBoolean() ? -1 : 1 + random.nextInt(4));
  }

  private static JobPlan job(int index, Random random) {
    List<TaskPlan> tasks = new ArrayList<>();
    int count = 1 + random.nextInt(3);
    for (int t = 0; t < count; t++) {
      List<Boolean> attempts = new ArrayList<>();
      attempts.add(random.nextInt(5) == 0);
      if (attempts.get(0) || random.nextInt(8) == 0) {
        attempts.add(random.nextInt(6) == 0);
      }
      tasks.add(new TaskPlan(t, random.nextInt(4), attempts));
    }
    int algorithm = random.nextInt(4) == 0 ? 2 : 1;
    boolean sharedNames = random.nextInt(4) == 0;
    boolean overwrite = random.nextInt(4) == 0;
    return new JobPlan(
        index,
        algorithm,
        tasks,
        random.nextBoolean(),
        // FileOutputCommitter v2 commits tasks into the output at once: two tasks of one name race
        // there with or without the shim (the last wins on S3A), which no engine does.
        sharedNames && algorithm == 1,
        random.nextInt(3) > 0,
        random.nextInt(3) == 0,
        random.nextInt(3) == 0,
        random.nextInt(5) == 0,
        random.nextBoolean(),
        overwrite,
        !overwrite && random.nextInt(4) == 0,
        random.nextInt(3) == 0);
  }
}
