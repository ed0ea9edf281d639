package dev.writeonce.spark.streaming;

import dev.writeonce.core.testing.s3.Handling;
import dev.writeonce.core.testing.s3.MemoryS3;
import dev.writeonce.core.testing.s3.MemoryS3ClientFactory;
import dev.writeonce.core.testing.s3.MemoryS3Settings;
import dev.writeonce.core.testing.s3.StoreRequest;
import dev.writeonce.core.testing.simulation.Plan;
import dev.writeonce.core.testing.simulation.World;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileAlreadyExistsException;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.execution.streaming.checkpointing.CheckpointFileManager.CancellableFSDataOutputStream;

/**
 * Runs of one streaming query writing the batches of its offsets log through {@link
 * WriteonceCheckpointFileManager}, over the in-memory S3 behind Hadoop's real S3AFileSystem. Each
 * step of a schedule is one run writing its next batch, the store losing the answer of a request of
 * it or refusing it unsent, or a run restarting as Spark does (a new manager, going on after the
 * latest batch in the log). The invariants, after every step:
 *
 * <ul>
 *   <li>at most one run's write of a batch returned as written;
 *   <li>the batch's file holds what that run wrote, when runs write different bytes;
 *   <li>a write that returned as written is in the store.
 * </ul>
 *
 * <p>Runs write the same bytes for a batch in half the schedules, as two runs of a query plan the
 * same offsets: only the writer id in the object's metadata tells them apart.
 */
final class CheckpointSimulation implements World {

  /** What a step does. */
  enum Action {
    /** Spark's check that the next batch is not in the log yet. */
    CHECK,
    /** The write of the batch the run checked. */
    WRITE,
    RESTART
  }

  /** What the store does to the step's requests. */
  enum Fault {
    NONE,
    /** The PUT is stored, its answer lost. */
    PUT_ANSWER_LOST,
    /** The PUT is refused unsent (503). */
    PUT_REFUSED,
    /** The HEAD after a refused or unanswered PUT loses its answer. */
    HEAD_ANSWER_LOST,
    /** The existence check before the write loses its answer. */
    LIST_ANSWER_LOST
  }

  record Step(int run, Action action, Fault fault) {
    @Override
    public String toString() {
      return "run-" + run + " " + action + (fault == Fault.NONE ? "" : " " + fault);
    }
  }

  /**
   * One schedule.
   *
   * @param plantIgnoredCondition the store ignores If-None-Match: the fault the simulation must
   *     find
   */
  record CheckpointPlan(
      long seed, int runs, boolean sameBytes, boolean plantIgnoredCondition, List<Step> steps)
      implements Plan<CheckpointPlan> {

    static CheckpointPlan generate(long seed) {
      return generate(seed, false);
    }

    static CheckpointPlan generate(long seed, boolean plant) {
      Random random = new Random(seed);
      int runs = 2 + random.nextInt(2);
      List<Step> steps = new ArrayList<>();
      int length = 6 + random.nextInt(20);
      for (int i = 0; i < length; i++) {
        int run = random.nextInt(runs);
        int draw = random.nextInt(7);
        Action action = draw == 0 ? Action.RESTART : draw < 4 ? Action.CHECK : Action.WRITE;
        Fault fault =
            action == Action.RESTART || random.nextInt(3) != 0
                ? Fault.NONE
                : Fault.values()[1 + random.nextInt(Fault.values().length - 1)];
        steps.add(new Step(run, action, fault));
      }
      return new CheckpointPlan(seed, runs, random.nextBoolean(), plant, steps);
    }

    @Override
    public List<CheckpointPlan> simpler() {
      List<CheckpointPlan> simpler = new ArrayList<>();
      for (int i = 0; i < steps.size(); i++) {
        List<Step> fewer = new ArrayList<>(steps);
        fewer.remove(i);
        simpler.add(new CheckpointPlan(seed, runs, sameBytes, plantIgnoredCondition, fewer));
      }
      for (int i = 0; i < steps.size(); i++) {
        if (steps.get(i).fault() != Fault.NONE) {
          List<Step> plainer = new ArrayList<>(steps);
          plainer.set(i, new Step(steps.get(i).run(), steps.get(i).action(), Fault.NONE));
          simpler.add(new CheckpointPlan(seed, runs, sameBytes, plantIgnoredCondition, plainer));
        }
      }
      return simpler;
    }

    @Override
    public String printed() {
      return "seed "
          + seed
          + ", "
          + runs
          + " runs, "
          + (sameBytes ? "same bytes" : "bytes per run")
          + (plantIgnoredCondition ? ", the store ignores If-None-Match" : "")
          + ": "
          + steps;
    }
  }

  private static final String BUCKET = "bucket";
  private static final Path LOG = new Path("s3a://bucket/query/checkpoint/offsets");

  private final CheckpointPlan plan;
  private final StringBuilder trace = new StringBuilder();

  CheckpointSimulation(CheckpointPlan plan, boolean traced) {
    this.plan = plan;
  }

  /** A run of the query: its manager lives until the run restarts. */
  private static final class Run {
    WriteonceCheckpointFileManager manager;
    long nextBatch;
    boolean checked;
    boolean stopped;
    int incarnation;
  }

  @Override
  public List<String> run() throws Exception {
    MemoryS3 store = new MemoryS3(plan.seed());
    store.ignorePutIfNoneMatch(plan.plantIgnoredCondition());
    Fault[] current = {Fault.NONE};
    boolean[] putSeen = {false};
    String endpoint =
        MemoryS3ClientFactory.register(store, request -> handle(request, current[0], putSeen));
    List<String> violations = new ArrayList<>();
    try {
      Configuration conf = MemoryS3Settings.s3aConfiguration(endpoint);
      List<Run> runs = new ArrayList<>();
      for (int r = 0; r < plan.runs(); r++) {
        Run run = new Run();
        run.manager = new WriteonceCheckpointFileManager(LOG, conf);
        runs.add(run);
      }
      Map<Long, Set<Integer>> written = new TreeMap<>();
      Map<Long, String> writtenBytes = new HashMap<>();
      for (Step step : plan.steps()) {
        Run run = runs.get(step.run());
        current[0] = step.fault();
        putSeen[0] = false;
        if (step.action() == Action.RESTART) {
          run.manager = new WriteonceCheckpointFileManager(LOG, conf);
          run.nextBatch = latestBatch(store) + 1;
          run.stopped = false;
          run.checked = false;
          run.incarnation++;
          trace.append(step).append(": goes on at batch ").append(run.nextBatch).append('\n');
        } else if (!run.stopped && (step.action() == Action.CHECK) != run.checked) {
          long batch = run.nextBatch;
          String bytes =
              plan.sameBytes()
                  ? "v1\nbatch " + batch + "\n"
                  : "v1\nbatch " + batch + " by run-" + step.run() + "." + run.incarnation + "\n";
          Path file = new Path(LOG, Long.toString(batch));
          String outcome;
          try {
            if (step.action() == Action.CHECK) {
              if (run.manager.exists(file)) {
                outcome = "found it written: goes on";
                run.nextBatch++;
              } else {
                outcome = "will write it";
                run.checked = true;
              }
            } else {
              CancellableFSDataOutputStream out = run.manager.createAtomic(file, false);
              out.write(bytes.getBytes(StandardCharsets.UTF_8));
              try {
                out.close();
              } catch (IOException e) {
                out.cancel();
                throw e;
              }
              outcome = "wrote it";
              written.computeIfAbsent(batch, b -> new HashSet<>()).add(step.run());
              writtenBytes.put(batch, bytes);
              run.nextBatch++;
              run.checked = false;
            }
          } catch (FileAlreadyExistsException e) {
            outcome = "lost it to another run: stops";
            run.stopped = true;
          } catch (IOException | RuntimeException e) {
            outcome = "failed (" + e.getClass().getSimpleName() + "): stops";
            run.stopped = true;
          }
          trace.append(step).append(": batch ").append(batch).append(' ').append(outcome);
          trace.append('\n');
        }
        current[0] = Fault.NONE;
        check(store, written, writtenBytes, violations);
        if (!violations.isEmpty()) {
          break;
        }
      }
    } finally {
      MemoryS3ClientFactory.unregister(endpoint);
    }
    return violations;
  }

  private static Handling handle(StoreRequest request, Fault fault, boolean[] putSeen) {
    switch (fault) {
      case PUT_ANSWER_LOST, PUT_REFUSED -> {
        if (request.operation().equals("PutObject") && !putSeen[0]) {
          putSeen[0] = true;
          return fault == Fault.PUT_ANSWER_LOST ? Handling.LOSE_ANSWER : Handling.FAIL_UNSENT;
        }
      }
      case HEAD_ANSWER_LOST -> {
        if (request.operation().equals("HeadObject")) {
          return Handling.LOSE_ANSWER;
        }
      }
      case LIST_ANSWER_LOST -> {
        if (request.operation().startsWith("ListObjects")) {
          return Handling.LOSE_ANSWER;
        }
      }
      default -> {}
    }
    return Handling.PROCEED;
  }

  private static long latestBatch(MemoryS3 store) {
    long latest = -1;
    for (String key : store.keys(BUCKET)) {
      String name = key.substring(key.lastIndexOf('/') + 1);
      if (name.matches("\\d+")) {
        latest = Math.max(latest, Long.parseLong(name));
      }
    }
    return latest;
  }

  private void check(
      MemoryS3 store,
      Map<Long, Set<Integer>> written,
      Map<Long, String> writtenBytes,
      List<String> violations) {
    for (Map.Entry<Long, Set<Integer>> batch : written.entrySet()) {
      if (batch.getValue().size() > 1) {
        violations.add("batch " + batch.getKey() + " written by runs " + batch.getValue());
      }
      String key = "query/checkpoint/offsets/" + batch.getKey();
      var stored = store.getObject(BUCKET, key);
      if (stored.isEmpty()) {
        violations.add("batch " + batch.getKey() + " returned as written, and is not in the store");
      } else if (!plan.sameBytes()
          && !new String(stored.get(), StandardCharsets.UTF_8)
              .equals(writtenBytes.get(batch.getKey()))) {
        violations.add(
            "batch " + batch.getKey() + " holds another run's bytes than the run told it wrote");
      }
    }
  }

  @Override
  public String describe() {
    return trace.toString();
  }
}
