package dev.writeonce.core.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.committer.WriteonceCommitterFactory;
import dev.writeonce.core.testing.ConfigurationKeys;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** docs/configuration.md lists every key, so the reference cannot drift from the code. */
class ConfigurationDocsTest {

  @Test
  void everyConfigurationKeyIsDocumented() throws Exception {
    String docs = Files.readString(Path.of("..", "docs", "configuration.md"));
    List<String> keys = new ArrayList<>(ConfigurationKeys.of(CommitterConfig.class));
    keys.addAll(ConfigurationKeys.of(WriteonceCommitterFactory.class));
    keys.add(dev.writeonce.core.committer.MultipartOutputCommitter.JOB_UUID);
    keys.add(dev.writeonce.core.store.check.StoreTrust.CHECK);
    keys.add(dev.writeonce.core.store.check.StoreTrust.TRUST);
    keys.add(dev.writeonce.core.store.check.StoreTrust.CACHE_DIR);
    keys.add(dev.writeonce.core.store.check.StoreTrust.CACHE_TTL);
    keys.add(dev.writeonce.core.store.check.JobVerdicts.PREFIX + "<endpoint>/<bucket>");

    assertThat(keys).contains(CommitterConfig.COMMIT_THREADS, WriteonceCommitterFactory.COMMITTER);
    for (String key : keys) {
      assertThat(docs).as("docs/configuration.md documents %s", key).contains("`" + key + "`");
    }
  }
}
