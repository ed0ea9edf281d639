package dev.writeonce.hive;

import java.nio.charset.StandardCharsets;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hive.ql.exec.Task;
import org.apache.hadoop.hive.ql.hooks.ExecuteWithHookContext;
import org.apache.hadoop.hive.ql.hooks.HookContext;
import org.apache.hadoop.hive.ql.plan.LoadTableDesc;
import org.apache.hadoop.hive.ql.plan.MoveWork;

/**
 * Leaves in a statement's staging directory what a second attempt of task 000000 leaves when it
 * wrote its file and committed it there, through the file system and with the names Hive's
 * FileSinkOperator uses: a file {@code _tmp.000000_1}, then renamed into {@code -tmp.-ext-N}.
 * Hadoop's local runner never retries a task, so the test adds the other attempt's output this way;
 * Hive itself then picks one file per task and deletes the other, as on a cluster.
 */
public class StrayAttemptHook implements ExecuteWithHookContext {

  /** What the stray attempt writes: the same row the real attempt writes, as Hive's text. */
  static volatile String content = "";

  @Override
  public void run(HookContext context) throws Exception {
    for (Task<?> task : context.getQueryPlan().getRootTasks()) {
      visit(task, context);
    }
  }

  private static void visit(Task<?> task, HookContext context) throws Exception {
    if (task.getWork() instanceof MoveWork move && move.getLoadTableWork() != null) {
      LoadTableDesc load = move.getLoadTableWork();
      Path ext = load.getSourcePath();
      Path root = ext.getParent();
      FileSystem fs = ext.getFileSystem(context.getConf());
      Path written = new Path(root, "_task_tmp." + ext.getName() + "/_tmp.000000_1");
      try (FSDataOutputStream out = fs.create(written, true)) {
        out.write(content.getBytes(StandardCharsets.UTF_8));
      }
      Path committed = new Path(root, "-tmp." + ext.getName() + "/000000_1");
      fs.mkdirs(committed.getParent());
      if (!fs.rename(written, committed)) {
        throw new IllegalStateException("rename " + written + " to " + committed);
      }
      Path died = new Path(root, "_task_tmp." + ext.getName() + "/_tmp.000001_0");
      try (FSDataOutputStream out = fs.create(died, true)) {
        out.write(content.getBytes(StandardCharsets.UTF_8));
      }
    }
    if (task.getChildTasks() != null) {
      for (Task<?> child : task.getChildTasks()) {
        visit(child, context);
      }
    }
  }
}
