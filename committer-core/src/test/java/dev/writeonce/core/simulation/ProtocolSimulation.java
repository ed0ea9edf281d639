package dev.writeonce.core.simulation;

import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.engine.JobCommitEngine;
import dev.writeonce.core.engine.JobInspector;
import dev.writeonce.core.engine.JobLayout;
import dev.writeonce.core.errors.CommitStateUnknownException;
import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.errors.JobCommittedException;
import dev.writeonce.core.json.SuccessDataFormat;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.model.JobManifest;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.SuccessData;
import dev.writeonce.core.testing.simulation.Faults;
import dev.writeonce.core.testing.simulation.Scheduler;
import dev.writeonce.core.testing.simulation.World;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.JobStatus;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.task.JobContextImpl;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;

/**
 * The protocol's world: runs one {@link ProtocolPlan} against the in-memory store with the
 * library's committer lifecycle and engine, then recovers whatever is left, as an operator would,
 * and checks the protocol's invariants. Returns the violations found; none when the protocol held.
 */
final class ProtocolSimulation implements World {

  static final Destination[] DESTINATIONS = {
    Destination.of("s3a://bucket/t0/"), Destination.of("s3a://bucket/t1/")
  };

  /** What a driver told its engine. */
  enum Report {
    NONE,
    SUCCEEDED,
    FAILED,
    COMMITTED_UNFINISHED,
    UNKNOWN,
    CRASHED
  }

  /** A job's progress as its tasks and the checker see it. */
  private static final class JobRun {
    final ProtocolPlan.JobPlan plan;
    final JobConf conf = new JobConf(false);
    final SimCommitter.LocalFiles files = new SimCommitter.LocalFiles();
    volatile boolean setupEnded;
    volatile boolean setupOk;
    volatile Report report = Report.NONE;
    Scheduler.Actor driver;
    final List<Scheduler.Actor> required = new ArrayList<>();

    JobRun(ProtocolPlan.JobPlan plan) {
      this.plan = plan;
    }

    /**
     * The name of a task's file: unique to the job, or, in schedules whose jobs share file names,
     * MapReduce's name for it, the same in every job.
     */
    String fileName(int task, boolean sharedNames) {
      return sharedNames ? "part-r-0000" + task : "part-j" + plan.index() + "-" + task;
    }

    boolean wrote(String key, boolean sharedNames) {
      return !sharedNames && key.contains("/part-j" + plan.index() + "-");
    }
  }

  private static final org.apache.hadoop.conf.Configuration SINGLE_THREADED =
      new org.apache.hadoop.conf.Configuration(false);

  static {
    SINGLE_THREADED.setInt(CommitterConfig.COMMIT_THREADS, 1);
  }

  private final ProtocolPlan plan;
  private final SharedStore world;
  private final List<JobRun> runs = new ArrayList<>();

  /** The operator who recovers the destinations once every actor has ended; no faults. */
  private final SimStore operator;

  /** {@code -Dwriteonce.simulation.trace=true} prints every request. */
  ProtocolSimulation(ProtocolPlan plan) {
    this(plan, Boolean.getBoolean("writeonce.simulation.trace"));
  }

  ProtocolSimulation(ProtocolPlan plan, boolean traced) {
    this.plan = plan;
    this.world = new SharedStore(traced);
    this.operator = new SimStore(world, null, null, "operator", Faults.NONE, 0);
  }

  @Override
  public List<String> run() {
    for (int d = 0; d < DESTINATIONS.length; d++) {
      if (plan.oldData()[d]) {
        try {
          world.memory.putObject(DESTINATIONS[d].keyOf("old-" + d), bytes("old"), false);
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      }
    }
    Scheduler scheduler = new Scheduler(plan.seed());
    for (ProtocolPlan.JobPlan job : plan.jobs()) {
      runs.add(new JobRun(job));
    }
    for (JobRun run : runs) {
      addDriver(scheduler, run);
      Map<Integer, Scheduler.Actor> lastOfTask = new HashMap<>();
      for (ProtocolPlan.AttemptPlan attempt : run.plan.attempts()) {
        Scheduler.Actor previous = attempt.required() ? lastOfTask.get(attempt.task()) : null;
        Scheduler.Actor actor = addAttempt(scheduler, run, attempt, previous);
        if (attempt.required()) {
          lastOfTask.put(attempt.task(), actor);
          run.required.add(actor);
        }
      }
    }
    for (int r = 0; r < plan.recoveries().size(); r++) {
      int index = r;
      scheduler.spawn(
          "recovery " + r,
          () -> {
            SimStore store =
                store(scheduler, "recovery " + index, plan.recoveries().get(index), 1000 + index);
            try {
              recoverAll(store);
            } catch (Exception e) {
              // a recovery that fails is run again later
            }
          });
    }
    scheduler.run(20_000);

    for (int pass = 0; pass < 2; pass++) {
      try {
        recoverAll(operator);
      } catch (Exception e) {
        world.violation("the final recovery failed: " + e);
      }
    }
    check();
    return world.violations;
  }

  private SimStore store(Scheduler scheduler, String name, int crashAt, long salt) {
    return store(scheduler, name, crashAt, salt, false);
  }

  private SimStore store(
      Scheduler scheduler, String name, int crashAt, long salt, boolean landsLate) {
    // Called in the actor's thread: its store's requests are its steps, from whichever thread.
    return new SimStore(
        world,
        scheduler,
        scheduler.current(),
        name,
        Faults.rates(plan.transientRate(), plan.lostAnswerRate())
            .withCrash(crashAt, landsLate ? Faults.AtCrash.LANDS_LATE : Faults.AtCrash.UNSENT),
        plan.seed() * 1_000_003 + salt);
  }

  private void addDriver(Scheduler scheduler, JobRun run) {
    ProtocolPlan.JobPlan job = run.plan;
    run.conf.set(CommitterConfig.CONFLICT_MODE, job.mode());
    run.conf.setInt(CommitterConfig.COMMIT_THREADS, 1);
    // Every other job commits through a chunked manifest, one upload per chunk.
    run.conf.setInt(
        CommitterConfig.MANIFEST_CHUNK_UPLOADS,
        job.index() % 2 == 0 ? 1 : CommitterConfig.MANIFEST_CHUNK_UPLOADS_DEFAULT);
    run.conf.set(CommitterConfig.RECOVERY_ON_SETUP, job.recoverOnSetup() ? "recover" : "fail");
    // Every committed job counts as unfinished at setup: setup then finishes it or refuses.
    run.conf.set(CommitterConfig.RECOVERY_STALE_AFTER, "0");
    // Renewals run on a thread of their own, outside the schedule: none falls within a run.
    run.conf.set(CommitterConfig.JOB_LEASE, "7d");
    JobID id = new JobID("sim", job.jobIdNumber());
    Path output = new Path(DESTINATIONS[job.destination()].toString());
    run.driver =
        scheduler.spawn(
            "driver " + job.index(),
            () -> {
              synchronized (world) {
                world.liveJobs.add("job " + job.index());
                world.commitPoints.put(
                    "job " + job.index(),
                    new JobLayout(DESTINATIONS[job.destination()]).jobManifestKey(id.toString()));
              }
              try {
                drive(scheduler, run, job, id, output);
              } finally {
                synchronized (world) {
                  world.liveJobs.remove("job " + job.index());
                }
              }
            });
    if (plan.restarts(job)) {
      addRestartedDriver(scheduler, run, id, output);
    }
  }

  /**
   * The driver restarted after its crash, as MapReduce restarts an application master: attempt 1 of
   * the application, the same job id, a run id of its own, and every task run again. The request
   * its first attempt crashed at lands just after the restart's setup, as a write that was on the
   * wire can.
   */
  private void addRestartedDriver(Scheduler scheduler, JobRun run, JobID id, Path output) {
    ProtocolPlan.JobPlan job = run.plan;
    scheduler.spawn(
        "driver " + job.index() + " restarted",
        () -> {
          scheduler.blockUntil(run.driver::isDone);
          if (run.report != Report.CRASHED) {
            world.land();
            return;
          }
          synchronized (world) {
            world.liveJobs.add("job " + job.index());
          }
          try {
            restart(scheduler, run, job, id, output);
          } catch (Exception e) {
            throw new IllegalStateException(e);
          } finally {
            world.land();
            synchronized (world) {
              world.liveJobs.remove("job " + job.index());
            }
          }
        });
  }

  private void restart(
      Scheduler scheduler, JobRun run, ProtocolPlan.JobPlan job, JobID id, Path output)
      throws Exception {
    JobConf conf = new JobConf(run.conf);
    conf.unset(dev.writeonce.core.committer.MultipartOutputCommitter.JOB_UUID);
    conf.setInt("mapreduce.job.application.attempt.id", 1);
    SimStore store = store(scheduler, "driver " + job.index(), 0, 500 + job.index());
    JobContext context = new JobContextImpl(conf, id);
    SimCommitter committer = new SimCommitter(output, context, store, run.files);
    try {
      committer.setupJob(context);
    } catch (dev.writeonce.core.errors.JobAlreadyFinishedException
        | JobCommittedException earlierAttemptCommitted) {
      run.report = Report.COMMITTED_UNFINISHED; // the job's outcome is its first attempt's
      return;
    } catch (CommitStateUnknownException unknown) {
      run.report = Report.UNKNOWN;
      return;
    } catch (Throwable refused) {
      world.land();
      abortQuietly(committer, context);
      // MapReduce reports a job whose first attempt began its commit and did not end it from
      // its own commit markers, without the committer: where that attempt passed its commit
      // point (its records may be gone and _SUCCESS rewritten by another job since), the job's
      // outcome is that commit, not this refusal.
      run.report = passedCommitPoint(job, id) ? Report.COMMITTED_UNFINISHED : Report.FAILED;
      return;
    }
    world.land();
    int tasks =
        1 + job.attempts().stream().mapToInt(ProtocolPlan.AttemptPlan::task).max().orElse(0);
    for (int t = 0; t < tasks; t++) {
      TaskAttemptID attemptId = new TaskAttemptID("sim", job.jobIdNumber(), TaskType.MAP, t, 100);
      TaskAttemptContext task = new TaskAttemptContextImpl(new JobConf(conf), attemptId);
      SimCommitter taskCommitter = new SimCommitter(output, task, store, run.files);
      taskCommitter.setupTask(task);
      run.files.byAttempt.put(
          attemptId.toString(),
          Map.of(
              run.fileName(t, plan.sharedNames()),
              bytes("job " + job.index() + " task " + t + " restarted")));
      try {
        taskCommitter.commitTask(task);
      } catch (Throwable failed) {
        run.report = Report.FAILED;
        abortQuietly(committer, context);
        return;
      }
    }
    run.report = commit(committer, context);
    if (run.report != Report.SUCCEEDED) {
      abortQuietly(committer, context);
    }
  }

  private boolean passedCommitPoint(ProtocolPlan.JobPlan job, JobID id) {
    String destination = DESTINATIONS[job.destination()].toString();
    synchronized (world) {
      return world.committed.stream()
          .anyMatch(
              m ->
                  m.jobId().equals(id.toString())
                      && m.destination().toString().equals(destination));
    }
  }

  private void drive(
      Scheduler scheduler, JobRun run, ProtocolPlan.JobPlan job, JobID id, Path output) {
    if (job.retryOf() >= 0) {
      Scheduler.Actor earlier =
          runs.stream()
              .filter(r -> r.plan.index() == job.retryOf())
              .findFirst()
              .map(r -> r.driver)
              .orElseThrow();
      scheduler.blockUntil(earlier::isDone);
    }
    SimStore store =
        store(
            scheduler,
            "driver " + job.index(),
            job.driverCrashAt(),
            job.index(),
            plan.restarts(job));
    JobContext context = new JobContextImpl(run.conf, id);
    try {
      SimCommitter committer = new SimCommitter(output, context, store, run.files);
      try {
        committer.setupJob(context);
        run.setupOk = !store.isDead();
      } catch (SimStore.Crash crash) {
        run.report = Report.CRASHED;
      } catch (Throwable refused) {
        run.report = Report.FAILED;
        abortQuietly(committer, context);
      } finally {
        run.setupEnded = true;
      }
      if (!run.setupOk || store.isDead()) {
        run.report = store.isDead() ? Report.CRASHED : run.report;
        return;
      }
      scheduler.blockUntil(() -> run.required.stream().allMatch(Scheduler.Actor::isDone));
      if (job.abortInstead()) {
        run.report = Report.FAILED;
        abortQuietly(committer, context);
      } else {
        run.report = commit(committer, context);
        if (run.report != Report.SUCCEEDED) {
          abortQuietly(committer, context);
        }
      }
      if (job.commitTwice() && !store.isDead()) {
        Report first = run.report;
        Report again = commit(committer, context);
        if (first == Report.SUCCEEDED && again == Report.SUCCEEDED) {
          world.violation("job " + job.index() + ": a repeated commitJob succeeded");
        }
        if (first == Report.FAILED && again != Report.CRASHED) {
          // The engine retried a commit that failed before its commit point: the
          // retry's outcome is what it reports. After "committed" or "unknown", a
          // retry's refusal changes nothing of what the job is.
          run.report = again;
        }
      }
    } catch (Exception e) {
      throw new IllegalStateException(e);
    } finally {
      if (store.isDead()) {
        run.report = Report.CRASHED;
      }
    }
  }

  private static Report commit(SimCommitter committer, JobContext context) {
    try {
      committer.commitJob(context);
      return Report.SUCCEEDED;
    } catch (SimStore.Crash crash) {
      return Report.CRASHED;
    } catch (JobCommittedException | dev.writeonce.core.errors.JobAlreadyFinishedException done) {
      return Report.COMMITTED_UNFINISHED;
    } catch (CommitStateUnknownException unknown) {
      return Report.UNKNOWN;
    } catch (Throwable failed) {
      return Report.FAILED;
    }
  }

  private static void abortQuietly(SimCommitter committer, JobContext context) {
    try {
      committer.abortJob(context, JobStatus.State.FAILED);
    } catch (Throwable ignored) {
      // an engine logs it and goes on
    }
  }

  private Scheduler.Actor addAttempt(
      Scheduler scheduler, JobRun run, ProtocolPlan.AttemptPlan attempt, Scheduler.Actor previous) {
    ProtocolPlan.JobPlan job = run.plan;
    String name =
        "job " + job.index() + " task " + attempt.task() + " attempt " + attempt.attempt();
    Path output = new Path(DESTINATIONS[job.destination()].toString());
    TaskAttemptID id =
        new TaskAttemptID(
            "sim", job.jobIdNumber(), TaskType.MAP, attempt.task(), attempt.attempt());
    return scheduler.spawn(
        name,
        () -> {
          scheduler.blockUntil(() -> run.setupEnded && (previous == null || previous.isDone()));
          if (!run.setupOk) {
            return;
          }
          SimStore store =
              store(
                  scheduler,
                  name,
                  attempt.crashAt(),
                  100 + job.index() * 20 + attempt.task() * 4 + attempt.attempt());
          // A task copies the job's configuration once the job is set up, as local runners do.
          TaskAttemptContext context = new TaskAttemptContextImpl(new JobConf(run.conf), id);
          try {
            SimCommitter committer = new SimCommitter(output, context, store, run.files);
            committer.setupTask(context);
            run.files.byAttempt.put(
                id.toString(),
                Map.of(
                    run.fileName(attempt.task(), plan.sharedNames()),
                    bytes(
                        "job "
                            + job.index()
                            + " task "
                            + attempt.task()
                            + " attempt "
                            + attempt.attempt())));
            switch (attempt.end()) {
              case COMMIT -> {
                if (committer.needsTaskCommit(context)) {
                  committer.commitTask(context);
                }
              }
              case ABORT -> committer.abortTask(context);
              case VANISH -> {}
            }
          } catch (Throwable failed) {
            // the task fails; its engine would retry it, as the plan's next attempt does
          }
        });
  }

  /** What an operator's 'writeonce recover' does, with no age limit, on both destinations. */
  private void recoverAll(SimStore store) throws Exception {
    CommitterConfig config = CommitterConfig.from(SINGLE_THREADED);
    for (Destination destination : DESTINATIONS) {
      JobInspector.Report report = new JobInspector(store, new JobLayout(destination)).inspect();
      JobCommitEngine engine = new JobCommitEngine(store, config, destination);
      for (JobInspector.Job job : report.jobs()) {
        try {
          switch (job.state()) {
            case FINISHED, COMMITTED_UNFINISHED -> resume(engine, store, job.jobId());
            case UNCOMMITTED -> engine.abort(job.jobId(), List.of());
            case ABORTED -> engine.cleanAborted(job.jobId());
            case DAMAGED ->
                world.violation("damaged records of job " + job.jobId() + ": " + job.problem());
          }
        } catch (java.io.IOException e) {
          if (store.isDead()) {
            return;
          }
          if (store == operator) {
            world.violation("the final recovery of job " + job.jobId() + " failed: " + e);
          }
          // otherwise a store fault or a refusal: the next run tries again
        }
      }
    }
  }

  /**
   * Finishes a committed job. Where jobs share file names, a concurrent job may have completed its
   * own upload of a key after this job did, and this job's lost answer can then no longer be
   * confirmed: the operator's recovery accepts such a file as lost when another committed job's
   * object stands at its key, as 'recover --accept-lost' would.
   */
  private void resume(JobCommitEngine engine, SimStore store, String jobId) throws Exception {
    try {
      engine.resume(jobId);
    } catch (dev.writeonce.core.errors.UploadLostException lost) {
      if (store != operator || !plan.sharedNames() || !overwrittenByAnotherJob(jobId, lost)) {
        throw lost;
      }
      engine.resume(jobId, true);
    }
  }

  private boolean overwrittenByAnotherJob(
      String jobId, dev.writeonce.core.errors.UploadLostException lost) {
    for (String key : lost.lostKeys()) {
      byte[] content = world.memory.content(key);
      boolean another =
          content != null
              && world.committed.stream()
                  .filter(m -> !m.jobId().equals(jobId))
                  .flatMap(m -> m.uploads().stream())
                  .anyMatch(
                      u ->
                          u.key().equals(key)
                              && Arrays.equals(world.uploadBytes.get(u.uploadId()), content));
      if (!another) {
        return false;
      }
    }
    return true;
  }

  private void check() {
    if (!world.memory.openUploadIds().isEmpty()) {
      world.violation("uploads left open after recovery: " + world.memory.openUploadIds());
    }
    // What may stay for the retention: an abort fence, or a finished job's record, and the
    // intents of attempts that may still have been uploading; nothing else.
    Map<String, List<String>> leftByJob = new TreeMap<>();
    for (String key : world.memory.keys()) {
      int jobs = key.indexOf("/_writeonce/jobs/");
      if (jobs >= 0) {
        String dir = key.substring(0, key.indexOf('/', jobs + "/_writeonce/jobs/".length()) + 1);
        leftByJob.computeIfAbsent(dir, d -> new ArrayList<>()).add(key);
      } else if (key.contains("/_writeonce/") && !key.endsWith("fail-mode.claim")) {
        world.violation("record left after recovery: " + key);
      }
    }
    leftByJob.forEach(
        (dir, keys) -> {
          boolean ended = isAbortFence(dir + "manifest.json") || isFinished(dir + "job.json");
          for (String key : keys) {
            boolean allowed =
                ended
                    && (key.equals(dir + "manifest.json") && isAbortFence(key)
                        || key.equals(dir + "job.json")
                        || key.startsWith(dir + "intents/"));
            if (!allowed) {
              world.violation("record left after recovery: " + key);
            }
          }
        });
    checkSuccessNamesEveryCommittedJob();
    Map<String, byte[]> expected = new TreeMap<>();
    for (int d = 0; d < DESTINATIONS.length; d++) {
      if (plan.oldData()[d]) {
        expected.put(DESTINATIONS[d].keyOf("old-" + d), bytes("old"));
      }
    }
    List<String> deleted = new ArrayList<>();
    for (JobManifest manifest : world.committed) {
      for (PendingUpload upload : manifest.uploads()) {
        expected.put(upload.key(), world.uploadBytes.get(upload.uploadId()));
      }
      deleted.addAll(manifest.deletes());
    }
    deleted.forEach(expected::remove);
    Map<String, byte[]> visible = new TreeMap<>();
    for (String key : world.memory.keys()) {
      if (!key.contains("/_writeonce/") && !key.endsWith("/_SUCCESS") && !key.endsWith("/")) {
        visible.put(key, world.memory.content(key));
      }
    }
    if (plan.sharedNames()) {
      checkSharedNames(visible);
    } else if (!visible.keySet().equals(expected.keySet())) {
      world.violation("visible objects " + visible.keySet() + ", expected " + expected.keySet());
    } else {
      expected.forEach(
          (key, content) -> {
            if (!Arrays.equals(content, visible.get(key))) {
              world.violation("object " + key + " does not hold what its job wrote");
            }
          });
    }
    for (JobRun run : runs) {
      boolean published =
          world.committed.stream()
              .flatMap(m -> m.uploads().stream())
              .anyMatch(u -> run.wrote(u.key(), plan.sharedNames()));
      if (run.report == Report.FAILED && published) {
        world.violation(
            "job " + run.plan.index() + " was reported failed but published its output");
      }
    }
  }

  /**
   * With file names shared between jobs, which committed job's file a key shows depends on the
   * order their completions ran in: each visible object must hold what some committed job (or the
   * old data) wrote there.
   */
  private void checkSharedNames(Map<String, byte[]> visible) {
    Map<String, List<byte[]>> written = new TreeMap<>();
    for (int d = 0; d < DESTINATIONS.length; d++) {
      if (plan.oldData()[d]) {
        written
            .computeIfAbsent(DESTINATIONS[d].keyOf("old-" + d), k -> new ArrayList<>())
            .add(bytes("old"));
      }
    }
    for (JobManifest manifest : world.committed) {
      for (PendingUpload upload : manifest.uploads()) {
        written
            .computeIfAbsent(upload.key(), k -> new ArrayList<>())
            .add(world.uploadBytes.get(upload.uploadId()));
      }
    }
    visible.forEach(
        (key, content) -> {
          if (written.getOrDefault(key, List.of()).stream()
              .noneMatch(c -> Arrays.equals(c, content))) {
            world.violation("object " + key + " holds what no committed job wrote there");
          }
        });
  }

  private boolean isAbortFence(String key) {
    byte[] content = world.memory.content(key);
    try {
      return content != null && dev.writeonce.core.json.JobRecordFormat.isAbortFence(content, key);
    } catch (dev.writeonce.core.errors.FormatException e) {
      return false;
    }
  }

  private boolean isFinished(String key) {
    byte[] content = world.memory.content(key);
    try {
      return content != null
          && dev.writeonce.core.json.JobRecordFormat.fromJson(content, key).state()
              == dev.writeonce.core.model.JobRecord.State.FINISHED;
    } catch (dev.writeonce.core.errors.FormatException e) {
      return false;
    }
  }

  /**
   * What a restarted driver relies on once its job's records are gone: each destination's {@code
   * _SUCCESS} names, as its own job or in its history, exactly the jobs that committed there. Never
   * a job that did not commit (its restart would be refused as finished with nothing published),
   * and never fewer (a finished job missing from it, because two jobs finishing at once dropped its
   * entry or a replace job deleted the marker, would be run again by its restarted driver). The
   * simulation's few jobs stay far below the history's bound.
   */
  private void checkSuccessNamesEveryCommittedJob() {
    for (Destination destination : DESTINATIONS) {
      String key = destination.keyOf("_SUCCESS");
      Set<String> committedHere = new TreeSet<>();
      for (JobManifest manifest : world.committed) {
        if (manifest.destination().equals(destination)) {
          committedHere.add(manifest.jobId());
        }
      }
      byte[] content = world.memory.content(key);
      if (content == null) {
        if (!committedHere.isEmpty()) {
          world.violation("no " + key + ", though jobs " + committedHere + " committed there");
        }
        continue;
      }
      SuccessData success;
      try {
        success = SuccessDataFormat.fromJson(content, key);
      } catch (FormatException e) {
        world.violation(key + " cannot be read: " + e.getMessage());
        continue;
      }
      Set<String> named = new TreeSet<>();
      named.add(success.jobId());
      success.finishedJobs().forEach(earlier -> named.add(earlier.jobId()));
      if (!named.equals(committedHere)) {
        world.violation(
            key + " names jobs " + named + ", but the jobs committed there are " + committedHere);
      }
    }
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}
