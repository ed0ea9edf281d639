package dev.writeonce.core.model;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * What a Hive statement will do with each {@code -ext-N} directory of its staging directory:
 * whether its files join the files already in the destination (which makes Hive name a file {@code
 * <name>_copy_<K>} when {@code <name>} exists) or replace them, and, where the destination is not
 * the directory holding the staging directory (CTAS), the destination itself. A Hive hook writes
 * the plan into the staging directory before the statement's jobs run; the rename shim reads it
 * once per statement to start each upload at the key Hive will give the file. Its JSON format is
 * {@code LoadPlanFormat}.
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
}
