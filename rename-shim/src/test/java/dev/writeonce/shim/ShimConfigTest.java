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
  void completionsAreQueuedWhateverTheJobsOwnSettingsUnlessTurnedOff() {
    Configuration conf = new Configuration(false);
    assertThat(ShimConfig.from(conf, "lake").queueCompletions()).isTrue();

    // The merge's last rename reports a failure: FileOutputCommitter's settings do not matter.
    conf.setBoolean("mapreduce.fileoutputcommitter.marksuccessfuljobs", false);
    conf.setBoolean("mapreduce.fileoutputcommitter.cleanup.skipped", true);
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
