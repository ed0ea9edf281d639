package dev.writeonce.shim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.json.LoadPlanFormat;
import dev.writeonce.core.model.LoadPlan;
import dev.writeonce.core.testing.InMemoryStore;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class HiveStagingTest {

  private static final String STAGING = "wh/t/.hive-staging_hive_2026-11-23_07-00-00_1_2-1";

  private final InMemoryStore store = new InMemoryStore("bucket");
  private final HiveStaging staging = new HiveStaging(store, "bucket");

  private void plan(Map<String, LoadPlan.Load> loads) throws Exception {
    store.putObject(
        STAGING + "/" + LoadPlan.FILE_NAME, LoadPlanFormat.toJson(new LoadPlan(loads)), false);
  }

  private void existing(String key) throws Exception {
    store.putObject(key, "old".getBytes(StandardCharsets.UTF_8), false);
  }

  @Test
  void aBranchOfAUnionAllOnTezIsPredictedInItsPartitionsSubdirectory() throws Exception {
    // Each branch writes under _task_tmp.HIVE_UNION_SUBDIR_<n>/ and ends in
    // <partitions>/HIVE_UNION_SUBDIR_<n>/ of the -ext- directory.
    assertThat(
            staging.predictFinalKey(
                STAGING
                    + "/-ext-10000/_task_tmp.HIVE_UNION_SUBDIR_2/p=3/HIVE_UNION_SUBDIR_2/"
                    + "_tmp.000000_0"))
        .contains("wh/t/p=3/HIVE_UNION_SUBDIR_2/000000_0");
  }

  @Test
  void aFileJoiningAnEmptyDestinationKeepsItsName() throws Exception {
    assertThat(staging.predictFinalKey(STAGING + "/_task_tmp.-ext-10000/_tmp.000000_0"))
        .contains("wh/t/000000_0");
    assertThat(staging.predictFinalKey(STAGING + "/-tmp.-ext-10000/day=1/000001_0"))
        .contains("wh/t/day=1/000001_0");
  }

  @Test
  void aFileFileOutputCommitterWritesIntoTheStagingDirectoryIsPredictedWithoutItsLayout()
      throws Exception {
    // Spark's insert into a Hive table: FileOutputCommitter's output is the -ext directory.
    assertThat(
            staging.predictFinalKey(
                STAGING
                    + "/-ext-10000/_temporary/0/_temporary/attempt_1_0001_m_000000_0/day=1/p-0"))
        .contains("wh/t/day=1/p-0");
    assertThat(
            staging.predictFinalKey(STAGING + "/-ext-10000/_temporary/0/task_1_0001_m_000000/p-0"))
        .contains("wh/t/p-0");
  }

  @Test
  void aFileJoiningTakenNamesGetsHivesFirstFreeCopyName() throws Exception {
    existing("wh/t/000000_0");
    existing("wh/t/000000_0_copy_1");
    existing("wh/t/000000_0_copy_3");
    existing("wh/t/000000_0.gz");
    assertThat(staging.predictFinalKey(STAGING + "/_task_tmp.-ext-10000/_tmp.000000_0"))
        .contains("wh/t/000000_0_copy_2");
    assertThat(staging.predictFinalKey(STAGING + "/_task_tmp.-ext-10000/_tmp.000000_0.gz"))
        .contains("wh/t/000000_0_copy_1.gz");
  }

  @Test
  void aReplacingStatementKeepsEveryNameAndReadsThePlanOnce() throws Exception {
    plan(Map.of("-ext-10000", new LoadPlan.Load(LoadPlan.Mode.REPLACE, Optional.empty())));
    existing("wh/t/000000_0");
    long before = store.counters().total();
    assertThat(staging.predictFinalKey(STAGING + "/_task_tmp.-ext-10000/_tmp.000000_0"))
        .contains("wh/t/000000_0");
    assertThat(staging.predictFinalKey(STAGING + "/_task_tmp.-ext-10000/_tmp.000001_0"))
        .contains("wh/t/000001_0");
    assertThat(store.counters().total() - before).as("one GET of the plan, no LIST").isEqualTo(1);
  }

  @Test
  void aPlanTargetSendsFilesToTheNamedDestination() throws Exception {
    plan(
        Map.of(
            "-ext-10000",
            new LoadPlan.Load(LoadPlan.Mode.REPLACE, Optional.of("s3a://bucket/wh/t/c"))));
    assertThat(staging.predictFinalKey(STAGING + "/-tmp.-ext-10000.moved/000000_0"))
        .contains("wh/t/c/000000_0");
  }

  @Test
  void aDestinationInAnotherBucketIsNotPredicted() throws Exception {
    plan(
        Map.of(
            "-ext-10000",
            new LoadPlan.Load(LoadPlan.Mode.REPLACE, Optional.of("s3a://elsewhere/c"))));
    assertThat(staging.predictFinalKey(STAGING + "/-ext-10000/000000_0")).isEmpty();
  }

  @Test
  void keysOutsideAnExtDirectoryAreNotStagedFiles() {
    assertThat(Layouts.isHiveStagedFile(STAGING + "/" + LoadPlan.FILE_NAME)).isFalse();
    assertThat(Layouts.isHiveStagedFile("wh/t/000000_0")).isFalse();
    assertThat(Layouts.isHiveStagedFile(STAGING + "/-ext-10000/000000_0")).isTrue();
  }
}
