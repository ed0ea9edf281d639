package dev.writeonce.hive;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.apache.hadoop.hive.ql.exec.ConditionalTask;
import org.apache.hadoop.hive.ql.exec.MoveTask;
import org.apache.hadoop.hive.ql.exec.Task;
import org.apache.hadoop.hive.ql.plan.MoveWork;
import org.junit.jupiter.api.Test;

class LoadPlanHookTest {

  private static MoveTask move() {
    MoveTask task = new MoveTask();
    task.setWork(new MoveWork());
    return task;
  }

  @Test
  void aLoadThatOnlyOneBranchOfAConditionalRunsKeepsItsStatementOutOfPublishMode() {
    // The small-file merge's conditional: one branch moves the files, another merges first.
    MoveTask direct = move();
    MoveTask afterMerge = move();
    ConditionalTask merge = new ConditionalTask();
    merge.setListTasks(List.<Task<?>>of(direct, afterMerge));
    MoveTask before = move();
    before.addDependentTask(merge);

    assertThat(LoadPlanHook.hasConditionalMoves(List.of(before))).isTrue();
    assertThat(LoadPlanHook.hasConditionalMoves(List.of(move()))).isFalse();
  }

  @Test
  void twoExecutionsOfOneQueryIdPublishIntoGenerationsOfTheirOwn() {
    // Hive's re-execution runs the statement again under the same query id.
    String first = LoadPlanHook.executionRunId("hive_20261128120000_q");
    String second = LoadPlanHook.executionRunId("hive_20261128120000_q");
    assertThat(first).startsWith("hive_20261128120000_q-").isNotEqualTo(second);
    assertThat(second).startsWith("hive_20261128120000_q-");
  }
}
