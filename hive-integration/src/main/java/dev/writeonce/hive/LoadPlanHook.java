package dev.writeonce.hive;

import dev.writeonce.shim.LoadPlan;
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
 * A Hive pre-execution hook ({@code hive.exec.pre.hooks}) for the rename shim. Before a statement's
 * jobs run, it writes the statement's {@link LoadPlan} into each staging directory on a shimmed
 * bucket, so that every upload starts at the key Hive's MoveTask will give the file, {@code
 * _copy_K} names and CTAS destinations included; and it warns, once per JVM, about settings that do
 * not go with the shim ({@link HiveSettingsCheck}). One PUT per statement; nothing on other file
 * systems.
 */
public class LoadPlanHook implements ExecuteWithHookContext {

  private static final Logger LOG = LoggerFactory.getLogger(LoadPlanHook.class);
  private static final Set<String> WARNED = ConcurrentHashMap.newKeySet();

  @Override
  public void run(HookContext context) throws Exception {
    if (context.getHookType() != HookContext.HookType.PRE_EXEC_HOOK) {
      return;
    }
    HiveConf conf = context.getConf();
    warnAbout(HiveSettingsCheck.check(conf));
    Map<Path, Map<String, LoadPlan.Load>> plans = new LinkedHashMap<>();
    for (MoveWork move : moves(context.getQueryPlan().getRootTasks())) {
      LoadTableDesc table = move.getLoadTableWork();
      if (table != null && table.getSourcePath() != null) {
        LoadPlan.Mode mode =
            table.getLoadFileType() == LoadTableDesc.LoadFileType.KEEP_EXISTING
                ? LoadPlan.Mode.KEEP
                : LoadPlan.Mode.REPLACE;
        add(plans, table.getSourcePath(), new LoadPlan.Load(mode, Optional.empty()));
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
    for (Map.Entry<Path, Map<String, LoadPlan.Load>> plan : plans.entrySet()) {
      write(plan.getKey(), new LoadPlan(plan.getValue()), conf);
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

  /** Every MoveWork of the plan, conditional branches included. */
  private static List<MoveWork> moves(List<Task<?>> roots) {
    List<MoveWork> found = new ArrayList<>();
    Deque<Task<?>> pending = new ArrayDeque<>(roots);
    Set<Task<?>> seen = new HashSet<>();
    while (!pending.isEmpty()) {
      Task<?> task = pending.pop();
      if (!seen.add(task)) {
        continue;
      }
      if (task.getWork() instanceof MoveWork move) {
        found.add(move);
      }
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
