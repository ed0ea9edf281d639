package dev.writeonce.shim;

import java.io.IOException;
import java.io.StringReader;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;

/**
 * What a Hive statement will do with each {@code -ext-N} directory of its staging directory:
 * whether its files join the files already in the destination (which makes Hive name a file {@code
 * <name>_copy_<K>} when {@code <name>} exists) or replace them, and, where the destination is not
 * the directory holding the staging directory (CTAS), the destination itself. A Hive hook writes
 * the plan into the staging directory before the statement's jobs run; the shim reads it once per
 * statement to start each upload at the key Hive will give the file.
 *
 * @param loads by the name of the {@code -ext-N} directory
 */
public record LoadPlan(Map<String, Load> loads) {

  /** The plan's object name inside the staging directory. */
  public static final String FILE_NAME = "_writeonce-load-plan";

  /** An empty plan: every file joins its destination, which the staging directory's path names. */
  public static final LoadPlan NONE = new LoadPlan(Map.of());

  /** How a statement's files meet the files already in their destination. */
  public enum Mode {
    /** INSERT INTO: files join, and a name already taken gets a {@code _copy_K} suffix. */
    KEEP,
    /** INSERT OVERWRITE and CTAS: earlier files go first, so every file keeps its name. */
    REPLACE
  }

  /**
   * @param mode how the files meet existing ones
   * @param target the destination directory as a URI, when the staging path does not name it
   */
  public record Load(Mode mode, Optional<String> target) {}

  public LoadPlan {
    loads = Map.copyOf(new LinkedHashMap<>(loads));
  }

  public Optional<Load> load(String extDirectory) {
    return Optional.ofNullable(loads.get(extDirectory));
  }

  /** The plan as a small properties text, sorted so equal plans are equal bytes. */
  public byte[] toBytes() {
    StringBuilder text = new StringBuilder("# writeonce load plan v1\n");
    new TreeMap<>(loads)
        .forEach(
            (ext, load) -> {
              text.append(ext)
                  .append(".mode=")
                  .append(load.mode().name().toLowerCase(Locale.ROOT))
                  .append('\n');
              load.target()
                  .ifPresent(
                      target ->
                          text.append(ext).append(".target=").append(escape(target)).append('\n'));
            });
    return text.toString().getBytes(StandardCharsets.UTF_8);
  }

  private static String escape(String value) {
    Properties one = new Properties();
    one.setProperty("k", value);
    StringWriter out = new StringWriter();
    try {
      one.store(out, null);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    String stored = out.toString();
    int at = stored.indexOf("k=");
    return stored.substring(at + 2).strip();
  }

  /**
   * Reads a plan.
   *
   * @param where the plan's location, for messages
   * @throws IOException when the text is not a plan this version understands
   */
  public static LoadPlan parse(byte[] body, String where) throws IOException {
    Properties properties = new Properties();
    properties.load(new StringReader(new String(body, StandardCharsets.UTF_8)));
    Map<String, Mode> modes = new TreeMap<>();
    Map<String, String> targets = new TreeMap<>();
    for (String name : properties.stringPropertyNames()) {
      int dot = name.lastIndexOf('.');
      String ext = dot < 0 ? "" : name.substring(0, dot);
      String field = name.substring(dot + 1);
      String value = properties.getProperty(name);
      switch (field) {
        case "mode" -> {
          try {
            modes.put(ext, Mode.valueOf(value.toUpperCase(Locale.ROOT)));
          } catch (IllegalArgumentException e) {
            throw new IOException(
                where + ": unknown load mode '" + value + "' for " + ext + " (keep or replace)");
          }
        }
        case "target" -> targets.put(ext, value);
        default ->
            throw new IOException(
                where + ": unknown entry '" + name + "' in a writeonce load plan");
      }
    }
    Map<String, Load> loads = new LinkedHashMap<>();
    for (Map.Entry<String, Mode> entry : modes.entrySet()) {
      loads.put(
          entry.getKey(),
          new Load(entry.getValue(), Optional.ofNullable(targets.get(entry.getKey()))));
    }
    if (!targets.keySet().stream().allMatch(modes::containsKey)) {
      throw new IOException(where + ": a target without a mode in a writeonce load plan");
    }
    return new LoadPlan(loads);
  }
}
