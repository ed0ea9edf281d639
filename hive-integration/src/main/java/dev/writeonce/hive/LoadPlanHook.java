package dev.writeonce.hive;

import dev.writeonce.core.lease.LeaseLock;
import dev.writeonce.core.model.LoadPlan;
import dev.writeonce.core.publish.Generations;
import dev.writeonce.core.publish.Publication;
import dev.writeonce.shim.RenameShimFileSystem;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.ql.exec.ConditionalTask;
import org.apache.hadoop.hive.ql.exec.Task;
import org.apache.hadoop.hive.ql.hooks.ExecuteWithHookContext;
import org.apache.hadoop.hive.ql.hooks.HookContext;
import org.apache.hadoop.hive.ql.plan.LoadFileDesc;
import org.apache.hadoop.hive.ql.plan.LoadTableDesc;
import org.apache.hadoop.hive.ql.plan.MoveWork;
import org.apache.hadoop.hive.ql.session.SessionState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Hive hook for the rename shim, to be named in {@code hive.exec.pre.hooks}, {@code
 * hive.exec.post.hooks} and {@code hive.exec.failure.hooks}. Before a statement's jobs run, it
 * writes the statement's {@link LoadPlan} into each staging directory on a shimmed bucket, so that
 * every upload starts at the key Hive's MoveTask will give the file, {@code _copy_K} names and CTAS
 * destinations included; and it warns, once per JVM, about settings that do not go with the shim
 * ({@link HiveSettingsCheck}). One PUT per statement; nothing on other file systems.
 *
 * <p>A statement that adds files to a table (INSERT INTO) chooses their names from the files
 * already there when its tasks start, and its MoveTask chooses them again when it moves them. Two
 * such statements running at once on one table would choose the same names. So the hook takes the
 * table's insert lock ({@link LeaseLock}) before such a statement's jobs run, waiting while another
 * statement holds it, and releases it after the statement, in the post-execution or the failure
 * hook. Two requests per INSERT INTO, none for other statements.
 *
 * <p>With {@code writeonce.publish=metastore}, a statement's loads of native tables move into the
 * statement's generation of the table instead, and the post-execution hook publishes them with one
 * metastore call each ({@link HivePublication}); the failure hook removes what a failed statement
 * left unpublished. Such loads keep their files' names and take no insert lock.
 */
public class LoadPlanHook implements ExecuteWithHookContext {

  private static final Logger LOG = LoggerFactory.getLogger(LoadPlanHook.class);

  /** The table property holding its location (Hive's {@code META_TABLE_LOCATION}). */
  private static final String TABLE_LOCATION = "location";

  private static final Set<String> WARNED = ConcurrentHashMap.newKeySet();

  /** The publications of each running statement in metastore publish mode, by query id. */
  private static final Map<String, List<HivePublication>> PUBLICATIONS = new ConcurrentHashMap<>();

  /** The insert locks each running statement holds, by query id. */
  private static final Map<String, List<LeaseLock>> LOCKS = new ConcurrentHashMap<>();

  /** Of those, the publication locks of tables the statement loads in place. */
  private static final Map<String, List<LeaseLock>> PUBLICATION_LOCKS = new ConcurrentHashMap<>();

  @Override
  public void run(HookContext context) throws Exception {
    switch (context.getHookType()) {
      case PRE_EXEC_HOOK -> beforeStatement(context);
      case POST_EXEC_HOOK -> afterStatement(context.getQueryPlan().getQueryId());
      case ON_FAILURE_HOOK -> afterFailure(context.getQueryPlan().getQueryId());
      default -> {}
    }
  }

  private static void beforeStatement(HookContext context) throws IOException {
    HiveConf conf = context.getConf();
    warnAbout(HiveSettingsCheck.check(conf));
    String statement = context.getQueryPlan().getQueryId();
    Map<Path, Map<String, LoadPlan.Load>> plans = new LinkedHashMap<>();
    Set<Path> lockDirectories = new TreeSet<>();
    List<Task<?>> moveTasks = moveTasks(context.getQueryPlan().getRootTasks());
    if (Publication.requested(conf) && hasConditionalMoves(context.getQueryPlan().getRootTasks())) {
      // Only one branch of a conditional runs (the small-file merge's): a load moved into a
      // generation in a branch that does not run would publish its partition empty.
      LOG.info("{}: loads through a conditional merge, in place", statement);
      warnAbout(
          List.of(
              new HiveSettingsCheck.Finding(
                  Publication.MODE,
                  "metastore",
                  "a statement that loads its tables through Hive's conditional small-file merge"
                      + " loads them in place, where readers can see it partly: only one branch of"
                      + " the merge runs, and a load published from the other would empty its"
                      + " partition.",
                  "set hive.merge.mapfiles, hive.merge.mapredfiles and hive.merge.tezfiles to"
                      + " false.")));
    } else if (Publication.requested(conf)) {
      // Before the load plans: a published load becomes a move into the statement's generation.
      String execution = executionRunId(statement);
      List<HivePublication> publications = new ArrayList<>();
      try {
        for (Task<?> task : moveTasks) {
          String runId =
              publications.isEmpty() ? execution : execution + "-" + (publications.size() + 1);
          HivePublication.plan(task, conf, runId).ifPresent(publications::add);
        }
      } catch (IOException | RuntimeException e) {
        publications.forEach(HivePublication::discard);
        throw e;
      }
      List<HivePublication> previous =
          publications.isEmpty()
              ? PUBLICATIONS.remove(statement)
              : PUBLICATIONS.put(statement, publications);
      if (previous != null) {
        previous.forEach(HivePublication::discard); // an earlier execution's, never ended
      }
    }
    Set<Path> publicationRoots = new TreeSet<>();
    for (Task<?> task : moveTasks) {
      MoveWork move = (MoveWork) task.getWork();
      LoadTableDesc table = move.getLoadTableWork();
      if (table != null && table.getSourcePath() != null) {
        LoadPlan.Mode mode =
            table.getLoadFileType() == LoadTableDesc.LoadFileType.KEEP_EXISTING
                ? LoadPlan.Mode.KEEP
                : LoadPlan.Mode.REPLACE;
        add(plans, table.getSourcePath(), new LoadPlan.Load(mode, Optional.empty()));
        if (Publication.requested(conf)) {
          // Loaded in place in the mode: no file may land while a publication of the table
          // copies the partition, and no publication may be mid-way while it lands.
          publicationRoot(table, conf).ifPresent(publicationRoots::add);
        }
        if (mode == LoadPlan.Mode.KEEP) {
          lockDirectory(table, conf).ifPresent(lockDirectories::add);
        }
      }
      LoadFileDesc file = move.getLoadFileWork();
      if (file != null && file.getSourcePath() != null && file.getTargetDir() != null) {
        Path target = file.getTargetDir();
        FileSystem targetFs = target.getFileSystem(conf);
        add(
            plans,
            file.getSourcePath(),
            new LoadPlan.Load(
                LoadPlan.Mode.REPLACE, Optional.of(targetFs.makeQualified(target).toString())));
      }
    }
    if (!lockDirectories.isEmpty() && !HiveSettingsCheck.releasesInsertLocks(conf)) {
      lockDirectories.clear();
    }
    if (!publicationRoots.isEmpty() || !lockDirectories.isEmpty()) {
      takeLocks(statement, publicationRoots, lockDirectories, conf);
    }
    try {
      for (Map.Entry<Path, Map<String, LoadPlan.Load>> plan : plans.entrySet()) {
        write(plan.getKey(), new LoadPlan(plan.getValue()), conf);
      }
    } catch (IOException | RuntimeException e) {
      releaseLocks(statement);
      throw e;
    }
  }

  /**
   * The run id of one execution of a statement. Hive runs a statement again under the same query id
   * when it re-executes it ({@code hive.query.reexecution.*}), and each execution's generation must
   * be its own: a later execution never completes into, or discards, an earlier one's.
   */
  static String executionRunId(String queryId) {
    return queryId + "-" + UUID.randomUUID().toString().substring(0, 8);
  }

  /**
   * The directory whose insert lock a statement adding files to the table takes: the table's, so
   * that a static-partition and a dynamic-partition INSERT INTO of one partition exclude each
   * other; empty when the table is not on a shimmed bucket.
   */
  private static Optional<Path> lockDirectory(LoadTableDesc table, HiveConf conf)
      throws IOException {
    Path staging = table.getSourcePath().getParent();
    if (staging == null || staging.getParent() == null) {
      return Optional.empty();
    }
    Path directory = staging.getParent();
    String location =
        table.getTable() == null || table.getTable().getProperties() == null
            ? null
            : table.getTable().getProperties().getProperty(TABLE_LOCATION);
    if (location != null && !location.isBlank()) {
      Path tableDirectory = new Path(location);
      FileSystem fs = tableDirectory.getFileSystem(conf);
      Path qualified = fs.makeQualified(tableDirectory);
      String under = fs.makeQualified(directory).toString() + "/";
      if (under.startsWith(qualified.toString() + "/")) {
        directory = qualified;
      }
    }
    FileSystem fs = directory.getFileSystem(conf);
    if (!(fs instanceof RenameShimFileSystem shim) || !shim.shims(table.getSourcePath())) {
      return Optional.empty();
    }
    return Optional.of(fs.makeQualified(directory));
  }

  /**
   * The root of the table a load in place changes, when the table is on a shimmed bucket: where its
   * publication lock lies.
   */
  private static Optional<Path> publicationRoot(LoadTableDesc table, HiveConf conf)
      throws IOException {
    String location =
        table.getTable() == null || table.getTable().getProperties() == null
            ? null
            : table.getTable().getProperties().getProperty(TABLE_LOCATION);
    if (location == null || location.isBlank()) {
      return Optional.empty();
    }
    Path directory = new Path(location);
    FileSystem fs = directory.getFileSystem(conf);
    if (!(fs instanceof RenameShimFileSystem shim) || !shim.shims(directory)) {
      return Optional.empty();
    }
    return Optional.of(new Path(Generations.rootOf(fs.makeQualified(directory).toString())));
  }

  /**
   * Takes the publication locks of the tables loaded in place, then the insert locks, each in path
   * order, so that two statements never wait for each other. A publication holds one publication
   * lock at a time and nothing else.
   */
  private static void takeLocks(
      String statement, Set<Path> publicationRoots, Set<Path> directories, HiveConf conf)
      throws IOException {
    List<LeaseLock> held = new ArrayList<>();
    try {
      for (Path root : publicationRoots) {
        RenameShimFileSystem shim = (RenameShimFileSystem) root.getFileSystem(conf);
        held.add(
            Publication.lockFor(
                shim.publicationStore(root),
                root.toString(),
                "Hive statement " + statement + " loading in place",
                conf,
                LeaseLock.Timing.PROCESS));
      }
      for (Path directory : directories) {
        RenameShimFileSystem shim = (RenameShimFileSystem) directory.getFileSystem(conf);
        shim.lockForInsert(directory, statement, LoadPlanHook::tell).ifPresent(held::add);
      }
    } catch (IOException | RuntimeException e) {
      held.forEach(LeaseLock::release);
      throw e;
    }
    PUBLICATION_LOCKS.put(statement, List.copyOf(held.subList(0, publicationRoots.size())));
    List<LeaseLock> previous = LOCKS.put(statement, held);
    if (previous != null) {
      previous.forEach(LeaseLock::release);
    }
    LOG.debug(
        "{}: publication locks of {}, insert locks on {}",
        statement,
        publicationRoots,
        directories);
  }

  /** Publishes what the statement's loads moved into generations, then releases its locks. */
  private static void afterStatement(String statement) throws IOException {
    List<HivePublication> publications = PUBLICATIONS.getOrDefault(statement, List.of());
    try {
      while (!publications.isEmpty()) {
        publications.get(0).publish();
        publications.remove(0);
      }
    } catch (IOException | RuntimeException e) {
      // Hive runs no failure hook after a post-execution hook fails: the loads not published
      // yet are discarded here, the failed one only if it made no metastore call.
      publications.forEach(HivePublication::discard);
      throw e;
    } finally {
      PUBLICATIONS.remove(statement);
      try {
        fenceLocks(statement);
      } finally {
        releaseLocks(statement);
      }
    }
  }

  /** Removes the generations a failed statement left unpublished, then releases its locks. */
  private static void afterFailure(String statement) {
    try {
      List<HivePublication> publications = PUBLICATIONS.remove(statement);
      if (publications != null) {
        publications.forEach(HivePublication::discard);
      }
    } finally {
      releaseLocks(statement);
    }
  }

  /**
   * Proves that the statement held its publication locks until now: a load in place whose lock
   * lapsed under it (a paused HiveServer2) may have landed in a partition another statement
   * replaced meanwhile, and the statement fails saying so rather than reporting success.
   */
  private static void fenceLocks(String statement) throws IOException {
    for (LeaseLock lock : PUBLICATION_LOCKS.getOrDefault(statement, List.of())) {
      lock.fence("report its loads of " + lock.lock().destination() + " as done");
    }
  }

  private static void releaseLocks(String statement) {
    PUBLICATION_LOCKS.remove(statement);
    List<LeaseLock> held = LOCKS.remove(statement);
    if (held != null) {
      held.forEach(LeaseLock::release);
    }
  }

  private static void tell(String line) {
    String message = "writeonce: " + line;
    LOG.info(message);
    SessionState.LogHelper console = SessionState.getConsole();
    if (console != null) {
      console.printInfo(message, false);
    }
  }

  private static void add(
      Map<Path, Map<String, LoadPlan.Load>> plans, Path source, LoadPlan.Load load) {
    Path root = source.getParent();
    if (root == null || !root.getName().startsWith(".hive-staging")) {
      return;
    }
    plans.computeIfAbsent(root, any -> new LinkedHashMap<>()).put(source.getName(), load);
  }

  private static void write(Path root, LoadPlan plan, HiveConf conf) throws IOException {
    FileSystem fs = root.getFileSystem(conf);
    if (!(fs instanceof RenameShimFileSystem shim) || !shim.shims(root)) {
      return;
    }
    shim.putLoadPlan(root, plan);
    LOG.debug("load plan for {}: {}", root, plan);
  }

  /** Whether a conditional task of the plan chooses between moves. */
  static boolean hasConditionalMoves(List<Task<?>> roots) {
    for (Task<?> task : tasks(roots)) {
      if (task instanceof ConditionalTask conditional
          && conditional.getListTasks() != null
          && conditional.getListTasks().stream()
              .anyMatch(branch -> !moveTasks(List.of(branch)).isEmpty())) {
        return true;
      }
    }
    return false;
  }

  /** Every task of the plan doing a MoveWork, conditional branches included. */
  private static List<Task<?>> moveTasks(List<Task<?>> roots) {
    return tasks(roots).stream().filter(task -> task.getWork() instanceof MoveWork).toList();
  }

  /** Every task of the plan, once each, conditional branches included. */
  private static List<Task<?>> tasks(List<Task<?>> roots) {
    List<Task<?>> found = new ArrayList<>();
    Deque<Task<?>> pending = new ArrayDeque<>(roots);
    Set<Task<?>> seen = new HashSet<>();
    while (!pending.isEmpty()) {
      Task<?> task = pending.pop();
      if (!seen.add(task)) {
        continue;
      }
      found.add(task);
      if (task instanceof ConditionalTask conditional && conditional.getListTasks() != null) {
        pending.addAll(conditional.getListTasks());
      }
      if (task.getChildTasks() != null) {
        pending.addAll(task.getChildTasks());
      }
    }
    return found;
  }

  private static void warnAbout(List<HiveSettingsCheck.Finding> findings) {
    for (HiveSettingsCheck.Finding finding : findings) {
      if (!WARNED.add(finding.setting() + "=" + finding.value())) {
        continue;
      }
      String line = "writeonce: " + finding.message();
      LOG.warn(line);
      SessionState.LogHelper console = SessionState.getConsole();
      if (console != null) {
        console.printWarn(line);
      }
    }
  }
}
