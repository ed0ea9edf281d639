package dev.writeonce.hive;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;

class HiveSettingsCheckTest {

  private static Configuration conf(Map<String, String> settings) {
    Configuration conf = new Configuration(false);
    settings.forEach(conf::set);
    return conf;
  }

  @Test
  void hivesDefaultsAreReportedForTheMergeJobThatReadsStagedFiles() {
    assertThat(HiveSettingsCheck.check(conf(Map.of())))
        .extracting(HiveSettingsCheck.Finding::setting)
        .containsExactly(HiveSettingsCheck.MERGE_MAP_FILES);
    assertThat(HiveSettingsCheck.check(conf(Map.of())).get(0).message())
        .contains("hive.merge.mapfiles=true", "CTAS", "hive.merge.mapredfiles=false");
  }

  @Test
  void theShippedSettingsPassTheCheck() throws Exception {
    assertThat(HiveSettingsCheck.check(conf(HiveShimIT.shippedSettings("bucket")))).isEmpty();
  }

  @Test
  void anAbsoluteStagingDirectoryAndBlobstoreScratchAreReported() {
    Configuration conf =
        conf(
            Map.of(
                HiveSettingsCheck.MERGE_MAP_FILES, "false",
                HiveSettingsCheck.STAGING_DIR, "/tmp/hive-staging",
                HiveSettingsCheck.BLOBSTORE_AS_SCRATCH, "true",
                HiveSettingsCheck.SCRATCH_FOR_STAGING, "true"));
    assertThat(HiveSettingsCheck.check(conf))
        .extracting(HiveSettingsCheck.Finding::setting)
        .containsExactly(
            HiveSettingsCheck.STAGING_DIR,
            HiveSettingsCheck.BLOBSTORE_AS_SCRATCH,
            HiveSettingsCheck.SCRATCH_FOR_STAGING);
  }

  @Test
  void theHookAsAPreHookAloneIsReportedBecauseItsInsertLockWouldNeverBeReleased() {
    Configuration conf =
        conf(
            Map.of(
                HiveSettingsCheck.MERGE_MAP_FILES,
                "false",
                HiveSettingsCheck.PRE_HOOKS,
                "org.example.Audit, " + LoadPlanHook.class.getName(),
                HiveSettingsCheck.POST_HOOKS,
                LoadPlanHook.class.getName()));

    assertThat(HiveSettingsCheck.check(conf))
        .extracting(HiveSettingsCheck.Finding::setting)
        .containsExactly(HiveSettingsCheck.FAILURE_HOOKS);
    assertThat(HiveSettingsCheck.check(conf).get(0).message())
        .contains("insert lock", "hive.exec.failure.hooks");
    assertThat(HiveSettingsCheck.releasesInsertLocks(conf)).isFalse();

    conf.set(HiveSettingsCheck.FAILURE_HOOKS, LoadPlanHook.class.getName());
    assertThat(HiveSettingsCheck.check(conf)).isEmpty();
    assertThat(HiveSettingsCheck.releasesInsertLocks(conf)).isTrue();
  }
}
