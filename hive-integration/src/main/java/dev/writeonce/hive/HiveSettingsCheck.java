package dev.writeonce.hive;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.hadoop.conf.Configuration;

/**
 * Hive settings that do not go with the rename shim, or that lose data on object stores, each with
 * the setting to change. Works on any Hadoop configuration, so a deployment can check its {@code
 * hive-site.xml} before Hive starts.
 */
public final class HiveSettingsCheck {

  public static final String MERGE_MAP_FILES = "hive.merge.mapfiles";
  public static final String MERGE_MAPRED_FILES = "hive.merge.mapredfiles";
  public static final String MERGE_TEZ_FILES = "hive.merge.tezfiles";
  public static final String STAGING_DIR = "hive.exec.stagingdir";
  public static final String BLOBSTORE_AS_SCRATCH = "hive.blobstore.use.blobstore.as.scratchdir";
  public static final String BLOBSTORE_OPTIMIZATIONS = "hive.blobstore.optimizations.enabled";
  public static final String SCRATCH_FOR_STAGING = "hive.use.scratchdir.for.staging";
  public static final String PRE_HOOKS = "hive.exec.pre.hooks";
  public static final String POST_HOOKS = "hive.exec.post.hooks";
  public static final String FAILURE_HOOKS = "hive.exec.failure.hooks";

  private static final String HOOK = LoadPlanHook.class.getName();

  private HiveSettingsCheck() {}

  /** One problem: the setting, its value and what to do. */
  public record Finding(String setting, String value, String problem, String fix) {
    /** The finding as one log line. */
    public String message() {
      return setting + "=" + value + ": " + problem + " Fix: " + fix;
    }
  }

  /** The problems of a configuration; empty when it suits the shim. */
  public static List<Finding> check(Configuration conf) {
    List<Finding> findings = new ArrayList<>();
    mergeFindings(conf, findings);
    String staging = conf.get(STAGING_DIR, ".hive-staging").trim();
    if (staging.startsWith("/") || staging.contains(":") || !staging.startsWith(".hive-staging")) {
      findings.add(
          new Finding(
              STAGING_DIR,
              staging,
              "the shim recognises Hive's staged files by a relative staging directory named"
                  + " .hive-staging* inside the destination; elsewhere every file is copied into"
                  + " place.",
              "leave " + STAGING_DIR + " at its default .hive-staging."));
    }
    for (String key : new String[] {BLOBSTORE_AS_SCRATCH, SCRATCH_FOR_STAGING}) {
      String scratch = conf.get(key, "false").trim();
      if (!Boolean.parseBoolean(scratch)) {
        continue;
      }
      findings.add(
          new Finding(
              key,
              scratch,
              "Hive stages output in its scratch directory instead of beside the destination, so"
                  + " the final location of a staged file cannot be derived from its path.",
              "set " + key + "=false."));
    }
    for (String key : new String[] {POST_HOOKS, FAILURE_HOOKS}) {
      if (hooks(conf, PRE_HOOKS).contains(HOOK) && !hooks(conf, key).contains(HOOK)) {
        findings.add(
            new Finding(
                key,
                conf.get(key, ""),
                HOOK
                    + " takes a table's insert lock before an INSERT INTO and releases it after"
                    + " the statement, in the post-execution and failure hooks; without both it"
                    + " takes no lock, and two INSERT INTO statements running at once on one table"
                    + " can choose the same file names, failing the second one's move.",
                "add " + HOOK + " to " + POST_HOOKS + " and " + FAILURE_HOOKS + "."));
      }
    }
    return findings;
  }

  private static void mergeFindings(Configuration conf, List<Finding> findings) {
    boolean optimizations = conf.getBoolean(BLOBSTORE_OPTIMIZATIONS, true);
    for (String[] merge :
        new String[][] {
          {MERGE_MAP_FILES, "true"}, {MERGE_MAPRED_FILES, "false"}, {MERGE_TEZ_FILES, "false"}
        }) {
      String value = conf.get(merge[0], merge[1]).trim();
      if (Boolean.parseBoolean(value)) {
        findings.add(
            new Finding(
                merge[0],
                value,
                "the small-file merge job reads staged files before the commit, which the rename"
                    + " shim refuses (their data is a pending upload)"
                    + (optimizations
                        ? "; with it, Hive 4.1 also commits an empty table for CTAS and loads"
                            + " nothing for a dynamic-partition INSERT OVERWRITE on object stores."
                        : "."),
                "set " + MERGE_MAP_FILES + "=false and " + MERGE_MAPRED_FILES + "=false."));
      }
    }
  }

  /**
   * Whether Hive calls {@link LoadPlanHook} after every statement, succeeded or failed, so that a
   * lock it takes before the statement is always released.
   */
  public static boolean releasesInsertLocks(Configuration conf) {
    return hooks(conf, POST_HOOKS).contains(HOOK) && hooks(conf, FAILURE_HOOKS).contains(HOOK);
  }

  private static List<String> hooks(Configuration conf, String key) {
    return List.of(conf.getTrimmedStrings(key));
  }

  /** The findings as lines for a log or a console. */
  public static List<String> describe(List<Finding> findings) {
    List<String> lines = new ArrayList<>();
    for (Finding finding : findings) {
      lines.add(String.format(Locale.ROOT, "writeonce: %s", finding.message()));
    }
    return lines;
  }
}
