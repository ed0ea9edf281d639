package dev.writeonce.core.publish;

import dev.writeonce.core.model.Destination;
import java.io.IOException;
import java.net.URI;
import java.util.HashMap;
import java.util.Map;

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

  /**
   * Under a run's directory, the empty directories that partitions the run empties, or adds before
   * it publishes them, point at: one per partition ({@code _empty/<partition path>/}), since no two
   * partitions ever share a location.
   */
  public static final String EMPTY = "_empty/";

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

  /** The empty directory of a partition in a run's generation (see {@link #EMPTY}). */
  public static String emptyDir(String runId, String fragment) {
    return runDir(runId) + EMPTY + (fragment.isEmpty() ? "" : fragment + "/");
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

  /**
   * The partition path of each partition location (as {@link #normalized}), so that a write an
   * engine sends to a partition's own location goes to that partition in the new generation.
   *
   * @throws IOException when two partitions share a location: a write there could belong to either,
   *     so the statement is refused rather than routed by guess
   */
  public static Map<String, String> fragmentsByLocation(String table, Map<String, URI> partitions)
      throws IOException {
    Map<String, String> fragments = new HashMap<>();
    for (Map.Entry<String, URI> partition : partitions.entrySet()) {
      String location = normalized(partition.getValue());
      String other = fragments.putIfAbsent(location, partition.getKey());
      if (other != null) {
        throw sharedLocation(table, other, partition.getKey(), location);
      }
    }
    return fragments;
  }

  /** Refuses a table whose catalog maps two partitions to one location; see above. */
  public static void requireOwnLocations(String table, Map<String, URI> partitions)
      throws IOException {
    fragmentsByLocation(table, partitions);
  }

  private static IOException sharedLocation(
      String table, String first, String second, String location) {
    return new IOException(
        "partitions ("
            + spec(first)
            + ") and ("
            + spec(second)
            + ") of table "
            + table
            + " share the location "
            + location
            + ": metastore publish mode gives every partition a directory of its own and cannot"
            + " tell which of them a file there belongs to, so it refuses the statement. Give each"
            + " its own directory (ALTER TABLE "
            + table
            + " PARTITION ("
            + spec(second)
            + ") SET LOCATION '<a directory of its own>'), or drop the partitions that are"
            + " empty (ALTER TABLE "
            + table
            + " DROP PARTITION ("
            + spec(second)
            + ")), then run the statement again");
  }

  /** A partition path as a partition spec for SQL: {@code a=1/b=x} as {@code a='1', b='x'}. */
  static String spec(String fragment) {
    StringBuilder spec = new StringBuilder();
    for (String column : fragment.split("/")) {
      int equals = column.indexOf('=');
      if (spec.length() > 0) {
        spec.append(", ");
      }
      spec.append(
          equals < 0
              ? column
              : column.substring(0, equals + 1) + "'" + column.substring(equals + 1) + "'");
    }
    return spec.toString();
  }

  /** Whether a location is an S3 location ({@code s3a}, {@code s3}, {@code s3n}) in a bucket. */
  public static boolean inBucket(URI location, String bucket) {
    return location.getScheme() != null
        && location.getScheme().matches("s3[an]?")
        && bucket.equals(location.getHost());
  }

  /**
   * Whether another table's location may hold a directory of the table at {@code rootPath}, or lie
   * inside it: in its bucket, and one of the two prefixes holds the other. Such a table's partition
   * locations must then be read too before anything under the root is removed.
   */
  public static boolean overlapsRoot(URI location, String rootPath) {
    Destination root = Destination.of(URI.create(rootPath));
    if (!inBucket(location, root.bucket())) {
      return false;
    }
    String prefix = Destination.of(location).prefix();
    return prefix.startsWith(root.prefix()) || root.prefix().startsWith(prefix);
  }

  /** A location as a path string without a trailing separator, as Hadoop's Path prints it. */
  public static String normalized(URI location) {
    return new org.apache.hadoop.fs.Path(location).toString();
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
