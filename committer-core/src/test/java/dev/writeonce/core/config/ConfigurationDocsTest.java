package dev.writeonce.core.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.committer.WriteonceCommitterFactory;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** docs/configuration.md lists every key, so the reference cannot drift from the code. */
class ConfigurationDocsTest {

  private static List<String> keys(Class<?> type) throws IllegalAccessException {
    List<String> keys = new ArrayList<>();
    for (Field field : type.getDeclaredFields()) {
      int mods = field.getModifiers();
      if (Modifier.isStatic(mods)
          && Modifier.isPublic(mods)
          && field.getType() == String.class
          && !field.getName().endsWith("_DEFAULT")
          && !field.getName().equals("PREFIX")) {
        keys.add((String) field.get(null));
      }
    }
    return keys;
  }

  @Test
  void everyConfigurationKeyIsDocumented() throws Exception {
    String docs = Files.readString(Path.of("..", "docs", "configuration.md"));
    List<String> keys = new ArrayList<>(keys(CommitterConfig.class));
    keys.addAll(keys(WriteonceCommitterFactory.class));

    assertThat(keys).contains(CommitterConfig.COMMIT_THREADS, WriteonceCommitterFactory.COMMITTER);
    for (String key : keys) {
      assertThat(docs).as("docs/configuration.md documents %s", key).contains("`" + key + "`");
    }
  }
}
