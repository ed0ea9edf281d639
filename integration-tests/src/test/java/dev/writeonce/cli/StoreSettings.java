package dev.writeonce.cli;

import dev.writeonce.teststore.TestStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.hadoop.conf.Configuration;

/** The Hadoop settings that reach a test store, as an operator passes them to the command. */
final class StoreSettings {

  private StoreSettings() {}

  static Map<String, String> of(TestStore store) {
    Map<String, String> settings = new TreeMap<>();
    store.configure(new Configuration(false)).forEach(e -> settings.put(e.getKey(), e.getValue()));
    return settings;
  }

  /** The settings as {@code --conf=KEY=VALUE} arguments. */
  static List<String> arguments(Map<String, String> settings) {
    List<String> args = new ArrayList<>();
    settings.forEach((key, value) -> args.add("--conf=" + key + "=" + value));
    return args;
  }
}
