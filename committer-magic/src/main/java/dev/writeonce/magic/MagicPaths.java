package dev.writeonce.magic;

import java.util.Optional;

/**
 * The layout of magic paths. A task attempt writes under
 *
 * <pre>
 * dest/__writeonce_magic-JOB/ATTEMPT/__base/relative/path
 * </pre>
 *
 * and the data goes, as a multipart upload, to {@code dest/relative/path}. Nothing is ever stored
 * under the magic directory itself.
 */
public final class MagicPaths {

  /** The directory that marks a magic path; the job id follows it. */
  public static final String MAGIC_PREFIX = "__writeonce_magic-";

  /** The directory below an attempt under which paths map to the destination. */
  public static final String BASE = "__base";

  private MagicPaths() {}

  /**
   * What a magic key stands for.
   *
   * @param attemptKey the key prefix of the attempt's directory, ending in '/'; empty for the job's
   *     magic directory itself
   * @param destinationPrefix the key prefix of the destination, empty or ending in '/'
   * @param relative the path below {@code __base}; empty for the base or attempt directory
   */
  public record Target(String attemptKey, String destinationPrefix, String relative) {

    /** The key the data will have once the job commits. */
    public String finalKey() {
      return destinationPrefix + relative;
    }

    public boolean isFile() {
      return !relative.isEmpty();
    }
  }

  /** True when any segment of the key marks it as magic. */
  public static boolean isMagic(String key) {
    return key.startsWith(MAGIC_PREFIX) || key.contains("/" + MAGIC_PREFIX);
  }

  /**
   * Parses a magic key. Empty when the key is not magic; fails when it is magic but not of the form
   * above, because writing it anywhere would lose the data.
   */
  public static Optional<Target> parse(String key) {
    if (!isMagic(key)) {
      return Optional.empty();
    }
    String[] segments = key.split("/", -1);
    int magic = 0;
    while (!segments[magic].startsWith(MAGIC_PREFIX)) {
      magic++;
    }
    StringBuilder destination = new StringBuilder();
    for (int i = 0; i < magic; i++) {
      destination.append(segments[i]).append('/');
    }
    boolean hasAttempt = segments.length > magic + 1 && !segments[magic + 1].isEmpty();
    if (!hasAttempt) {
      return Optional.of(new Target("", destination.toString(), ""));
    }
    String attemptKey = destination + segments[magic] + "/" + segments[magic + 1] + "/";
    boolean belowAttempt = segments.length > magic + 2 && !segments[magic + 2].isEmpty();
    if (!belowAttempt) {
      return Optional.of(new Target(attemptKey, destination.toString(), ""));
    }
    if (!segments[magic + 2].equals(BASE)) {
      throw new IllegalArgumentException(
          "magic path "
              + key
              + " has no "
              + BASE
              + " directory below its attempt: task output must go under the committer's work"
              + " path");
    }
    StringBuilder relative = new StringBuilder();
    for (int i = magic + 3; i < segments.length; i++) {
      if (relative.length() > 0) {
        relative.append('/');
      }
      relative.append(segments[i]);
    }
    String rel = relative.toString();
    while (rel.endsWith("/")) {
      rel = rel.substring(0, rel.length() - 1);
    }
    return Optional.of(new Target(attemptKey, destination.toString(), rel));
  }

  /** The key of an attempt's base directory. */
  public static String baseKey(String destinationPrefix, String jobId, String attemptId) {
    return destinationPrefix + MAGIC_PREFIX + jobId + "/" + attemptId + "/" + BASE;
  }
}
