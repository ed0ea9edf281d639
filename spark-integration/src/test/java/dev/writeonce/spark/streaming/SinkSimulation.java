package dev.writeonce.spark.streaming;

import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.json.ManifestFormats;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.TaskManifest;
import dev.writeonce.core.testing.s3.Handling;
import dev.writeonce.core.testing.s3.MemoryS3;
import dev.writeonce.core.testing.s3.MemoryS3ClientFactory;
import dev.writeonce.core.testing.s3.MemoryS3Settings;
import dev.writeonce.core.testing.s3.RequestHook;
import dev.writeonce.core.testing.s3.StoreRequest;
import dev.writeonce.core.testing.simulation.Crash;
import dev.writeonce.core.testing.simulation.FaultRelay;
import dev.writeonce.core.testing.simulation.Faults;
import dev.writeonce.core.testing.simulation.Plan;
import dev.writeonce.core.testing.simulation.Scheduler;
import dev.writeonce.core.testing.simulation.SimClock;
import dev.writeonce.core.testing.simulation.SimProcess;
import dev.writeonce.core.testing.simulation.World;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.security.PrivilegedExceptionAction;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.spark.internal.io.FileCommitProtocol.TaskCommitMessage;
import org.apache.spark.internal.io.FileNameSpec;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.execution.streaming.sinks.FileStreamSinkLog;
import scala.Option;

/**
 * Runs of one streaming query committing micro-batches to one file sink through {@link
 * WriteonceStreamingCommitProtocol}, its log through {@link WriteonceCheckpointFileManager} and
 * Spark's own {@code FileStreamSinkLog}, over the in-memory S3 behind Hadoop's real S3AFileSystem,
 * interleaved request by request by the shared {@link Scheduler}. Each run is a simulated JVM of
 * its own (its file system instances, its counts of the sink's settles) that may crash at a
 * request, see requests refused or their answers lost, and start again as the query's restart does:
 * it reopens the sink's log and goes on after its latest batch. Readers of the sink open its log at
 * any point. A batch is driven as Spark's file sink drives it: skipped when the log holds it, else
 * the job's setup, its tasks (a first attempt failing before or after its commit, in some plans),
 * the job's commit, and its abort after any failure.
 *
 * <p>After every step:
 *
 * <ul>
 *   <li>every data file visible under the sink is one the log lists (no file of a losing or failed
 *       batch, for a reader of the directory);
 *   <li>no batch's part is visible twice;
 *   <li>the files of every batch whose commit returned are visible.
 * </ul>
 *
 * <p>Once every actor has ended, a run without faults opens the log and commits one more batch;
 * then every file the log lists is visible, every batch up to the latest holds each of its parts
 * once, no record or intent is left under {@code _writeonce/}, and no upload is open.
 */
final class SinkSimulation implements World {

  /** How a task's first attempt fails, in plans that retry one. */
  enum Retry {
    NONE,
    /** The attempt fails after writing its file, and Spark aborts it. */
    FAILED_BEFORE_COMMIT,
    /** The attempt commits, then its executor is lost with the commit's message. */
    LOST_AFTER_COMMIT,
    /**
     * The attempt's executor is taken for lost before its commit, which it then makes after the
     * batch committed (a network partition): its intent and its upload land late.
     */
    ZOMBIE_AFTER_JOB
  }

  /**
   * One schedule.
   *
   * @param runs per run of the query, the faults of each of its incarnations (a restart after a
   *     crash or a failed batch starts the next)
   * @param readers per reader of the sink, its faults and how many steps it lets pass first
   * @param plantIgnoredCondition the store ignores If-None-Match: the fault the simulation must
   *     find
   */
  record SinkPlan(
      long seed,
      int batches,
      int tasks,
      boolean partitioned,
      Retry retry,
      List<List<Faults>> runs,
      List<Reader> readers,
      boolean plantIgnoredCondition)
      implements Plan<SinkPlan> {

    record Reader(Faults faults, int waitSteps) {}

    static SinkPlan generate(long seed, boolean plant) {
      Random random = new Random(seed);
      int batches = 2 + random.nextInt(3);
      int tasks = 1 + random.nextInt(2);
      boolean partitioned = random.nextBoolean();
      Retry retry = random.nextInt(3) == 0 ? Retry.values()[1 + random.nextInt(3)] : Retry.NONE;
      List<List<Faults>> runs = new ArrayList<>();
      int runCount = 2 + random.nextInt(2);
      for (int r = 0; r < runCount; r++) {
        List<Faults> incarnations = new ArrayList<>();
        int count = 1 + random.nextInt(2);
        for (int i = 0; i < count; i++) {
          incarnations.add(faults(random, 40 * batches));
        }
        runs.add(incarnations);
      }
      List<Reader> readers = new ArrayList<>();
      int readerCount = random.nextInt(3);
      for (int i = 0; i < readerCount; i++) {
        readers.add(new Reader(faults(random, 12), random.nextInt(60)));
      }
      return new SinkPlan(seed, batches, tasks, partitioned, retry, runs, readers, plant);
    }

    private static Faults faults(Random random, int requests) {
      Faults faults = Faults.NONE;
      if (random.nextBoolean()) {
        faults =
            faults.withCrash(
                1 + random.nextInt(requests),
                random.nextBoolean() ? Faults.AtCrash.UNSENT : Faults.AtCrash.APPLIED);
      }
      if (random.nextInt(3) == 0) {
        faults = faults.withRates(random.nextBoolean() ? 0.05 : 0, 0.05);
      }
      return faults;
    }

    @Override
    public List<SinkPlan> simpler() {
      List<SinkPlan> simpler = new ArrayList<>();
      if (partitioned) {
        simpler.add(
            new SinkPlan(seed, batches, tasks, false, retry, runs, readers, plantIgnoredCondition));
      }
      if (batches > 1) {
        simpler.add(with(batches - 1, tasks, retry, runs, readers));
      }
      if (tasks > 1) {
        simpler.add(with(batches, tasks - 1, retry, runs, readers));
      }
      if (retry != Retry.NONE) {
        simpler.add(with(batches, tasks, Retry.NONE, runs, readers));
      }
      for (int i = 0; i < readers.size(); i++) {
        List<Reader> fewer = new ArrayList<>(readers);
        fewer.remove(i);
        simpler.add(with(batches, tasks, retry, runs, fewer));
      }
      for (int r = 0; r < runs.size(); r++) {
        if (runs.size() > 1) {
          List<List<Faults>> fewer = new ArrayList<>(runs);
          fewer.remove(r);
          simpler.add(with(batches, tasks, retry, fewer, readers));
        }
        List<Faults> incarnations = runs.get(r);
        for (int i = 0; i < incarnations.size(); i++) {
          if (incarnations.size() > 1) {
            List<Faults> shorter = new ArrayList<>(incarnations);
            shorter.remove(i);
            simpler.add(withRun(r, shorter));
          }
          Faults faults = incarnations.get(i);
          if (faults.crashAt() != 0) {
            List<Faults> plainer = new ArrayList<>(incarnations);
            plainer.set(i, faults.withCrash(0, Faults.AtCrash.UNSENT));
            simpler.add(withRun(r, plainer));
          }
          if (faults.transientRate() + faults.lostAnswerRate() > 0) {
            List<Faults> plainer = new ArrayList<>(incarnations);
            plainer.set(i, faults.withRates(0, 0));
            simpler.add(withRun(r, plainer));
          }
        }
      }
      return simpler;
    }

    private SinkPlan with(
        int batches, int tasks, Retry retry, List<List<Faults>> runs, List<Reader> readers) {
      return new SinkPlan(
          seed, batches, tasks, partitioned, retry, runs, readers, plantIgnoredCondition);
    }

    private SinkPlan withRun(int r, List<Faults> incarnations) {
      List<List<Faults>> changed = new ArrayList<>(runs);
      changed.set(r, incarnations);
      return with(batches, tasks, retry, changed, readers);
    }

    @Override
    public String printed() {
      StringBuilder text = new StringBuilder("seed " + seed + ", ");
      text.append(batches).append(" batches per run, ").append(tasks).append(" tasks");
      if (partitioned) {
        text.append(", into the partition ").append(PARTITION);
      }
      if (retry != Retry.NONE) {
        text.append(", the first task's first attempt ").append(retry);
      }
      if (plantIgnoredCondition) {
        text.append(", the store ignores If-None-Match");
      }
      for (int r = 0; r < runs.size(); r++) {
        text.append("\n  run-").append(r).append(": ");
        for (Faults faults : runs.get(r)) {
          text.append('[').append(printed(faults)).append("] ");
        }
      }
      for (int i = 0; i < readers.size(); i++) {
        text.append("\n  reader-").append(i).append(" after ").append(readers.get(i).waitSteps());
        text.append(" steps: [").append(printed(readers.get(i).faults())).append(']');
      }
      return text.toString();
    }

    private static String printed(Faults faults) {
      List<String> parts = new ArrayList<>();
      if (faults.crashAt() != 0) {
        parts.add("crash at request " + faults.crashAt() + " " + faults.atCrash());
      }
      if (faults.transientRate() > 0) {
        parts.add("refused " + faults.transientRate());
      }
      if (faults.lostAnswerRate() > 0) {
        parts.add("answers lost " + faults.lostAnswerRate());
      }
      return parts.isEmpty() ? "no faults" : String.join(", ", parts);
    }
  }

  private static final String BUCKET = "bucket";

  /**
   * A partition directory as Spark names it for the value "12:00 noon": the colon escaped, the
   * space kept.
   */
  static final String PARTITION = "at=12%3A00 noon";

  private static final AtomicLong SINKS = new AtomicLong();
  private static final Pattern PART = Pattern.compile("batch (\\d+) part (\\d+)");

  /** The simulated JVM a thread works for; pool threads inherit their creator's. */
  static final InheritableThreadLocal<SimJvm> CURRENT = new InheritableThreadLocal<>();

  private final SinkPlan plan;
  private final SparkSession spark;
  private final boolean traced;
  private final List<String> trace = Collections.synchronizedList(new ArrayList<>());
  private final String sinkPrefix = "sinks/" + SINKS.incrementAndGet() + "/";
  private final String sink = "s3a://" + BUCKET + "/" + sinkPrefix;
  private final Map<Long, Set<String>> committed = Collections.synchronizedMap(new TreeMap<>());

  /** Uploads the schedule left open in the one case the documentation gives (see checkAtRest). */
  private final List<String> leaks = Collections.synchronizedList(new ArrayList<>());

  /** Schedules that left such an upload, over the JVM's simulations. */
  static final java.util.concurrent.atomic.AtomicInteger SCHEDULES_WITH_LEAKS =
      new java.util.concurrent.atomic.AtomicInteger();

  /** The JVM of each run of a batch, by the run id its files carry. */
  private final Map<String, SimJvm> runs = new java.util.concurrent.ConcurrentHashMap<>();

  /** Runs whose intents another JVM removed while the run's own JVM was still alive. */
  private final Set<String> settledWhileLive = java.util.concurrent.ConcurrentHashMap.newKeySet();

  private static final Pattern RUN_ID =
      Pattern.compile("([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})");

  private MemoryS3 store;
  private Scheduler scheduler;

  SinkSimulation(SinkPlan plan, SparkSession spark, boolean traced) {
    this.plan = plan;
    this.spark = spark;
    this.traced = traced;
  }

  /** A simulated JVM: its user (Hadoop's cache gives it instances of its own), its faults. */
  final class SimJvm {
    final String name;
    final SimProcess process;
    final FaultRelay relay;
    final UserGroupInformation user;

    SimJvm(String name, Faults faults, long seed, boolean scheduled) {
      this.name = name;
      this.process = new SimProcess(name);
      this.relay =
          new FaultRelay(
              scheduled ? scheduler : null,
              null,
              process,
              SimClock.of(store::nowMillis, store::advanceMillis),
              faults,
              seed,
              null);
      this.user = UserGroupInformation.createRemoteUser(plan.seed() + "-" + name);
    }

    /** Runs work as this JVM, then closes what it opened; its crash ends the work quietly. */
    void run(Work work) {
      CURRENT.set(this);
      try {
        user.doAs(
            (PrivilegedExceptionAction<Void>)
                () -> {
                  work.run();
                  return null;
                });
      } catch (Crash crash) {
        note(name + " crashed");
      } catch (Exception | Error e) {
        note(name + " stopped: " + e);
      } finally {
        process.die();
        try {
          FileSystem.closeAllForUGI(user);
        } catch (Throwable ignored) {
          // a dead JVM's instances reach nothing
        }
        CURRENT.remove();
      }
    }
  }

  @FunctionalInterface
  interface Work {
    void run() throws Exception;
  }

  private void note(String line) {
    if (traced) {
      trace.add(line);
    }
  }

  @Override
  public List<String> run() throws Exception {
    store = new MemoryS3(plan.seed());
    store.createBucket(BUCKET);
    store.ignorePutIfNoneMatch(plan.plantIgnoredCondition());
    scheduler = new Scheduler(plan.seed());
    // Runs' ids from the seed: the settle takes runs in the order of their ids.
    Random ids = new Random(plan.seed());
    WriteonceStreamingCommitProtocol.runIds = () -> new UUID(ids.nextLong(), ids.nextLong());
    String endpoint = MemoryS3ClientFactory.register(store, new Hook());
    List<String> violations = Collections.synchronizedList(new ArrayList<>());
    try {
      Configuration settings = new Configuration(false);
      MemoryS3Settings.apply(settings, endpoint);
      // One instance per simulated JVM (its user) and bucket, as in a real process.
      settings.setBoolean("fs.s3a.impl.disable.cache", false);
      settings.setInt("writeonce.commit.threads", 1);
      for (Map.Entry<String, String> setting : settings) {
        spark.conf().set(setting.getKey(), setting.getValue());
      }
      for (int r = 0; r < plan.runs().size(); r++) {
        int run = r;
        scheduler.spawn(
            "run-" + r,
            () -> {
              List<Faults> incarnations = plan.runs().get(run);
              for (int i = 0; i < incarnations.size(); i++) {
                SimJvm jvm =
                    new SimJvm(
                        "run-" + run + "." + i, incarnations.get(i), plan.seed() + run, true);
                jvm.run(() -> query(jvm));
              }
            });
      }
      for (int r = 0; r < plan.readers().size(); r++) {
        SinkPlan.Reader reader = plan.readers().get(r);
        String name = "reader-" + r;
        long seed = plan.seed() - r - 1;
        scheduler.spawn(
            name,
            () -> {
              for (int i = 0; i < reader.waitSteps(); i++) {
                scheduler.yieldTurn();
              }
              SimJvm jvm = new SimJvm(name, reader.faults(), seed, true);
              jvm.run(() -> openLog());
            });
      }
      scheduler.beforeEachStep(() -> checkAlways(violations));
      scheduler.run();
      scheduler.errors().forEach(error -> violations.add("an actor " + error));
      checkAlways(violations);
      if (violations.isEmpty()) {
        SimJvm last = new SimJvm("last", Faults.NONE, plan.seed(), false);
        String[] failure = {null};
        last.run(
            () -> {
              try {
                FileStreamSinkLog log = openLog();
                long batch = latest(log) + 1;
                commitBatch(log, batch, Retry.NONE);
              } catch (Exception e) {
                failure[0] = e.toString();
              }
            });
        if (failure[0] != null) {
          violations.add("a run without faults could not commit the next batch: " + failure[0]);
        }
        checkAlways(violations);
        checkAtRest(violations);
      }
    } finally {
      MemoryS3ClientFactory.unregister(endpoint);
      WriteonceStreamingCommitProtocol.runIds = UUID::randomUUID;
    }
    return new ArrayList<>(new java.util.LinkedHashSet<>(violations));
  }

  /** A run of the query: it opens the sink's log, then commits its batches as the sink does. */
  private void query(SimJvm jvm) throws Exception {
    FileStreamSinkLog log = openLog();
    long next = latest(log) + 1;
    note(jvm.name + " starts at batch " + next);
    for (int i = 0; i < plan.batches(); i++) {
      long batch = next++;
      if (batch <= latest(log)) {
        note(jvm.name + " skips batch " + batch + ": the log holds it");
        continue;
      }
      commitBatch(log, batch, plan.retry());
    }
  }

  /** Opening the sink's log, as a query's start and every reader of the sink do. */
  private FileStreamSinkLog openLog() {
    return new FileStreamSinkLog(
        FileStreamSinkLog.VERSION(), spark, sink + "_spark_metadata", Option.empty());
  }

  private static long latest(FileStreamSinkLog log) {
    Option<Object> latest = log.getLatestBatchId();
    return latest.isDefined() ? (Long) latest.get() : -1;
  }

  /** One batch as Spark's file sink and its writer drive the commit protocol. */
  private void commitBatch(FileStreamSinkLog log, long batch, Retry retry) throws Exception {
    String name = CURRENT.get().name;
    Job job = Job.getInstance(spark.sessionState().newHadoopConf());
    WriteonceStreamingCommitProtocol protocol =
        new WriteonceStreamingCommitProtocol(Long.toString(batch), sink);
    protocol.setupManifestOptions(log, batch);
    List<TaskCommitMessage> messages = new ArrayList<>();
    WriteonceStreamingCommitProtocol zombie = null;
    TaskAttemptContext zombieContext = null;
    try {
      protocol.setupJob(job);
      for (int task = 0; task < plan.tasks(); task++) {
        int attempts = task == 0 && retry != Retry.NONE ? 2 : 1;
        for (int attempt = 0; attempt < attempts; attempt++) {
          TaskAttemptContext context =
              new TaskAttemptContextImpl(
                  new Configuration(job.getConfiguration()),
                  new TaskAttemptID("sim", (int) batch, TaskType.MAP, task, attempt));
          boolean firstOfTwo = attempt + 1 < attempts;
          if (firstOfTwo && retry == Retry.ZOMBIE_AFTER_JOB) {
            // On another machine: the job's cleanup of the driver's local files does not reach it.
            String local = context.getConfiguration().get(CommitterConfig.STAGING_DIR);
            context.getConfiguration().set(CommitterConfig.STAGING_DIR, local + "/lost-executor");
          }
          // Each task attempt has its own copy of the protocol, as Spark ships it to executors.
          WriteonceStreamingCommitProtocol taskSide = shipped(protocol);
          TaskCommitMessage message;
          try {
            taskSide.setupTask(context);
            String file =
                taskSide.newTaskTempFile(
                    context,
                    plan.partitioned() ? Option.apply(PARTITION) : Option.empty(),
                    new FileNameSpec("", ".c000.snappy.parquet"));
            runs.put(runOf(file), CURRENT.get());
            writeLocal(file, "batch " + batch + " part " + task, context.getConfiguration());
            if (firstOfTwo && retry == Retry.FAILED_BEFORE_COMMIT) {
              throw new IOException("the task's first attempt fails before its commit");
            }
            if (firstOfTwo && retry == Retry.ZOMBIE_AFTER_JOB) {
              zombie = taskSide;
              zombieContext = context;
              continue;
            }
            message = taskSide.commitTask(context);
          } catch (Crash crash) {
            throw crash;
          } catch (Exception | Error e) {
            // Spark's writer aborts a failed attempt; the stage fails unless it was the first of
            // two.
            taskSide.abortTask(context);
            if (firstOfTwo) {
              continue;
            }
            throw e;
          }
          if (!firstOfTwo) {
            protocol.onTaskCommit(message);
            messages.add(message);
          }
        }
      }
      protocol.commitJob(job, scala.jdk.javaapi.CollectionConverters.asScala(messages).toList());
    } catch (Crash crash) {
      throw crash;
    } catch (Exception | Error e) {
      note(name + " batch " + batch + " failed: " + e);
      try {
        protocol.abortJob(job);
      } catch (Crash crash) {
        throw crash;
      } catch (Exception | Error ignored) {
        note(name + " batch " + batch + " abort failed: " + ignored);
      }
      throw e;
    }
    Set<String> keys = new TreeSet<>();
    for (TaskCommitMessage message : messages) {
      for (PendingUpload upload : manifestOf(message).uploads()) {
        keys.add(upload.key());
      }
    }
    note(name + " committed batch " + batch + ": " + keys);
    if (zombie != null) {
      try {
        zombie.commitTask(zombieContext);
        note(name + " batch " + batch + ": the zombie attempt committed after the batch");
      } catch (Crash crash) {
        throw crash;
      } catch (Exception | Error e) {
        note(name + " batch " + batch + ": the zombie attempt failed: " + e);
      }
    }
    committed.merge(
        batch,
        keys,
        (a, b) -> {
          Set<String> both = new TreeSet<>(a);
          both.addAll(b);
          return both;
        });
  }

  /** A copy of the protocol as an executor receives it: serialized after the job's setup. */
  private static WriteonceStreamingCommitProtocol shipped(WriteonceStreamingCommitProtocol protocol)
      throws IOException, ClassNotFoundException {
    java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
    try (java.io.ObjectOutputStream out = new java.io.ObjectOutputStream(bytes)) {
      out.writeObject(protocol);
    }
    try (java.io.ObjectInputStream in =
        new java.io.ObjectInputStream(new java.io.ByteArrayInputStream(bytes.toByteArray()))) {
      return (WriteonceStreamingCommitProtocol) in.readObject();
    }
  }

  private static String runOf(String text) {
    Matcher m = RUN_ID.matcher(text);
    return m.find() ? m.group(1) : "";
  }

  private static TaskManifest manifestOf(TaskCommitMessage message) throws FormatException {
    return ManifestFormats.taskManifestFromJson((byte[]) message.obj(), "a task commit message");
  }

  private static void writeLocal(String file, String text, Configuration conf) throws IOException {
    Path path = new Path(file);
    try (OutputStream out = path.getFileSystem(conf).create(path, true)) {
      out.write(text.getBytes(StandardCharsets.UTF_8));
    }
  }

  /** The data files visible under the sink, by key. */
  private Map<String, String> visibleFiles() {
    Map<String, String> files = new TreeMap<>();
    store
        .objects(BUCKET, sinkPrefix)
        .forEach(
            (key, object) -> {
              String name = key.substring(sinkPrefix.length());
              if (!name.startsWith("_spark_metadata/") && !name.startsWith("_writeonce/")) {
                files.put(key, new String(object.bytes(), StandardCharsets.UTF_8));
              }
            });
    return files;
  }

  /**
   * Every file any of the log's files lists, by key, read as Spark's reader of the sink reads a
   * listed path ({@code SinkFileStatus.toFileStatus}: a URI, decoded); a path that is no URI makes
   * the whole log unreadable.
   */
  private Set<String> listedFiles(List<String> violations) {
    Set<String> listed = new HashSet<>();
    Pattern path = Pattern.compile("\"path\":\"([^\"]+)\"");
    store
        .objects(BUCKET, sinkPrefix + "_spark_metadata/")
        .forEach(
            (key, object) -> {
              Matcher m = path.matcher(new String(object.bytes(), StandardCharsets.UTF_8));
              while (m.find()) {
                try {
                  URI uri = new Path(new URI(m.group(1))).toUri();
                  listed.add(uri.getPath().substring(1));
                } catch (URISyntaxException | IllegalArgumentException e) {
                  violations.add("the sink log is unreadable: " + key + " lists " + m.group(1));
                }
              }
            });
    return listed;
  }

  private void checkAlways(List<String> violations) {
    Map<String, String> visible = visibleFiles();
    Set<String> listed = listedFiles(violations);
    Map<String, String> parts = new HashMap<>();
    for (Map.Entry<String, String> file : visible.entrySet()) {
      if (!listed.contains(file.getKey())) {
        violations.add("visible and not in the sink log: " + file.getKey());
      }
      String other = parts.put(file.getValue(), file.getKey());
      if (other != null) {
        violations.add(file.getValue() + " visible twice: " + other + " and " + file.getKey());
      }
    }
    synchronized (committed) {
      committed.forEach(
          (batch, keys) ->
              keys.stream()
                  .filter(key -> !visible.containsKey(key))
                  .forEach(
                      key ->
                          violations.add(
                              "batch "
                                  + batch
                                  + " returned as committed and its file is gone: "
                                  + key)));
    }
  }

  private void checkAtRest(List<String> violations) {
    Map<String, String> visible = visibleFiles();
    for (String key : listedFiles(violations)) {
      if (!visible.containsKey(key)) {
        violations.add("listed in the sink log and never made: " + key);
      }
    }
    long latest = -1;
    for (String key : store.objects(BUCKET, sinkPrefix + "_spark_metadata/").keySet()) {
      String name = key.substring(key.lastIndexOf('/') + 1);
      if (name.matches("\\d+(\\.compact)?")) {
        latest = Math.max(latest, Long.parseLong(name.replace(".compact", "")));
      }
    }
    Set<String> parts = new TreeSet<>();
    for (String text : visible.values()) {
      Matcher m = PART.matcher(text);
      if (m.matches()) {
        parts.add(text);
      } else {
        violations.add("a data file holds " + text);
      }
    }
    for (long batch = 0; batch <= latest; batch++) {
      for (int part = 0; part < plan.tasks(); part++) {
        if (!parts.contains("batch " + batch + " part " + part)) {
          violations.add("batch " + batch + " part " + part + " is in no visible file");
        }
      }
    }
    List<String> left = new ArrayList<>(store.objects(BUCKET, sinkPrefix + "_writeonce/").keySet());
    if (!left.isEmpty()) {
      violations.add("left under _writeonce/: " + left);
    }
    List<String> open = new ArrayList<>();
    for (MemoryS3.OpenUpload upload : store.openUploads(BUCKET)) {
      if (settledWhileLive.contains(runOf(upload.key()))) {
        // The documented leak: another JVM settled this run's intents while an attempt of it could
        // still start the upload, whose id the run then lost with its answer or its JVM.
        // Invisible, and reaped by the bucket's lifecycle rule.
        leaks.add(upload.key());
      } else {
        open.add(upload.key());
      }
    }
    if (!open.isEmpty()) {
      violations.add("uploads left open: " + open);
    }
    if (!leaks.isEmpty()) {
      SCHEDULES_WITH_LEAKS.incrementAndGet();
    }
  }

  /** Every request goes through the relay of the JVM that sends it. */
  private final class Hook implements RequestHook {
    @Override
    public Handling before(StoreRequest request) {
      SimJvm jvm = CURRENT.get();
      if (jvm == null) {
        return Handling.PROCEED;
      }
      FaultRelay.Request next = jvm.relay.next();
      if (request.operation().equals("DeleteObjects") && !next.fate().crashed()) {
        for (String key : request.keys()) {
          SimJvm owner = runs.get(runOf(key));
          if (key.contains("/intents/") && owner != null && owner != jvm && !owner.process.dead()) {
            settledWhileLive.add(runOf(key));
          }
        }
      }
      Handling outcome =
          switch (next.fate()) {
            case CRASH, CRASH_LANDS_LATE, DEAD -> throw new Crash(jvm.name);
            case CRASH_APPLIED, LOSE_ANSWER -> Handling.LOSE_ANSWER;
            case FAIL_UNSENT -> Handling.FAIL_UNSENT;
            case PROCEED -> Handling.PROCEED;
          };
      if (traced) {
        trace.add(
            jvm.name
                + " "
                + next.number()
                + " "
                + request.operation()
                + " "
                + (request.key() == null ? request.keys() : request.key())
                + (outcome == Handling.PROCEED ? "" : " " + outcome)
                + (next.fate().crashed() ? " and crashes" : ""));
      }
      return outcome;
    }
  }

  @Override
  public String describe() {
    synchronized (trace) {
      return String.join("\n", trace);
    }
  }
}
