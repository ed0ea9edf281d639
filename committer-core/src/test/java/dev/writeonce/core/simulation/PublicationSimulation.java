package dev.writeonce.core.simulation;

import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.lease.LeaseLock;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.publish.Generations;
import dev.writeonce.core.publish.MetastoreTable;
import dev.writeonce.core.publish.Publication;
import dev.writeonce.core.simulation.PublicationPlan.CallFault;
import dev.writeonce.core.simulation.PublicationPlan.Engine;
import dev.writeonce.core.simulation.PublicationPlan.StatementPlan;
import dev.writeonce.core.simulation.PublicationPlan.Verb;
import dev.writeonce.core.store.StoreGateway;
import dev.writeonce.core.testing.ForwardingStore;
import dev.writeonce.core.testing.simulation.Faults;
import dev.writeonce.core.testing.simulation.Scheduler;
import dev.writeonce.core.testing.simulation.SimProcess;
import dev.writeonce.core.testing.simulation.World;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.hadoop.conf.Configuration;

/**
 * Runs one {@link PublicationPlan}: statements publishing to table {@code db.t} through the real
 * {@link Publication} and {@link LeaseLock}, on the in-memory store and a metastore that applies
 * each call at once, interleaved request by request by the {@link Scheduler}. Each statement is a
 * process of two threads, its own and the timer that renews its lock; a pause stops both. Returns
 * the violations found; none when publish mode held.
 *
 * <p>After every store request and metastore call the checker asks:
 *
 * <ul>
 *   <li>does a reader going through the metastore see exactly the rows the model says: every
 *       statement whose call landed, as it landed (an append adds to what the partition held, an
 *       overwrite replaces it), and every in-place load that landed in a location the table names?
 *   <li>do no two partitions share a location?
 *   <li>is every file a reader listed within the grace period still there, and every staged file of
 *       a statement still running?
 * </ul>
 *
 * Before every delete it asks whether the object lies under a location any table names, or was
 * written by an outside writer. When every actor has ended, statements without faults run after the
 * grace period, and then no generation may be left that nothing names.
 */
final class PublicationSimulation implements World {

  static final String ROOT = "s3a://bucket/warehouse/t";
  static final Destination ROOT_DESTINATION = Destination.of(ROOT);
  static final String TABLE = "db.t";
  static final String OTHER = "db.other";

  private static final int TICK_MILLIS = 300;

  /** Tokens of rows that are not statements': outside writers' and the other table's files. */
  private static final String OUTSIDE = "O:";

  private final PublicationPlan plan;
  private final SharedStore world;
  private final Metastore metastore = new Metastore();
  private final Map<String, StatementRun> runs = new LinkedHashMap<>();
  private final List<String> violations = new ArrayList<>();

  /** What a reader must see of the table: the tokens of each partition's rows. */
  private Map<String, List<String>> expected = new TreeMap<>();

  /** Files a reader listed, by the store time it listed them. */
  private final List<Map.Entry<Long, Set<String>>> listed = new ArrayList<>();

  /** Staged files of statements still running, by the statement that staged them. */
  private final Map<String, String> staged = new HashMap<>();

  /** Objects outside writers wrote where the table did not read them: never to be deleted. */
  private final Set<String> outsideWritten = new HashSet<>();

  /** Every object outside writers wrote: never the library's to clean up. */
  private final Set<String> outsideAll = new HashSet<>();

  private boolean checking;

  PublicationSimulation(PublicationPlan plan) {
    this(plan, false);
  }

  /** Traced, it prints every store request and metastore call. */
  PublicationSimulation(PublicationPlan plan, boolean traced) {
    this.plan = plan;
    this.world = new SharedStore(traced);
  }

  /** A statement as it runs, for the model. */
  private final class StatementRun {
    final StatementPlan plan;
    final SimProcess process;

    /** The rows it writes to each partition it means to write (its tokens). */
    final Map<String, List<String>> rows = new TreeMap<>();

    volatile boolean ended;
    boolean returnedNormally;
    boolean landed;
    String note;

    StatementRun(StatementPlan plan) {
      this.plan = plan;
      this.process = new SimProcess(plan.run());
    }

    String run() {
      return plan.run();
    }

    /** The generation directory of a partition, relative to the table's root. */
    String generationOf(String fragment) {
      return Generations.partitionDir(run(), fragment);
    }
  }

  @Override
  public List<String> run() {
    world.deleteIfMatchIgnored = plan.deleteIfMatchIgnored();
    setUpTables();
    world.observer = new Checker();
    Scheduler scheduler = new Scheduler(plan.seed());
    for (StatementPlan statement : plan.statements()) {
      StatementRun run = new StatementRun(statement);
      runs.put(run.run(), run);
      addStatement(scheduler, run);
    }
    if (plan.outsideWrites() > 0) {
      addOutsideWriter(scheduler);
    }
    if (plan.other() == PublicationPlan.OtherTable.AT_LIVE_LOCATION) {
      addCatalogUser(scheduler);
    }
    scheduler.run(30_000);
    world.land();
    check("after every actor ended");
    for (StatementRun run : runs.values()) {
      if (run.returnedNormally && !run.landed) {
        violations.add(run.run() + " returned normally, but its rows never reached the table");
      }
    }
    endPhase();
    return violations;
  }

  // ---- the tables ------------------------------------------------------------------------------

  /** The table before any statement: two partitions written in place, as before the mode. */
  private void setUpTables() {
    for (String partition : List.of("p=0", "p=1")) {
      String key = ROOT_DESTINATION.keyOf(partition + "/000000_0");
      String token = "old:" + partition;
      putDirectly(key, token);
      metastore.table.partitions.put(partition, uri(ROOT_DESTINATION.keyOf(partition)));
      metastore.changed();
      expected.put(partition, List.of(token));
    }
    switch (plan.other()) {
      case AT_FIRST_PARTITION -> metastore.createOther(uri(ROOT_DESTINATION.keyOf("p=0")));
      case UNDER_FIRST_PARTITION -> {
        String location = ROOT_DESTINATION.keyOf("p=0/sub");
        putDirectly(location + "/other-0", OUTSIDE + "other-0");
        outsideWritten.add(location + "/other-0");
        metastore.createOther(uri(location));
      }
      default -> {}
    }
  }

  private void putDirectly(String key, String token) {
    try {
      world.memory.putObject(key, token.getBytes(StandardCharsets.UTF_8), false);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  private static URI uri(String key) {
    return URI.create("s3a://" + SharedStore.BUCKET + "/" + key);
  }

  // ---- the statements --------------------------------------------------------------------------

  private Faults faults(int crashAt, int pauseAt, long salt) {
    return Faults.rates(plan.transientRate(), plan.lostAnswerRate())
        .withCrash(crashAt, Faults.AtCrash.UNSENT)
        .withPause(
            pauseAt,
            PublicationPlan.LEASE_MILLIS
                + 5_000
                + (plan.seed() + salt) % PublicationPlan.LEASE_MILLIS)
        .withTicks(TICK_MILLIS);
  }

  private long seed(long salt) {
    return plan.seed() * 1_000_003 + salt;
  }

  private Configuration conf() {
    Configuration conf = new Configuration(false);
    conf.set(Publication.GRACE, PublicationPlan.GRACE_MILLIS + "ms");
    conf.set(CommitterConfig.JOB_LEASE, PublicationPlan.LEASE_MILLIS + "ms");
    conf.set(Publication.WAIT, (PublicationPlan.GRACE_MILLIS * 3 / 4) + "ms");
    return conf;
  }

  private void addStatement(Scheduler scheduler, StatementRun run) {
    Scheduler.Actor[] self = new Scheduler.Actor[2];
    Timer timer = new Timer(run);
    self[0] =
        scheduler.spawn(
            run.run(),
            () -> {
              try {
                SimStore own =
                    new SimStore(
                        world,
                        scheduler,
                        self[0],
                        run.run(),
                        faults(run.plan.crashAt(), run.plan.pauseAt(), run.plan.index()),
                        seed(run.plan.index()),
                        run.process);
                SimStore timers =
                    new SimStore(
                        world,
                        scheduler,
                        self[1],
                        run.run() + " timer",
                        faults(0, 0, 100 + run.plan.index()),
                        seed(100 + run.plan.index()),
                        run.process);
                StoreGateway store =
                    new ForwardingStore(own) {
                      @Override
                      protected StoreGateway delegate() {
                        return Thread.currentThread() == timer.thread ? timers : own;
                      }
                    };
                waitToStart(scheduler, run.plan.startAfterMillis());
                statement(scheduler, run, own, store, timer);
              } finally {
                run.ended = true;
              }
            });
    self[1] = scheduler.spawn(run.run() + " timer", () -> timer.loop(scheduler));
  }

  /** The statement's first request comes this much later on the store's clock. */
  private void waitToStart(Scheduler scheduler, long millis) {
    long left = millis;
    while (left > 0) {
      long step = Math.min(left, 2_000);
      world.memory.advanceClock(step);
      left -= step;
      scheduler.yieldTurn();
    }
  }

  /**
   * The timer thread of a statement's process: runs the renewals of its lock and of its claim when
   * due, as the shared renewer does, unless the process is paused or dead.
   */
  private final class Timer {
    final StatementRun run;
    volatile Thread thread;
    final List<long[]> schedules = new java.util.concurrent.CopyOnWriteArrayList<>();
    final Map<long[], Runnable> renewals = new java.util.concurrent.ConcurrentHashMap<>();

    Timer(StatementRun run) {
      this.run = run;
    }

    /** A renewal every {@code periodMillis}; the entry holds {period, next due}. */
    Runnable schedule(long periodMillis, Runnable renew) {
      long period = Math.max(1, periodMillis);
      long[] entry = {period, world.memory.clockMillis() + period};
      renewals.put(entry, renew);
      schedules.add(entry);
      return () -> {
        schedules.remove(entry);
        renewals.remove(entry);
      };
    }

    private long[] due() {
      for (long[] entry : schedules) {
        if (world.memory.clockMillis() >= entry[1]) {
          return entry;
        }
      }
      return null;
    }

    void loop(Scheduler scheduler) {
      thread = Thread.currentThread();
      while (true) {
        scheduler.blockUntil(
            () -> run.ended || run.process.dead() || !run.process.paused() && due() != null);
        long[] entry = due();
        if (run.ended || run.process.dead() || entry == null) {
          return;
        }
        entry[1] = world.memory.clockMillis() + entry[0];
        Runnable renewal = renewals.get(entry);
        if (renewal != null) {
          renewal.run();
        }
      }
    }
  }

  private void statement(
      Scheduler scheduler, StatementRun run, SimStore own, StoreGateway store, Timer timer) {
    StatementTable view = new StatementTable(scheduler, run);
    LeaseLock.Timing timing =
        new LeaseLock.Timing(
            world.memory::clockMillis,
            millis -> {
              world.memory.advanceClock(millis);
              scheduler.yieldTurn();
            },
            timer::schedule);
    if (run.plan.verb() == Verb.IN_PLACE) {
      inPlaceLoad(run, view, own, store, timing);
      return;
    }
    Publication publication =
        new Publication(
                view,
                ROOT,
                run.run(),
                "statement " + run.run(),
                run.plan.verb() == Verb.APPEND,
                run.plan.verb() == Verb.STATIC ? any -> true : null,
                conf())
            .withTiming(timing);
    try {
      publication.claim(store);
      Map<String, URI> existing = view.partitionLocations();
      // Where each row's file goes: Spark sends a partition that has a location to that
      // location, which the protocol maps back to a partition path; Hive writes by partition.
      Map<String, String> fragments =
          run.plan.engine() == Engine.SPARK
              ? Generations.fragmentsByLocation(TABLE, existing)
              : Map.of();
      if (run.plan.engine() == Engine.SPARK) {
        publication.claim(store); // renewed right before its completions land, as Spark does
      }
      Set<String> written = new TreeSet<>();
      int file = 0;
      for (String partition : run.plan.partitions()) {
        String fragment = partition;
        if (run.plan.engine() == Engine.SPARK && existing.containsKey(partition)) {
          fragment = fragments.get(Generations.normalized(existing.get(partition)));
        }
        if (run.plan.engine() == Engine.HIVE) {
          // Hive stages under the partition's location, where it may read an old generation.
          URI location = existing.get(partition);
          String at =
              location != null
                  ? Destination.of(location).prefix()
                  : ROOT_DESTINATION.keyOf(partition + "/");
          String key = at + ".hive-staging_" + run.run() + "/-ext-10000/000000_" + file;
          synchronized (this) {
            staged.put(key, run.run());
          }
          own.putObject(key, bytes("staged"), false);
        }
        String token = "S" + run.plan.index() + ":" + partition + ":" + file;
        run.rows.computeIfAbsent(partition, any -> new ArrayList<>()).add(token);
        String key = ROOT_DESTINATION.keyOf(run.generationOf(fragment)) + "part-" + file;
        own.putObject(key, bytes(token), false);
        written.add(fragment);
        file++;
      }
      publication.publish(store, written);
      if (run.process.dead()) {
        return; // died in a step whose failure the publication only logs
      }
      run.returnedNormally = true;
      if (run.plan.verb() == Verb.STATIC && run.plan.engine() == Engine.SPARK) {
        // Spark drops the partitions the overwrite emptied, after the job.
        Set<String> emptied = new TreeSet<>(existing.keySet());
        emptied.removeAll(written);
        view.dropPartitions(emptied);
      }
    } catch (IOException | RuntimeException e) {
      run.note = e.toString();
      if (!run.process.dead() && run.plan.failsCleanly()) {
        publication.discardUnpublished(store);
      }
    } finally {
      if (!run.process.dead()) {
        List<String> mine = new ArrayList<>();
        synchronized (this) {
          staged.forEach(
              (key, owner) -> {
                if (owner.equals(run.run())) {
                  mine.add(key);
                }
              });
        }
        try {
          own.deleteObjects(mine);
          synchronized (this) {
            mine.forEach(staged::remove);
          }
        } catch (IOException | RuntimeException e) {
          // left for Hive's scratch cleanup; the checker no longer protects it
          synchronized (this) {
            mine.forEach(staged::remove);
          }
        }
      }
    }
  }

  /**
   * A Hive load that the mode does in place: it adds one file to the partition's current location,
   * taking the table's publication lock as every load of a table in the mode does.
   */
  private void inPlaceLoad(
      StatementRun run,
      StatementTable view,
      SimStore own,
      StoreGateway store,
      LeaseLock.Timing timing) {
    String partition = run.plan.partitions().iterator().next();
    LeaseLock lock = null;
    try {
      lock = Publication.lockFor(store, ROOT, "statement " + run.run(), conf(), timing);
      URI location = view.partitionLocations().get(partition);
      if (location == null) {
        run.returnedNormally = true;
        run.landed = true; // nothing to load into: Hive would create the partition in place
        return;
      }
      String token = "I" + run.plan.index() + ":" + partition;
      run.rows.put(partition, List.of(token));
      own.putObject(
          Destination.of(location).prefix() + "in-place-" + run.run(), bytes(token), false);
      // As LoadPlanHook does after the statement: a load whose lock lapsed under it may have
      // landed where another statement's call had already replaced the partition.
      lock.fence("report its load in place of " + TABLE + " as done");
      if (!run.process.dead()) {
        run.returnedNormally = true;
      }
    } catch (IOException | RuntimeException e) {
      run.note = e.toString();
    } finally {
      if (lock != null && !run.process.dead()) {
        lock.release();
      }
    }
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  // ---- other actors ----------------------------------------------------------------------------

  /** Adds files to live and superseded locations of the table, and to the other table's. */
  private void addOutsideWriter(Scheduler scheduler) {
    Random random = new Random(plan.seed() * 31 + 7);
    scheduler.spawn(
        "outside writer",
        () -> {
          SimStore store =
              new SimStore(
                  world,
                  scheduler,
                  scheduler.current(),
                  "outside writer",
                  faults(0, 0, 500),
                  seed(500));
          for (int n = 0; n < plan.outsideWrites(); n++) {
            waitToStart(scheduler, random.nextInt((int) PublicationPlan.GRACE_MILLIS));
            // Live and superseded locations of the table, and the other table's.
            List<String> targets = new ArrayList<>();
            synchronized (this) {
              metastore.history.forEach(l -> targets.add(prefixOf(l)));
              if (metastore.other != null) {
                targets.add(prefixOf(metastore.other));
              }
            }
            String key = targets.get(random.nextInt(targets.size())) + "outside-" + n;
            synchronized (this) {
              outsideWritten.add(key);
              outsideAll.add(key);
            }
            try {
              store.putObject(key, bytes(OUTSIDE + n), false);
            } catch (IOException | RuntimeException e) {
              // an outside writer's failure is its own
            }
          }
        });
  }

  /** Creates another table at the location the table's second partition has at some moment. */
  private void addCatalogUser(Scheduler scheduler) {
    long after = new Random(plan.seed() * 17 + 3).nextInt((int) (2 * PublicationPlan.GRACE_MILLIS));
    scheduler.spawn(
        "catalog user",
        () -> {
          waitToStart(scheduler, after);
          scheduler.yieldTurn();
          synchronized (this) {
            URI location = metastore.table.partitions.get("p=1");
            metastore.createOther(location != null ? location : uri(ROOT_DESTINATION.keyOf("p=1")));
          }
          check("after CREATE TABLE " + OTHER);
        });
  }

  private static String prefixOf(URI location) {
    String prefix = Destination.of(location).prefix();
    return prefix.endsWith("/") ? prefix : prefix + "/";
  }

  // ---- the metastore ---------------------------------------------------------------------------

  /** The catalog: the table and, when the plan has one, another table. */
  private final class Metastore {
    final SimTable table = new SimTable(true);
    URI other;

    /**
     * Locations of partitions Spark dropped after a static overwrite, with their data (Spark drops
     * with the data retained): what is left there is Spark's doing, as in every mode.
     */
    final Set<URI> dropped = new java.util.LinkedHashSet<>();

    /** Every location the table's partitions have pointed at, in the order they did. */
    final Set<URI> history = new java.util.LinkedHashSet<>();

    void changed() {
      history.addAll(table.partitions.values());
    }

    void createOther(URI location) {
      other = location;
    }

    /** Every location a table of the metastore names now. */
    List<URI> namedLocations() {
      List<URI> named = new ArrayList<>(table.partitions.values());
      if (other != null) {
        named.add(other);
      }
      return named;
    }
  }

  private static final class SimTable {
    final boolean partitioned;
    Map<String, URI> partitions = new TreeMap<>();

    SimTable(boolean partitioned) {
      this.partitioned = partitioned;
    }
  }

  /** The table as one statement's metastore client sees it: every call a step of its actor. */
  private final class StatementTable implements MetastoreTable {
    private final Scheduler scheduler;
    private final StatementRun run;
    private int writes;

    StatementTable(Scheduler scheduler, StatementRun run) {
      this.scheduler = scheduler;
      this.run = run;
    }

    private void step() {
      if (run.process.dead()) {
        throw new SimStore.Crash(run.run());
      }
      scheduler.yieldTurn();
      if (run.process.dead()) {
        throw new SimStore.Crash(run.run());
      }
    }

    @Override
    public String name() {
      return TABLE;
    }

    @Override
    public boolean partitioned() {
      return true;
    }

    @Override
    public URI location() {
      step();
      return URI.create(ROOT);
    }

    @Override
    public boolean ownsLocation() {
      step();
      return plan.owned();
    }

    @Override
    public List<URI> otherLocations() {
      step();
      synchronized (PublicationSimulation.this) {
        return metastore.other == null ? List.of() : List.of(metastore.other);
      }
    }

    @Override
    public Map<String, URI> partitionLocations() {
      step();
      synchronized (PublicationSimulation.this) {
        return new TreeMap<>(metastore.table.partitions);
      }
    }

    @Override
    public void addPartitions(Map<String, URI> added) throws IOException {
      write(
          "add_partitions " + added.keySet(),
          () -> {
            for (String fragment : added.keySet()) {
              if (metastore.table.partitions.containsKey(fragment)) {
                throw new IOException("AlreadyExistsException: partition " + fragment);
              }
            }
            apply(run, added, false);
          });
    }

    @Override
    public void relocatePartitions(Map<String, URI> moved) throws IOException {
      write(
          "alter_partitions " + moved.keySet(),
          () -> {
            if (!metastore.table.partitions.keySet().containsAll(moved.keySet())) {
              throw new IOException("InvalidOperationException: no partition among " + moved);
            }
            apply(run, moved, true);
          });
    }

    /** Spark's drop of the partitions a static overwrite emptied. */
    void dropPartitions(Set<String> dropped) throws IOException {
      if (dropped.isEmpty()) {
        return;
      }
      step();
      synchronized (PublicationSimulation.this) {
        Map<String, URI> next = new TreeMap<>(metastore.table.partitions);
        Map<String, List<String>> rows = new TreeMap<>(expected);
        for (String fragment : dropped) {
          URI location = next.remove(fragment);
          if (location != null) {
            metastore.dropped.add(location);
          }
          rows.remove(fragment);
        }
        metastore.table.partitions = next;
        expected = rows;
      }
      check(run.run() + " after drop_partitions " + dropped);
    }

    @Override
    public void relocate(URI location) {
      throw new UnsupportedOperationException("the simulated table is partitioned");
    }

    private interface Change {
      void apply() throws IOException;
    }

    /** One call that changes the catalog, with the fault the plan gives the statement's call. */
    private void write(String what, Change change) throws IOException {
      step();
      int call = ++writes;
      // Even statements meet their fault at their first publishing call, odd ones at their last.
      boolean faulted = run.plan.index() % 2 == 0 ? call == 1 : call > 1 || !twoCalls();
      CallFault fault = faulted ? run.plan.callFault() : CallFault.NONE;
      if (fault == CallFault.FAILS) {
        throw new IOException(what + ": the metastore is unavailable");
      }
      synchronized (PublicationSimulation.this) {
        change.apply();
      }
      if (world.traced) {
        System.out.println("  " + run.run() + " metastore " + what);
      }
      check(run.run() + " after " + what);
      if (fault == CallFault.ANSWER_LOST) {
        throw new IOException(what + ": connection reset after the call landed");
      }
      if (fault == CallFault.CRASH_AFTER) {
        run.process.die();
        throw new SimStore.Crash(run.run());
      }
    }

    /** Whether this statement's publication may take two calls (new and existing partitions). */
    private boolean twoCalls() {
      return run.plan.partitions().size() > 1;
    }
  }

  /** The model: what readers must see once a statement's call lands. */
  /** A metastore call of a run that landed: the partitions' new locations, as the call set them. */
  private void apply(StatementRun run, Map<String, URI> locations, boolean existing) {
    Map<String, URI> next = new TreeMap<>(metastore.table.partitions);
    next.putAll(locations);
    metastore.table.partitions = next;
    metastore.changed();
    landed(run, locations, existing);
  }

  private void landed(StatementRun run, Map<String, URI> locations, boolean existing) {
    Map<String, List<String>> next = new TreeMap<>(expected);
    for (Map.Entry<String, URI> entry : locations.entrySet()) {
      String fragment = entry.getKey();
      boolean ownGeneration =
          prefixOf(entry.getValue()).equals(ROOT_DESTINATION.keyOf(run.generationOf(fragment)));
      List<String> rows = new ArrayList<>();
      if (ownGeneration) {
        if (existing && run.plan.verb() == Verb.APPEND) {
          rows.addAll(next.getOrDefault(fragment, List.of()));
        }
        rows.addAll(run.rows.getOrDefault(fragment, List.of()));
      }
      next.put(fragment, rows);
    }
    expected = next;
    run.landed = true;
  }

  // ---- the checker -----------------------------------------------------------------------------

  /** Looks at the world after every request, and before every delete. */
  private final class Checker implements SharedStore.Observer {

    @Override
    public void afterRequest(String actor, String what) {
      check(actor + " after " + what);
    }

    @Override
    public void afterPut(String actor, String key, byte[] data) {
      String token = new String(data, StandardCharsets.UTF_8);
      if (token.startsWith(OUTSIDE)) {
        synchronized (PublicationSimulation.this) {
          // Written where the table reads it: the table's file from now on, which a statement
          // that replaces the partition may remove after the grace, as any writer's overwrite
          // would. Written anywhere else, it is never the table's to remove.
          for (URI location : metastore.table.partitions.values()) {
            if (key.startsWith(prefixOf(location))) {
              outsideWritten.remove(key);
            }
          }
        }
        return;
      }
      if (!token.startsWith("I")) {
        return;
      }
      // An in-place load's file: a row of every partition whose location holds it.
      synchronized (PublicationSimulation.this) {
        boolean read = false;
        Map<String, List<String>> next = new TreeMap<>(expected);
        for (Map.Entry<String, URI> partition : metastore.table.partitions.entrySet()) {
          if (visibleUnder(prefixOf(partition.getValue()), key)) {
            List<String> rows = new ArrayList<>(next.getOrDefault(partition.getKey(), List.of()));
            rows.add(token);
            next.put(partition.getKey(), rows);
            read = true;
          }
        }
        expected = next;
        StatementRun run = runs.get(actor);
        if (run != null) {
          // Spark drops the partitions its static overwrite emptied after its job, in a call of
          // its own outside the publication lock: a load that read such a partition's location
          // before the drop lands in a location no partition names any more. That statement is
          // the later one, its drop part of its overwrite (docs/spark.md, Limits).
          run.landed =
              read
                  || metastore.dropped.stream()
                      .anyMatch(location -> visibleUnder(prefixOf(location), key));
        }
      }
    }

    @Override
    public void beforeDelete(String actor, Collection<String> keys) {
      synchronized (PublicationSimulation.this) {
        String run = actor.endsWith(" timer") ? actor.substring(0, actor.length() - 6) : actor;
        for (String key : keys) {
          if (run.equals(staged.get(key))) {
            continue; // a statement removing its own staging directory
          }
          if (staged.containsKey(key)) {
            violations.add(actor + " deleted " + key + ", staged by " + staged.get(key));
          }
          if (outsideWritten.contains(key)) {
            violations.add(actor + " deleted " + key + ", which an outside writer wrote");
          }
          for (URI location : metastore.namedLocations()) {
            if (key.startsWith(prefixOf(location))) {
              violations.add(
                  actor + " deleted " + key + ", under " + location + ", which a table names");
              break;
            }
          }
        }
      }
    }
  }

  private static boolean visibleUnder(String prefix, String key) {
    if (!key.startsWith(prefix)) {
      return false;
    }
    String relative = key.substring(prefix.length());
    return !relative.isEmpty() && !relative.endsWith("/") && Generations.visibleToReaders(relative);
  }

  private synchronized void check(String when) {
    if (checking) {
      return;
    }
    checking = true;
    try {
      long now = world.memory.clockMillis();
      Set<String> keys = new TreeSet<>(world.memory.keys());
      Map<String, List<String>> seen = new TreeMap<>();
      Set<String> read = new TreeSet<>();
      Map<String, String> owners = new HashMap<>();
      for (Map.Entry<String, URI> partition : metastore.table.partitions.entrySet()) {
        String prefix = prefixOf(partition.getValue());
        String before =
            owners.put(Generations.normalized(partition.getValue()), partition.getKey());
        if (before != null) {
          violation(
              when, "partitions " + before + " and " + partition.getKey() + " share " + prefix);
        }
        List<String> rows = new ArrayList<>();
        for (String key : keys) {
          if (visibleUnder(prefix, key)) {
            read.add(key);
            byte[] content = world.memory.content(key);
            String token = content == null ? "" : new String(content, StandardCharsets.UTF_8);
            if (!token.startsWith(OUTSIDE)) {
              rows.add(token);
            }
          }
        }
        rows.sort(null);
        seen.put(partition.getKey(), rows);
      }
      if (metastore.other != null) {
        String prefix = prefixOf(metastore.other);
        keys.stream().filter(key -> visibleUnder(prefix, key)).forEach(read::add);
      }
      Map<String, List<String>> want = new TreeMap<>();
      expected.forEach(
          (partition, rows) -> {
            List<String> sorted = new ArrayList<>(rows);
            sorted.sort(null);
            want.put(partition, sorted);
          });
      if (!seen.equals(want)) {
        violation(when, "a reader sees " + seen + ", but the table is " + want);
        expected = seen; // one report per divergence
      }
      listed.removeIf(flight -> now - flight.getKey() >= PublicationPlan.GRACE_MILLIS);
      for (Map.Entry<Long, Set<String>> flight : listed) {
        for (String key : flight.getValue()) {
          if (!keys.contains(key)) {
            violation(
                when,
                key + ", which a reader listed at " + flight.getKey() + ", is gone at " + now);
          }
        }
      }
      listed.removeIf(flight -> !keys.containsAll(flight.getValue()));
      listed.add(Map.entry(now, read));
    } finally {
      checking = false;
    }
  }

  private void violation(String when, String what) {
    violations.add(when + ": " + what);
  }

  // ---- the end ---------------------------------------------------------------------------------

  /**
   * After every actor: statements without faults, each one grace period after the one before; then
   * every object of the table's generations must be one a location names, or one a record due later
   * names, or an outside writer's. And the publication lock is released.
   */
  private void endPhase() {
    world.observer = new Checker();
    StoreGateway operator = new SimStore(world, null, null, "end", Faults.NONE, 0);
    for (int n = 0; n < 3; n++) {
      world.memory.advanceClock(PublicationPlan.GRACE_MILLIS + PublicationPlan.LEASE_MILLIS);
      StatementRun run =
          new StatementRun(
              new StatementPlan(
                  100 + n,
                  Engine.HIVE,
                  Verb.DYNAMIC,
                  Set.of("p=3"),
                  0,
                  0,
                  0,
                  CallFault.NONE,
                  true));
      runs.put(run.run(), run);
      try {
        String token = "S" + run.plan.index() + ":p=3:0";
        run.rows.put("p=3", List.of(token));
        Publication publication =
            new Publication(
                    new EndTable(run),
                    ROOT,
                    run.run(),
                    "statement " + run.run(),
                    false,
                    null,
                    conf())
                .withTiming(
                    LeaseLock.Timing.manual(world.memory::clockMillis, world.memory::advanceClock));
        publication.claim(operator);
        operator.putObject(
            ROOT_DESTINATION.keyOf(run.generationOf("p=3")) + "part-0", bytes(token), false);
        publication.publish(operator, Set.of("p=3"));
      } catch (IOException | RuntimeException e) {
        violations.add("a statement without faults after the schedule failed: " + e);
        return;
      }
    }
    Set<String> named = new TreeSet<>();
    for (URI location : metastore.namedLocations()) {
      named.add(prefixOf(location));
    }
    String generations = ROOT_DESTINATION.keyOf(Generations.DIR);
    String retired = ROOT_DESTINATION.keyOf(Generations.RETIRED);
    long now = world.memory.clockMillis();
    Set<String> recorded = new TreeSet<>();
    for (String key : world.memory.keys()) {
      if (!key.startsWith(retired)) {
        continue;
      }
      // A record left after the statements is either not yet due, or waits for a location that
      // still names some of what it lists; what it lists is accounted for.
      byte[] body = world.memory.content(key);
      List<String> names = RecordNames.of(body);
      boolean young =
          now - world.memory.headObject(key).orElseThrow().lastModifiedMillis()
              < PublicationPlan.GRACE_MILLIS;
      boolean waits = names.stream().anyMatch(name -> named.stream().anyMatch(name::startsWith));
      if (!young && !waits) {
        violations.add(key + " is due and names nothing read, yet it is left after the schedule");
      }
      recorded.addAll(names);
    }
    for (String key : world.memory.keys()) {
      if (!key.startsWith(generations)
          || key.startsWith(retired)
          || outsideAll.contains(key)
          || Generations.inStaging(key.substring(generations.length()))) {
        continue; // a dead Hive statement's staging is Hive's, as without the mode
      }
      if (key.endsWith(LeaseLock.OBJECT_NAME)) {
        violations.add("the publication lock " + key + " is left after the schedule");
        continue;
      }
      if (metastore.dropped.stream().anyMatch(location -> key.startsWith(prefixOf(location)))) {
        continue;
      }
      if (named.stream().anyMatch(key::startsWith)
          || recorded.stream()
              .anyMatch(name -> name.endsWith("/") ? key.startsWith(name) : key.equals(name))) {
        continue;
      }
      violations.add(key + " is left after the grace and three statements, and nothing names it");
    }
  }

  /** The table for the statements after the schedule: no faults, no steps. */
  private final class EndTable implements MetastoreTable {
    private final StatementRun run;

    EndTable(StatementRun run) {
      this.run = run;
    }

    @Override
    public String name() {
      return TABLE;
    }

    @Override
    public boolean partitioned() {
      return true;
    }

    @Override
    public URI location() {
      return URI.create(ROOT);
    }

    @Override
    public boolean ownsLocation() {
      return plan.owned();
    }

    @Override
    public List<URI> otherLocations() {
      synchronized (PublicationSimulation.this) {
        return metastore.other == null ? List.of() : List.of(metastore.other);
      }
    }

    @Override
    public Map<String, URI> partitionLocations() {
      synchronized (PublicationSimulation.this) {
        return new TreeMap<>(metastore.table.partitions);
      }
    }

    @Override
    public void addPartitions(Map<String, URI> added) {
      synchronized (PublicationSimulation.this) {
        apply(run, added, false);
      }
      check(run.run() + " after add_partitions");
    }

    @Override
    public void relocatePartitions(Map<String, URI> moved) {
      synchronized (PublicationSimulation.this) {
        apply(run, moved, true);
      }
      check(run.run() + " after alter_partitions");
    }

    @Override
    public void relocate(URI location) {
      throw new UnsupportedOperationException();
    }
  }
}
