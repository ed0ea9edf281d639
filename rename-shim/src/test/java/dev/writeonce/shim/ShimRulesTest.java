package dev.writeonce.shim;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class ShimRulesTest {

  private final ShimRules rules =
      new ShimRules(ShimRules.BUILT_IN, Pattern.compile(ShimConfig.PLAIN_FILES_DEFAULT));

  @Test
  void fileOutputCommitterAttemptFilesOfV1AndV2PredictTheirOutputKey() {
    assertThat(
            rules.predictFinalKey(
                "out/_temporary/0/_temporary/attempt_202611220000_0001_m_000003_0/part-m-00003"))
        .contains("out/part-m-00003");
    assertThat(
            rules.predictFinalKey(
                "t/_temporary/0/_temporary/attempt_202611220000_0001_m_000000_1/day=1/part-0.txt"))
        .contains("t/day=1/part-0.txt");
    assertThat(rules.predictFinalKey("out/_temporary/1/task_202611220000_0001_m_000003/part-3"))
        .as("a committed task directory of v1")
        .contains("out/part-3");
    assertThat(rules.predictFinalKey("_temporary/0/_temporary/attempt_1_0001_m_000000_0/a"))
        .as("output at the bucket root")
        .contains("a");
  }

  @Test
  void sparkDynamicPartitionStagingAroundAttemptDirectoriesResolvesInOnePrediction() {
    String key =
        "sales/.spark-staging-6f1c2d3e-aaaa-bbbb-cccc-0123456789ab/_temporary/0/_temporary/"
            + "attempt_202611220000_0001_m_000000_0/day=2/part-00000-6f1c.c000.snappy.parquet";

    assertThat(rules.predictFinalKey(key))
        .contains("sales/day=2/part-00000-6f1c.c000.snappy.parquet");
    assertThat(rules.isTemporary("sales/.spark-staging-6f1c/day=2/part-0")).isTrue();
  }

  @Test
  void hiveStagingDirectoriesAndTemporaryFilePrefixesAreRemoved() {
    String staging = "warehouse/t/.hive-staging_hive_2026-11-22_10-00-00_123_456-1/";

    assertThat(rules.predictFinalKey(staging + "_task_tmp.-ext-10000/-tmp.000000_0"))
        .contains("warehouse/t/000000_0");
    assertThat(rules.predictFinalKey(staging + "-tmp.-ext-10000/000000_0"))
        .contains("warehouse/t/000000_0");
    assertThat(rules.predictFinalKey(staging + "-tmp.-ext-10000.moved/000001_0"))
        .contains("warehouse/t/000001_0");
    assertThat(rules.predictFinalKey(staging + "-ext-10000/p=2026/000000_0"))
        .contains("warehouse/t/p=2026/000000_0");
  }

  @Test
  void theDirectoryATemporaryDirectorysFilesGoToIsPredictedByTheRules() {
    assertThat(rules.predictFinalDirectory("out/_temporary/0/task_202611220000_0001_m_000003/p=1"))
        .contains("out/p=1");
    assertThat(rules.predictFinalDirectory("out/.spark-staging-1/p=2")).contains("out/p=2");
    assertThat(rules.predictFinalDirectory("out/.spark-staging-1"))
        .as("the staging directory itself")
        .contains("out");
    assertThat(rules.predictFinalDirectory("out/_temporary/0"))
        .as("no attempt directory: its files go nowhere known")
        .isEmpty();
    assertThat(rules.predictFinalDirectory("out/p=1")).as("not temporary").isEmpty();
  }

  @Test
  void plainFilesAndPathsOutsideTemporaryDirectoriesAreNotPredicted() {
    assertThat(
            rules.predictFinalKey("warehouse/t/.hive-staging_x-1/-ext-10000/_blob_manifest_file"))
        .isEmpty();
    assertThat(rules.predictFinalKey("out/.spark-staging-1/_SUCCESS")).isEmpty();
    assertThat(rules.predictFinalKey("out/part-m-00000")).isEmpty();
    assertThat(rules.isTemporary("out/part-m-00000")).isFalse();
    assertThat(rules.predictFinalKey("out/_temporary/0/stray-file"))
        .as("under _temporary but in no attempt directory")
        .isEmpty();
    assertThat(rules.isTemporary("out/_temporary/0/stray-file")).isTrue();
    assertThat(rules.isTemporary("out/_temporary")).isTrue();
    assertThat(rules.isTemporary("out/not_temporary/x")).isFalse();
  }

  @Test
  void theTaskAttemptIsTakenFromTheKey() {
    assertThat(ShimRules.attemptOf("o/_temporary/0/_temporary/attempt_1_0001_m_000000_0/a/b"))
        .isEqualTo("attempt_1_0001_m_000000_0");
    assertThat(ShimRules.attemptOf("o/.hive-staging_x/-ext-1/000000_0")).isEqualTo("unknown");
  }

  @Test
  void theTemporaryRootIsTheOutermostTemporaryDirectory() {
    ShimRules rules = ShimConfig.from(new org.apache.hadoop.conf.Configuration(false), "b").rules();

    assertThat(rules.temporaryRoot("out/_temporary/0/_temporary/attempt_1/part-0"))
        .contains("out/_temporary");
    assertThat(rules.temporaryRoot("out/.spark-staging-7/_temporary/0/task_1/day=1/part-0"))
        .contains("out/.spark-staging-7");
    assertThat(rules.temporaryRoot("db/t/.hive-staging_hive_1/-ext-10000/000000_0"))
        .contains("db/t/.hive-staging_hive_1");
    assertThat(rules.temporaryRoot("out/_temporary")).contains("out/_temporary");
    assertThat(rules.temporaryRoot("out/part-0")).isEmpty();
  }
}
