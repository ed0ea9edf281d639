package dev.writeonce.shim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.testing.ConfigurationKeys;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;

class ShimConfigTest {

  @Test
  void everyShimKeyIsDocumented() throws Exception {
    String docs = Files.readString(Path.of("..", "docs", "configuration.md"));

    assertThat(ConfigurationKeys.of(ShimConfig.class)).contains(ShimConfig.RULES);
    for (String key : ConfigurationKeys.of(ShimConfig.class)) {
      assertThat(docs).as("docs/configuration.md documents %s", key).contains("`" + key + "`");
    }
  }

  @Test
  void completionsAreQueuedOnlyWhereFileOutputCommittersJobCommitEndsWithACallThatWaits() {
    Configuration conf = new Configuration(false);
    assertThat(ShimConfig.from(conf, "lake").queueCompletions()).isTrue();

    // No _SUCCESS, but the cleanup's delete of the temporary tree still waits and fails.
    conf.setBoolean("mapreduce.fileoutputcommitter.marksuccessfuljobs", false);
    assertThat(ShimConfig.from(conf, "lake").queueCompletions()).isTrue();

    // No _SUCCESS and a cleanup that is skipped, or whose failure is ignored: nothing would wait.
    conf.setBoolean("mapreduce.fileoutputcommitter.cleanup.skipped", true);
    assertThat(ShimConfig.from(conf, "lake").queueCompletions()).isFalse();
    conf.setBoolean("mapreduce.fileoutputcommitter.cleanup.skipped", false);
    conf.setBoolean("mapreduce.fileoutputcommitter.cleanup-failures.ignored", true);
    assertThat(ShimConfig.from(conf, "lake").queueCompletions()).isFalse();

    // With _SUCCESS its create waits, and keeps failing after a failure the cleanup ignored.
    conf.setBoolean("mapreduce.fileoutputcommitter.marksuccessfuljobs", true);
    assertThat(ShimConfig.from(conf, "lake").queueCompletions()).isTrue();

    conf.setBoolean(ShimConfig.QUEUE_COMPLETIONS, false);
    assertThat(ShimConfig.from(conf, "lake").queueCompletions()).isFalse();
  }

  @Test
  void aCustomRuleFromConfigurationPredictsItsLayout() {
    Configuration conf = new Configuration(false);
    conf.set(ShimConfig.RULES, "file-output-committer,landing");
    conf.set("writeonce.shim.rule.landing.temporary", "(^|/)_landing(/|$)");
    conf.set("writeonce.shim.rule.landing.predict", "^((?:.*/)?)_landing/[^/]+/(.+)$");
    conf.set("writeonce.shim.rule.landing.final", "$1$2");

    ShimConfig config = ShimConfig.from(conf, "lake");

    assertThat(config.enabled()).isTrue();
    assertThat(config.rules().predictFinalKey("t/_landing/run-7/x.csv")).contains("t/x.csv");
  }

  @Test
  void anUnknownRuleIsRefusedNamingTheKeysToSet() {
    Configuration conf = new Configuration(false);
    conf.set(ShimConfig.RULES, "landing");

    assertThatThrownBy(() -> ShimConfig.from(conf, "lake"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("writeonce.shim.rule.landing.temporary")
        .hasMessageContaining("file-output-committer");
  }

  @Test
  void aBucketOutsideTheListIsServedAsPlainS3a() {
    Configuration conf = new Configuration(false);
    conf.set(ShimConfig.BUCKETS, "warehouse, lake");

    assertThat(ShimConfig.from(conf, "lake").enabled()).isTrue();
    assertThat(ShimConfig.from(conf, "scratch").enabled()).isFalse();
  }

  @Test
  void aMissCopiesByDefault() {
    assertThat(ShimConfig.from(new Configuration(false), "lake").onMiss())
        .isEqualTo(ShimConfig.OnMiss.COPY);
    assertThat(ShimConfig.ON_MISS_DEFAULT).isEqualTo(ShimConfig.OnMiss.COPY.value());
  }

  @Test
  void onMissAcceptsFailAndRefusesOtherValuesNamingTheSetting() {
    Configuration conf = new Configuration(false);
    conf.set(ShimConfig.ON_MISS, "fail");
    assertThat(ShimConfig.from(conf, "lake").onMiss()).isEqualTo(ShimConfig.OnMiss.FAIL);

    conf.set(ShimConfig.ON_MISS, "ignore");
    assertThatThrownBy(() -> ShimConfig.from(conf, "lake"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("writeonce.shim.on-miss")
        .hasMessageContaining("'ignore'")
        .hasMessageContaining("copy")
        .hasMessageContaining("fail");
  }
}
