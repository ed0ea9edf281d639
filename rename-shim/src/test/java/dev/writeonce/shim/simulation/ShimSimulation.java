package dev.writeonce.shim.simulation;

import dev.writeonce.core.json.PendingFileFormat;
import dev.writeonce.core.testing.s3.MemoryS3;
import dev.writeonce.core.testing.s3.StoreRequest;
import dev.writeonce.core.testing.simulation.Crash;
import dev.writeonce.core.testing.simulation.Faults;
import dev.writeonce.core.testing.simulation.SimFuture;
import dev.writeonce.core.testing.simulation.World;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.JobStatus;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.lib.output.FileOutputCommitter;
import org.apache.hadoop.mapreduce.task.JobContextImpl;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;

/**
 * Runs one {@link ShimPlan} with the real pieces: Hadoop's FileOutputCommitter (v1 or v2) and
 * Hive's move rule, over the real rename shim on the real S3A, against the in-memory store behind
 * the SDK's client interface, in simulated processes whose every store request is a scheduling
 * point. Then it recovers what a crashed driver left, as its application master's successor would,
 * closes the processes, and checks the invariants. Returns the violations found; none when the shim
 * held.
 *
 * <p>The invariants:
 *
 * <ol>
 *   <li>A {@code commitJob} that returned normally left every file it committed in place, with its
 *       bytes, and nothing of an attempt that did not commit.
 *   <li>A failed completion of a job's file is reported to the job commit: a job without that file
 *       never returned normally (the first invariant, seen from the failure).
 *   <li>No file that existed before the job, or that another writer put there, is overwritten or
 *       removed, except a file of the job's own name, which FileOutputCommitter replaces.
 *   <li>No multipart upload stays open once every process has ended, unless a pending-file record
 *       in the store names it.
 * </ol>
 */
final class ShimSimulation implements World {

  /** How a driver's job ended. */
  enum Result {
    NONE,
    SUCCEEDED,
    FAILED,
    CRASHED
  }

  private static final String HIVE_TABLE = "t";
  private static final String HIVE_STAGING =
      HIVE_TABLE + "/.hive-staging_hive_2026-11-26_00-00-00_000_1/-ext-10000";

  private final ShimPlan plan;
  private final SharedS3 world;
  private final List<String> violations = new ArrayList<>();
  private final Map<String, byte[]> protectedFiles = new TreeMap<>();
  private final Set<String> presentFromStart = new HashSet<>();
  private final List<String> events = java.util.Collections.synchronizedList(new ArrayList<>());
  private final List<JobRun> runs = new ArrayList<>();
  private final List<Process> processes = new ArrayList<>();
  private HiveRun hive;
  private Process metastore;
  private final boolean tracing;

  /** What one job did, as its driver and tasks saw it. */
  private final class JobRun {
    final ShimPlan.JobPlan plan;
    volatile Result result = Result.NONE;
    volatile Throwable failure;
    final Map<String, Set<String>> committed = new HashMap<>();
    final Map<Integer, Map<String, String>> lastCommitted = new HashMap<>();
    final Set<String> written = new HashSet<>();
    Process driver;

    JobRun(ShimPlan.JobPlan plan) {
      this.plan = plan;
    }
  }

  /** What the Hive statement did. */
  private static final class HiveRun {
    final ShimPlan.HivePlan plan;
    volatile Result result = Result.NONE;
    volatile Throwable failure;
    final List<String> contents = new ArrayList<>();

    HiveRun(ShimPlan.HivePlan plan) {
      this.plan = plan;
    }
  }

  ShimSimulation(ShimPlan plan, boolean tracing) {
    this.plan = plan;
    this.tracing = tracing;
    this.world = new SharedS3(plan.seed(), tracing);
  }

  @Override
  public List<String> run() throws Exception {
    try {
      prepare();
      Process driver = process("driver", driverFaults(), plan.seed() + 1);
      Process executor =
          new Random(plan.seed()).nextBoolean()
              ? driver
              : process("executor", executorFaults(), plan.seed() + 2);
      if (plan.jobs().stream().anyMatch(ShimPlan.JobPlan::hiveInsert)) {
        metastore = process("metastore", executorFaults(), plan.seed() + 4);
      }
      for (ShimPlan.JobPlan job : plan.jobs()) {
        JobRun run = new JobRun(job);
        run.driver = driver;
        runs.add(run);
        driver.spawn("job" + job.index(), () -> drive(run, executor));
      }
      if (plan.hive() != null) {
        hive = new HiveRun(plan.hive());
        driver.spawn("hive", () -> hiveStatement(hive, driver));
      }
      for (int r = 0; r < plan.readers(); r++) {
        int reader = r;
        driver.spawn("reader" + r, () -> read(driver, reader));
      }
      world.scheduler().beforeEachStep(this::betweenSteps);
      world.scheduler().run();
      noteUnnamedUploads();
      recover(driver);
      for (Process process : processes) {
        if (!process.crashed()) {
          process.spawn("close", process::closeFileSystems);
        }
      }
      world.scheduler().run();
      violations.addAll(world.scheduler().errors());
      check();
    } finally {
      for (Process process : processes) {
        process.end();
      }
    }
    return violations;
  }

  private Process process(String role, Faults faults, long seed) {
    return process(role, faults, this::failsAlways, seed);
  }

  private Process process(
      String role,
      Faults faults,
      java.util.function.Predicate<StoreRequest> failAlways,
      long seed) {
    Process process =
        new Process(
            "s" + plan.seed() + "-" + role, world, faults, failAlways, seed, plan.pageSize());
    processes.add(process);
    return process;
  }

  private Faults driverFaults() {
    ShimPlan.Faults f = plan.faults();
    return executorFaults()
        .withCrash(
            f.driverCrashAt(),
            f.crashAfterApplying() ? Faults.AtCrash.APPLIED : Faults.AtCrash.UNSENT);
  }

  private Faults executorFaults() {
    ShimPlan.Faults f = plan.faults();
    return Faults.rates(f.transientRate(), f.lostAnswerRate()).withShortPages(f.shortPageRate());
  }

  /** The file whose completion fails: a 5xx past the retries, every time it is tried. */
  private boolean failsAlways(StoreRequest request) {
    return plan.faults().failedCompletion() >= 0
        && !plan.faults().failedByForeignAbort()
        && request.operation().equals("CompleteMultipartUpload")
        && failedKey() != null
        && failedKey().equals(request.key());
  }

  private String failedKey() {
    int index = plan.faults().failedCompletion();
    if (index < 0) {
      return null;
    }
    if (!plan.jobs().isEmpty()) {
      List<String> keys = outputKeys(plan.jobs().get(0));
      return keys.isEmpty() ? null : keys.get(index % keys.size());
    }
    return null;
  }

  // ---- the world before and between steps --------------------------------------------------

  private void prepare() {
    MemoryS3 store = world.store();
    for (ShimPlan.JobPlan job : plan.jobs()) {
      if (job.dynamicOverwrite()) {
        protect(job.output() + "/p=9/old-data", "a partition the overwrite does not write");
        store.putObject(SharedS3.BUCKET, job.output() + "/p=0/older-run", bytes("replaced"));
      }
      if (job.oldFiles()) {
        protect(job.output() + "/old-0", "old data of " + job.output());
        List<String> keys = outputKeys(job);
        if (!keys.isEmpty() && !job.hiveInsert()) {
          // A file of the job's own name: FileOutputCommitter replaces it.
          store.putObject(SharedS3.BUCKET, keys.get(0), bytes("an older run's " + keys.get(0)));
        }
      }
    }
    if (plan.hive() != null) {
      protect(HIVE_TABLE + "/000000_0", "the table's first file, written hours ago");
      for (int i = 1; i < plan.hive().existing(); i++) {
        protect(HIVE_TABLE + "/00000" + i + "_9", "an older file " + i);
      }
    }
    presentFromStart.addAll(protectedFiles.keySet());
    world.advanceMillis(3 * 3600 * 1000L);
  }

  private void protect(String key, String content) {
    world.store().putObject(SharedS3.BUCKET, key, bytes(content));
    protectedFiles.put(key, bytes(content));
  }

  private final AtomicBoolean foreignAbortDone = new AtomicBoolean();
  private int foreignWrites;

  private void betweenSteps() {
    Random random = world.scheduler().random();
    if (plan.clockSteps() && random.nextInt(8) == 0) {
      world.advanceMillis(random.nextInt(1500));
    }
    if (plan.foreignWrites() && !plan.jobs().isEmpty() && random.nextInt(40) == 0) {
      String key = plan.jobs().get(0).output() + "/foreign-" + foreignWrites++;
      protect(key, "another writer's " + key);
    }
    String failed = failedKey();
    if (failed != null
        && plan.faults().failedByForeignAbort()
        && !foreignAbortDone.get()
        && random.nextInt(4) == 0) {
      for (MemoryS3.OpenUpload upload : world.store().openUploads(SharedS3.BUCKET)) {
        if (upload.key().equals(failed)) {
          // Another tool aborts the upload: the completion will find it gone.
          world.store().abortUpload(SharedS3.BUCKET, upload.key(), upload.uploadId());
          foreignAbortDone.set(true);
        }
      }
    }
  }

  // ---- FileOutputCommitter ------------------------------------------------------------------

  /** The output keys a job's tasks write, in task and file order. */
  static List<String> outputKeys(ShimPlan.JobPlan job) {
    List<String> keys = new ArrayList<>();
    for (ShimPlan.TaskPlan task : job.tasks()) {
      for (int f = 0; f < task.files(); f++) {
        keys.add(job.output() + "/" + fileName(job, task.task(), f));
      }
    }
    return keys;
  }

  private static String fileName(ShimPlan.JobPlan job, int task, int file) {
    String name = job.sharedNames() ? "part-0000" + file : "part-" + task + "-" + file;
    return job.partitioned() || job.dynamicOverwrite() ? "p=" + (file % 2) + "/" + name : name;
  }

  /** The partitions a dynamic partition overwrite replaces: those its committed files write. */
  private static List<String> partitionsOf(Map<String, String> files, ShimPlan.JobPlan job) {
    Set<String> partitions = new java.util.TreeSet<>();
    for (String key : files.keySet()) {
      String below = key.substring(job.output().length() + 1);
      partitions.add(below.substring(0, below.indexOf('/')));
    }
    return new ArrayList<>(partitions);
  }

  private JobConf jobConf(ShimPlan.JobPlan job, Process process) {
    JobConf conf = new JobConf(process.conf());
    conf.set(
        "mapreduce.output.fileoutputformat.outputdir",
        "s3a://" + SharedS3.BUCKET + "/" + job.output());
    conf.setInt("mapreduce.fileoutputcommitter.algorithm.version", job.algorithm());
    // The job's own settings, which the file system instance (made with the process's) never sees.
    conf.setBoolean("mapreduce.fileoutputcommitter.marksuccessfuljobs", job.successMarker());
    conf.setBoolean("mapreduce.fileoutputcommitter.cleanup.skipped", job.cleanupSkipped());
    conf.setBoolean(
        "mapreduce.fileoutputcommitter.cleanup-failures.ignored", job.cleanupFailuresIgnored());
    if (job.cacheDisabled()) {
      conf.setBoolean("fs.s3a.impl.disable.cache", true);
    }
    return conf;
  }

  private static JobID jobId(ShimPlan.JobPlan job) {
    return new JobID("202611260000", job.index() + 1);
  }

  private void drive(JobRun run, Process executor) throws Exception {
    ShimPlan.JobPlan job = run.plan;
    Path output = new Path("s3a://" + SharedS3.BUCKET + "/" + job.committerOutput());
    JobConf conf = jobConf(job, run.driver);
    JobContext context = new JobContextImpl(conf, jobId(job));
    FileOutputCommitter committer = new FileOutputCommitter(output, context);
    try {
      committer.setupJob(context);
      List<SimFuture<Boolean>> tasks = new ArrayList<>();
      for (ShimPlan.TaskPlan task : job.tasks()) {
        SimFuture<Boolean> done = new SimFuture<>(world.scheduler());
        tasks.add(done);
        executor.spawn(
            "job" + job.index() + "-task" + task.task(),
            () -> {
              boolean committed = false;
              try {
                committed = runTask(run, executor, output, task);
              } finally {
                done.complete(committed);
              }
            });
      }
      boolean all = true;
      for (SimFuture<Boolean> task : tasks) {
        all &= task.get();
      }
      if (!all) {
        committer.abortJob(context, JobStatus.State.FAILED);
        run.result = Result.FAILED;
        return;
      }
      committer.commitJob(context);
      if (job.closesBetween() && plan.jobs().size() == 1) {
        // As code that closes what FileSystem.get returned; with no other job in the process,
        // whose writers closing their file system would break as it breaks them on S3A.
        run.driver.closeFileSystems();
      }
      if (job.dynamicOverwrite()) {
        replacePartitions(run, output, conf);
      }
      if (job.hiveInsert()) {
        loadIntoTable(run, output, conf);
      }
      run.result = Result.SUCCEEDED;
    } catch (Crash crash) {
      run.result = Result.CRASHED;
      throw crash;
    } catch (Exception e) {
      if (run.driver.crashed()) {
        run.result = Result.CRASHED;
        return;
      }
      run.result = Result.FAILED;
      run.failure = e;
      try {
        committer.abortJob(context, JobStatus.State.FAILED);
        if (job.staged()) {
          deleteStaging(job, conf); // Spark's abort: the staging directory
        }
      } catch (Exception abortFailed) {
        e.addSuppressed(abortFailed);
      }
    }
    if (run.driver.crashed()) {
      run.result = Result.CRASHED;
    }
  }

  /**
   * What Spark's commit protocol does after the job commit of a dynamic partition overwrite: each
   * partition the job wrote is deleted and the staged one renamed into its place, then the staging
   * directory is deleted.
   */
  private void replacePartitions(JobRun run, Path staging, JobConf conf) throws IOException {
    FileSystem fs = staging.getFileSystem(conf);
    Path output = new Path("s3a://" + SharedS3.BUCKET + "/" + run.plan.output());
    Map<String, String> written = new HashMap<>();
    synchronized (run) {
      run.lastCommitted.values().forEach(written::putAll);
    }
    for (String partition : partitionsOf(written, run.plan)) {
      Path finalPartition = new Path(output, partition);
      if (!fs.delete(finalPartition, true) && !fs.exists(finalPartition.getParent())) {
        fs.mkdirs(finalPartition.getParent());
      }
      if (!fs.rename(new Path(staging, partition), finalPartition)) {
        throw new IOException("renaming the staged " + partition + " into place answered false");
      }
    }
    fs.delete(staging, true);
  }

  /**
   * What Spark's insert into a Hive table does after the job commit: Hive's client, in its own
   * class loader and so with its own file systems (here: another process), moves each staged file
   * into the table, under its own name or the first free {@code _copy_N}; then the driver deletes
   * the staging directory.
   */
  private void loadIntoTable(JobRun run, Path staging, JobConf conf) throws Exception {
    SimFuture<Boolean> loaded = new SimFuture<>(world.scheduler());
    java.util.concurrent.atomic.AtomicReference<Exception> failure =
        new java.util.concurrent.atomic.AtomicReference<>();
    Path table = new Path("s3a://" + SharedS3.BUCKET + "/" + run.plan.output());
    metastore.spawn(
        "load" + run.plan.index(),
        () -> {
          boolean done = false;
          try {
            FileSystem fs = staging.getFileSystem(metastore.conf());
            String root = staging.toUri().getPath();
            List<Path> files = stagedFiles(fs, staging);
            for (Path file : files) {
              String relative = file.toUri().getPath().substring(root.length() + 1);
              Path target = new Path(table, relative);
              for (int copy = 1; fs.exists(target); copy++) {
                target = new Path(table, relative + "_copy_" + copy);
              }
              if (!fs.rename(file, target)) {
                throw new IOException("moving " + file + " into the table answered false");
              }
            }
            done = true;
          } catch (Crash crash) {
            throw crash;
          } catch (Exception e) {
            failure.set(e);
          } finally {
            loaded.complete(done);
          }
        });
    if (!loaded.get()) {
      throw new IOException(
          "Hive's client failed to load " + staging + " into " + table, failure.get());
    }
    deleteStaging(run.plan, conf);
  }

  /**
   * The files Hive moves from a staged directory: all but the hidden ones ({@code _SUCCESS}); none
   * when a job that wrote nothing and no marker left no directory.
   */
  private static List<Path> stagedFiles(FileSystem fs, Path staging) throws IOException {
    List<Path> files = new ArrayList<>();
    if (!fs.exists(staging)) {
      return files;
    }
    for (var it = fs.listFiles(staging, true); it.hasNext(); ) {
      Path file = it.next().getPath();
      if (!file.getName().startsWith("_") && !file.getName().startsWith(".")) {
        files.add(file);
      }
    }
    return files;
  }

  /** The directory Spark creates for a staged write, deleted whole at its end. */
  private static String stagingOf(ShimPlan.JobPlan job) {
    return job.hiveInsert()
        ? job.committerOutput().substring(0, job.committerOutput().lastIndexOf('/'))
        : job.committerOutput();
  }

  private static void deleteStaging(ShimPlan.JobPlan job, JobConf conf) throws IOException {
    Path staging = new Path("s3a://" + SharedS3.BUCKET + "/" + stagingOf(job));
    staging.getFileSystem(conf).delete(staging, true);
  }

  /**
   * Runs a task's attempts in turn; true when one committed. A task the plan reruns has its
   * committed attempt run again under the same attempt id (a stage retry that numbers its attempts
   * from 0 again) with one more file, which then is what the task committed.
   */
  private boolean runTask(JobRun run, Process process, Path output, ShimPlan.TaskPlan task)
      throws Exception {
    ShimPlan.JobPlan job = run.plan;
    for (int a = 0; a < task.attemptFails().size(); a++) {
      TaskAttemptID attempt =
          new TaskAttemptID(
              new org.apache.hadoop.mapreduce.TaskID(jobId(job), TaskType.MAP, task.task()), a);
      if (!runAttempt(run, process, output, task, attempt, task.files(), "")) {
        continue;
      }
      // Reruns where tasks share file names or write into a staging directory fail the job
      // (a completion answered NoSuchUpload): not yet drawn.
      if (!job.sharedNames() && !job.staged() && plan.reruns(job.index(), task.task())) {
        return runAttempt(run, process, output, task, attempt, task.files() + 1, " rerun");
      }
      return true;
    }
    return false;
  }

  /** One attempt writing {@code files} files; true when it committed. */
  private boolean runAttempt(
      JobRun run,
      Process process,
      Path output,
      ShimPlan.TaskPlan task,
      TaskAttemptID attempt,
      int files,
      String label)
      throws Exception {
    ShimPlan.JobPlan job = run.plan;
    int a = attempt.getId();
    TaskAttemptContext context = new TaskAttemptContextImpl(jobConf(job, process), attempt);
    FileOutputCommitter committer = new FileOutputCommitter(output, context);
    Map<String, String> contents = new LinkedHashMap<>();
    try {
      committer.setupTask(context);
      for (int f = 0; f < files; f++) {
        String name = fileName(job, task.task(), f);
        String content =
            "job " + job.index() + " task " + task.task() + " attempt " + a + label + " file " + f;
        Path path = new Path(committer.getWorkPath(), name);
        FileSystem fs = path.getFileSystem(context.getConfiguration());
        try (FSDataOutputStream out = fs.create(path, true)) {
          out.write(bytes(content));
        }
        contents.put(job.output() + "/" + name, content);
        synchronized (run) {
          run.written.add(content);
        }
      }
      if (label.isEmpty() && task.attemptFails().get(a)) {
        committer.abortTask(context);
        return false;
      }
      if (committer.needsTaskCommit(context)) {
        committer.commitTask(context);
      }
      synchronized (run) {
        run.lastCommitted.put(task.task(), contents);
        contents.forEach(
            (key, content) ->
                run.committed.computeIfAbsent(key, k -> new HashSet<>()).add(content));
      }
      return true;
    } catch (Crash crash) {
      throw crash;
    } catch (Exception e) {
      try {
        committer.abortTask(context);
      } catch (Exception abortFailed) {
        e.addSuppressed(abortFailed);
      }
      return false;
    }
  }

  // ---- Hive's move --------------------------------------------------------------------------

  /**
   * A statement's staged files moved as Hive's MoveTask moves them into a table that keeps its
   * files: each under its own name, or the first {@code _copy_N} name that is free, after an
   * existence check.
   */
  private void hiveStatement(HiveRun run, Process process) throws Exception {
    Configuration conf = process.conf();
    Path staging = new Path("s3a://" + SharedS3.BUCKET + "/" + HIVE_STAGING);
    FileSystem fs = staging.getFileSystem(conf);
    try {
      for (int f = 0; f < run.plan.files(); f++) {
        String content = "hive statement file " + f;
        try (FSDataOutputStream out = fs.create(new Path(staging, "00000" + f + "_0"), true)) {
          out.write(bytes(content));
        }
        run.contents.add(content);
      }
      Path table = new Path("s3a://" + SharedS3.BUCKET + "/" + HIVE_TABLE);
      for (FileStatus staged : fs.listStatus(staging)) {
        String name = staged.getPath().getName();
        Path target = new Path(table, name);
        for (int copy = 1; exists(fs, target, "Hive's move"); copy++) {
          target = new Path(table, name + "_copy_" + copy);
        }
        if (!fs.rename(staged.getPath(), target)) {
          throw new IOException("rename " + staged.getPath() + " to " + target + " answered false");
        }
      }
      fs.delete(staging.getParent(), true);
      run.result = Result.SUCCEEDED;
    } catch (Crash crash) {
      run.result = Result.CRASHED;
      throw crash;
    } catch (Exception e) {
      run.result = process.crashed() ? Result.CRASHED : Result.FAILED;
      run.failure = e;
      try {
        fs.delete(staging.getParent(), true);
      } catch (Exception cleanupFailed) {
        e.addSuppressed(cleanupFailed);
      }
    }
  }

  /**
   * An existence check, as commit code and readers make them: a file that has been in place since
   * before the schedule, untouched, must never be reported absent.
   */
  private boolean exists(FileSystem fs, Path path, String who) throws IOException {
    boolean exists = fs.exists(path);
    String key = path.toUri().getPath().substring(1);
    if (!exists && presentFromStart.contains(key)) {
      violations.add(who + " was told " + key + " does not exist; it has for hours");
    }
    return exists;
  }

  // ---- a reader in the same process ---------------------------------------------------------

  private void read(Process process, int reader) throws Exception {
    Random random = new Random(plan.seed() * 31 + reader);
    List<String> paths = new ArrayList<>(List.of("", HIVE_TABLE));
    paths.addAll(presentFromStart);
    for (ShimPlan.JobPlan job : plan.jobs()) {
      paths.add(job.output());
      paths.add(job.output() + "/p=0");
      if (job.staged()) {
        paths.add(job.committerOutput());
        paths.add(job.committerOutput() + "/p=0");
        paths.add(job.committerOutput() + "/_temporary/0");
      }
      paths.add(job.output() + "/_temporary");
      for (String key : outputKeys(job)) {
        paths.add(key);
      }
    }
    FileSystem fs = new Path("s3a://" + SharedS3.BUCKET + "/").getFileSystem(process.conf());
    for (int i = 0; i < 24; i++) {
      Path path =
          new Path("s3a://" + SharedS3.BUCKET + "/" + paths.get(random.nextInt(paths.size())));
      try {
        switch (random.nextInt(3)) {
          case 0 -> list(fs, path, random.nextInt(6));
          case 1 -> exists(fs, path, "a reader");
          default -> fs.getFileStatus(path);
        }
      } catch (Crash crash) {
        throw crash;
      } catch (IOException seen) {
        // A reader sees what it sees; whether it saw a job's failure tells which fault it was.
        if (String.valueOf(seen.getMessage()).contains("completing the upload")) {
          events.add("a reader saw the failed completion: " + seen.getMessage());
        }
      }
    }
  }

  /**
   * One of the listings engines use: Spark's file index, Hive's and MapReduce's input formats
   * (located statuses), recursive listings, globs and content summaries.
   */
  private static void list(FileSystem fs, Path path, int how) throws IOException {
    switch (how) {
      case 0 -> fs.listStatus(path);
      case 1 -> drain(fs.listLocatedStatus(path));
      case 2 -> drain(fs.listStatusIterator(path));
      case 3 -> drain(fs.listFiles(path, true));
      case 4 -> fs.globStatus(new Path(path, "*"));
      default -> fs.getContentSummary(path);
    }
  }

  private static void drain(RemoteIterator<? extends FileStatus> statuses) throws IOException {
    while (statuses.hasNext()) {
      statuses.next();
    }
  }

  // ---- after a crash ------------------------------------------------------------------------

  /**
   * Uploads no record can ever name, which the store's lifecycle rule for incomplete uploads
   * removes (as for S3A and every committer): those whose creation's answer was lost, so that no
   * writer learnt their id; those a process that died created before it wrote their record; and
   * those whose abort the store refused.
   */
  private final Set<String> unnamedByDesign = new HashSet<>();

  private void noteUnnamedUploads() {
    Set<String> named = namedUploads();
    for (Process process : processes) {
      Set<String> created = process.createdKeys();
      Set<String> lost = process.lostCreates();
      Set<String> refused = process.failedAborts();
      for (MemoryS3.OpenUpload upload : world.store().openUploads(SharedS3.BUCKET)) {
        boolean diedFirst = process.crashed() && created.contains(upload.key());
        if (!named.contains(upload.uploadId())
            && (diedFirst || lost.contains(upload.key()) || refused.contains(upload.uploadId()))) {
          unnamedByDesign.add(upload.uploadId());
        }
      }
    }
  }

  private Set<String> namedUploads() {
    Set<String> named = new HashSet<>();
    for (Map.Entry<String, MemoryS3.StoredObject> entry :
        world.store().objects(SharedS3.BUCKET, "").entrySet()) {
      byte[] body = entry.getValue().bytes();
      if (body.length < 4096
          && PendingFileFormat.isRecord(
              Arrays.copyOf(body, Math.min(body.length, PendingFileFormat.HEAD_BYTES)))) {
        try {
          named.add(PendingFileFormat.fromJson(body, entry.getKey()).uploadId());
        } catch (Exception damaged) {
          violations.add("a damaged record at " + entry.getKey());
        }
      }
    }
    return named;
  }

  /** A crashed driver's successor aborts its jobs, as an application master's restart does. */
  private void recover(Process crashed) throws Exception {
    boolean any =
        runs.stream().anyMatch(run -> run.result == Result.CRASHED || run.result == Result.NONE)
            || (hive != null && (hive.result == Result.CRASHED || hive.result == Result.NONE));
    if (!any) {
      return;
    }
    Process successor = process("successor", Faults.NONE, request -> false, plan.seed() + 3);
    successor.spawn(
        "abort",
        () -> {
          for (JobRun run : runs) {
            if (run.result == Result.CRASHED || run.result == Result.NONE) {
              ShimPlan.JobPlan job = run.plan;
              JobConf conf = jobConf(job, successor);
              conf.setInt("mapreduce.job.application.attempt.id", 1);
              JobContext context = new JobContextImpl(conf, jobId(job));
              Path output = new Path("s3a://" + SharedS3.BUCKET + "/" + job.committerOutput());
              new FileOutputCommitter(output, context).abortJob(context, JobStatus.State.FAILED);
              if (job.staged()) {
                deleteStaging(job, conf);
              }
            }
          }
          if (hive != null && (hive.result == Result.CRASHED || hive.result == Result.NONE)) {
            Path staging = new Path("s3a://" + SharedS3.BUCKET + "/" + HIVE_STAGING).getParent();
            staging.getFileSystem(successor.conf()).delete(staging, true);
          }
        });
    world.scheduler().run();
  }

  // ---- the invariants -----------------------------------------------------------------------

  private void check() {
    MemoryS3 store = world.store();
    boolean faultless = plan.faults().equals(ShimPlan.Faults.NONE);
    for (JobRun run : runs) {
      if (faultless && run.result != Result.SUCCEEDED && allTasksMayCommit(run.plan)) {
        violations.add(
            "job "
                + run.plan.index()
                + " did not succeed though nothing failed: "
                + run.result
                + (run.failure == null ? "" : " (" + run.failure + causeOf(run.failure) + ")"));
      }
      if (run.result != Result.SUCCEEDED) {
        continue;
      }
      Set<String> expected = new HashSet<>();
      for (Map<String, String> files : run.lastCommitted.values()) {
        expected.addAll(files.keySet());
      }
      for (String key : expected) {
        byte[] found = store.getObject(SharedS3.BUCKET, key).orElse(null);
        if (found == null) {
          violations.add(
              "job "
                  + run.plan.index()
                  + " returned normally from commitJob without "
                  + key
                  + failedNote(key));
        } else if (!run.committed.get(key).contains(text(found))) {
          violations.add(
              "job "
                  + run.plan.index()
                  + " committed "
                  + key
                  + " but it holds '"
                  + text(found)
                  + "'");
        }
      }
      if (run.plan.dynamicOverwrite()) {
        Map<String, String> written = new HashMap<>();
        run.lastCommitted.values().forEach(written::putAll);
        for (String partition : partitionsOf(written, run.plan)) {
          for (String key :
              store.objects(SharedS3.BUCKET, run.plan.output() + "/" + partition + "/").keySet()) {
            if (!expected.contains(key)) {
              violations.add(
                  "job "
                      + run.plan.index()
                      + " overwrote "
                      + partition
                      + " but "
                      + key
                      + " is still there");
            }
          }
        }
      }
      if (run.plan.staged()) {
        String staging = stagingOf(run.plan) + "/";
        if (!store.objects(SharedS3.BUCKET, staging).isEmpty()) {
          violations.add(
              "job "
                  + run.plan.index()
                  + " left its staging directory: "
                  + store.objects(SharedS3.BUCKET, staging).keySet());
        }
      }
      for (Map.Entry<String, MemoryS3.StoredObject> entry :
          store.objects(SharedS3.BUCKET, run.plan.output() + "/").entrySet()) {
        String key = entry.getKey();
        if (isLeftover(run.plan, key)) {
          violations.add(
              "job " + run.plan.index() + " succeeded but left " + key + " in its output");
        }
        String content = text(entry.getValue().bytes());
        if (!expected.contains(key) && run.written.contains(content)) {
          violations.add(
              "job "
                  + run.plan.index()
                  + " left '"
                  + content
                  + "' at "
                  + key
                  + ", which no committed attempt wrote there");
        }
      }
    }
    if (hive != null && hive.result == Result.SUCCEEDED) {
      List<String> found = new ArrayList<>();
      for (MemoryS3.StoredObject object :
          store.objects(SharedS3.BUCKET, HIVE_TABLE + "/").values()) {
        found.add(text(object.bytes()));
      }
      for (String content : hive.contents) {
        if (found.stream().filter(content::equals).count() != 1) {
          violations.add(
              "the Hive statement succeeded but '"
                  + content
                  + "' is in the table "
                  + found.stream().filter(content::equals).count()
                  + " times");
        }
      }
    }
    for (Map.Entry<String, byte[]> file : protectedFiles.entrySet()) {
      byte[] now = store.getObject(SharedS3.BUCKET, file.getKey()).orElse(null);
      if (now == null) {
        violations.add(file.getKey() + ", written before by another writer, was removed");
      } else if (!Arrays.equals(now, file.getValue())) {
        violations.add(
            file.getKey()
                + ", written before by another writer, was overwritten with '"
                + text(now)
                + "'");
      }
    }
    Set<String> named = namedUploads();
    for (MemoryS3.OpenUpload upload : store.openUploads(SharedS3.BUCKET)) {
      if (!named.contains(upload.uploadId()) && !unnamedByDesign.contains(upload.uploadId())) {
        violations.add(
            "the upload "
                + upload.uploadId()
                + " of "
                + upload.key()
                + " stayed open and no record names it");
      }
    }
  }

  private static String causeOf(Throwable failure) {
    return failure.getCause() == null ? "" : ", caused by " + failure.getCause();
  }

  /** Whether every task of a job has an attempt that commits. */
  private static boolean allTasksMayCommit(ShimPlan.JobPlan job) {
    return job.tasks().stream().allMatch(task -> task.attemptFails().contains(false));
  }

  /**
   * What a successful job must not leave in its output: the shim's own objects, and the temporary
   * directories of the commit (FileOutputCommitter's, unless told to skip its cleanup or to ignore
   * its failure).
   */
  private static boolean isLeftover(ShimPlan.JobPlan job, String key) {
    String below = key.substring(job.output().length() + 1);
    return below.contains("_writeonce")
        || below.startsWith(".spark-staging")
        || below.startsWith(".hive-staging")
        || (!job.cleanupSkipped() && !job.cleanupFailuresIgnored() && below.contains("_temporary"));
  }

  private String failedNote(String key) {
    return key.equals(failedKey())
        ? " (its completion was made to fail"
            + (plan.faults().failedByForeignAbort() ? " by another tool's abort" : " by the store")
            + "; the failure did not reach the job commit)"
        : "";
  }

  /** What the schedule did, for a failure's report. */
  @Override
  public String describe() {
    StringBuilder out = new StringBuilder(plan.toString());
    for (JobRun run : runs) {
      out.append("\n  job ").append(run.plan.index()).append(": ").append(run.result);
      if (run.failure != null) {
        out.append(" (").append(run.failure).append(")");
      }
    }
    if (hive != null) {
      out.append("\n  hive: ").append(hive.result);
      if (hive.failure != null) {
        out.append(" (").append(hive.failure).append(")");
      }
    }
    events.forEach(event -> out.append("\n  ").append(event));
    out.append("\n  steps ")
        .append(world.scheduler().steps())
        .append(", requests ")
        .append(world.requests());
    if (tracing) {
      for (Process process : processes) {
        out.append("\n  ").append(process.name()).append(": ").append(process.trace());
      }
    }
    return out.toString();
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  private static String text(byte[] bytes) {
    return new String(bytes, StandardCharsets.UTF_8);
  }

  /** The objects of the store, for a failure's report. */
  NavigableMap<String, MemoryS3.StoredObject> objects() {
    return world.store().objects(SharedS3.BUCKET, "");
  }
}
