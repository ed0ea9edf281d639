package dev.writeonce.core.publish;

import dev.writeonce.core.model.Destination;

/**
 * Where a statement writes in metastore publish mode: every written partition gets a fresh
 * directory under {@code <table>/_generations/<run id>/<partition path>/} (the run directory itself
 * for an unpartitioned table). The leading underscore keeps generations out of a path reader's
 * listing of the table (Spark, Hadoop and Hive skip such names), while the last component of a
 * partition's location stays a plain {@code col=value}, which Hadoop's input formats accept as an
 * input directory.
 *
 * <p>Beside the run directories, {@code _generations/_retired/<run id>} is the record a statement
 * writes after its metastore call, naming the locations it superseded; a later statement removes
 * what it names once the grace period has passed on the store's clock.
 */
public final class Generations {

  public static final String DIR = "_generations/";
  public static final String RETIRED = DIR + "_retired/";

  /** The directory that emptied and not-yet-published partitions point at: it holds no file. */
  public static final String EMPTY = "empty/";

  private Generations() {}

  /** The table's root: the parent of a generation when the path is an unpartitioned table's. */
  public static String rootOf(String path) {
    String trimmed = path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
    int marker = trimmed.lastIndexOf("/" + DIR);
    if (marker >= 0 && trimmed.indexOf('/', marker + 1 + DIR.length()) < 0) {
      return trimmed.substring(0, marker);
    }
    return trimmed;
  }

  /** The key prefix of a run's generation, relative to the table's root. */
  public static String runDir(String runId) {
    return DIR + runId + "/";
  }

  /** The path of a partition's generation relative to the root ({@code ""} for the table). */
  public static String partitionDir(String runId, String fragment) {
    return runDir(runId) + (fragment.isEmpty() ? "" : fragment + "/");
  }

  /** The retire record of a run. */
  public static String retiredKey(Destination root, String runId) {
    return root.prefix() + RETIRED + runId;
  }

  /**
   * The partition path of a key this run wrote, from its key: the part between the run's directory
   * and the file name, or {@code ""} for an unpartitioned table.
   */
  public static String fragmentOf(Destination root, String runId, String key) {
    String dir = root.prefix() + runDir(runId);
    if (!key.startsWith(dir)) {
      throw new IllegalArgumentException(
          "upload " + root.uriOf(key) + " lies outside generation " + root.uriOf(dir));
    }
    String relative = key.substring(dir.length());
    int slash = relative.lastIndexOf('/');
    return slash < 0 ? "" : relative.substring(0, slash);
  }

  /**
   * True when a path relative to a generation lies in a directory whose name starts with '.': the
   * staging directory of a statement that may still be writing ({@code .hive-staging_...}).
   */
  public static boolean inStaging(String relative) {
    String[] segments = relative.split("/");
    int directories = relative.endsWith("/") ? segments.length : segments.length - 1;
    for (int i = 0; i < directories; i++) {
      if (segments[i].startsWith(".")) {
        return true;
      }
    }
    return false;
  }

  /** True when no segment of a path relative to a location is hidden from readers. */
  public static boolean visibleToReaders(String relative) {
    for (String segment : relative.split("/")) {
      if (segment.startsWith("_") || segment.startsWith(".")) {
        return false;
      }
    }
    return true;
  }
}
