package dev.writeonce.hive;

import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.hive.ql.hooks.ExecuteWithHookContext;
import org.apache.hadoop.hive.ql.hooks.HookContext;

/**
 * A pre-execution hook, listed before {@link LoadPlanHook}, that holds each statement until the
 * other statements of the test reach it too, so that their jobs would start at the same moment
 * (their tasks then choose file names from the same table contents) unless something orders them.
 */
public class StartTogetherHook implements ExecuteWithHookContext {

  static volatile CyclicBarrier barrier;

  @Override
  public void run(HookContext context) throws Exception {
    CyclicBarrier current = barrier;
    if (current != null && context.getHookType() == HookContext.HookType.PRE_EXEC_HOOK) {
      current.await(2, TimeUnit.MINUTES);
    }
  }
}
