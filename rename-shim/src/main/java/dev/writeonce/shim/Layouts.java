package dev.writeonce.shim;

import static dev.writeonce.shim.Keys.nameOf;

import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The directory layouts the shim reads, written once: FileOutputCommitter's job, task attempt and
 * committed task directories, Spark's staging directory of a dynamic partition overwrite, and
 * Hive's staging directories and file names. Key arithmetic is {@link Keys}'.
 */
final class Layouts {

  /** FileOutputCommitter's job attempt directory, {@code _temporary/<application attempt>}. */
  private static final String JOB_ATTEMPT = "_temporary/\\d+";

  /**
   * A task attempt's directory in it, {@code _temporary/<attempt id>} (tasks still write there).
   */
  static final String TASK_ATTEMPT = "_temporary/attempt_[^/]+";

  /** A committed task's directory in it, {@code task_<id>}, which the job commit merges. */
  static final String COMMITTED_TASK = "task_[^/]+";

  /**
   * Where FileOutputCommitter (v1 and v2) keeps a file before the commit: in a task attempt's or a
   * committed task's directory under a job attempt directory; group 1 is the output directory's
   * prefix (empty or ending in '/'), group 2 the file's path below the task's directory.
   */
  static final Pattern FILE_OUTPUT_COMMITTER_FILE =
      Pattern.compile(
          "^((?:.*/)?)" + JOB_ATTEMPT + "/(?:_temporary/)?(?:attempt|task)_[^/]+/(.+)$");

  /** FileOutputCommitter's layout at the start of a path below its output directory. */
  private static final Pattern FILE_OUTPUT_COMMITTER_LAYOUT =
      Pattern.compile("^" + JOB_ATTEMPT + "/(?:_temporary/)?(?:attempt|task)_[^/]+/");

  /** A job attempt's directory itself; group 1 is its key. */
  private static final Pattern JOB_ATTEMPT_DIRECTORY =
      Pattern.compile("^((?:.*/)?" + JOB_ATTEMPT + ")$");

  /** A key in a job attempt's directory outside its task attempts; group 1 the directory's key. */
  private static final Pattern IN_JOB_ATTEMPT =
      Pattern.compile("^((?:.*/)?" + JOB_ATTEMPT + ")(?:/" + COMMITTED_TASK + "(?:/.*)?)?$");

  /** A task attempt's directory, or a key in it; group 1 the directory's key. */
  private static final Pattern IN_TASK_ATTEMPT =
      Pattern.compile("^((?:.*/)?" + JOB_ATTEMPT + "/" + TASK_ATTEMPT + ")(?:/.*)?$");

  /**
   * A file of a committed task: group 1 the job attempt directory, 2 the file's path below the
   * task's directory.
   */
  private static final Pattern COMMITTED_TASK_FILE_PARTS =
      Pattern.compile("^((?:.*/)?" + JOB_ATTEMPT + ")/" + COMMITTED_TASK + "/(.+)$");

  /** A file of a committed task: what FileOutputCommitter v1's job commit merges into place. */
  private static final Pattern COMMITTED_TASK_FILE =
      Pattern.compile("^(?:.*/)?" + JOB_ATTEMPT + "/" + COMMITTED_TASK + "/.+$");

  /** Hive's staging directory: {@code .hive-staging_*}. */
  static final String HIVE_STAGING = "\\.hive-staging[^/]*";

  /**
   * A file under Hive's staging directory: group 1 the destination's prefix, 2 the staging
   * directory's name, 3 its {@code -ext-N} directory, 4 the path below (partitions), 5 the file's
   * name without Hive's {@code _tmp.} or {@code -tmp.} prefix. A branch of a {@code UNION ALL} on
   * Tez writes into {@code _task_tmp.HIVE_UNION_SUBDIR_<n>/} first, and its files end in {@code
   * <partitions>/HIVE_UNION_SUBDIR_<n>/}: that first directory is not part of the path.
   */
  static final Pattern HIVE_STAGED_FILE =
      Pattern.compile(
          "^((?:.*/)?)("
              + HIVE_STAGING
              + ")/(?:_task_tmp\\.|_tmp\\.|-tmp\\.)?(-ext-\\d+)"
              + "(?:\\.moved)?/(?:(?:_task_tmp\\.|_tmp\\.|-tmp\\.)HIVE_UNION_SUBDIR_\\d+/)?"
              + "((?:[^/]+/)*)(?:_tmp\\.|-tmp\\.)?([^/]+)$");

  /** Whether a key lies under a Hive staging directory. */
  private static final Pattern IN_HIVE_STAGING = Pattern.compile("(^|/)" + HIVE_STAGING + "(/|$)");

  /** A key under Spark's staging directory of a dynamic partition overwrite. */
  private static final Pattern IN_SPARK_STAGING = Pattern.compile("(^|/)\\.spark-staging-[^/]+/");

  /** A name Hive gives a file to keep an existing one: {@code <name>_copy_<K>[.ext]}. */
  private static final Pattern HIVE_COPY_NAME = Pattern.compile(".*_copy_\\d+(\\.[^./]+)?");

  private Layouts() {}

  /**
   * A path below an output directory without FileOutputCommitter's layout at its start: {@code
   * _temporary/0/_temporary/attempt_x/p=1/} becomes {@code p=1/}; other paths are returned as they
   * are.
   */
  static String withoutCommitterLayout(String path) {
    return FILE_OUTPUT_COMMITTER_LAYOUT.matcher(path).replaceFirst("");
  }

  /** The job attempt directory a key lies in (outside task attempts), or is. */
  static Optional<String> jobAttemptOf(String key) {
    Matcher matcher = IN_JOB_ATTEMPT.matcher(key);
    return matcher.matches() ? Optional.of(matcher.group(1)) : Optional.empty();
  }

  /** A committed task's directory, or a key in it; group 1 the directory's key. */
  private static final Pattern IN_COMMITTED_TASK_DIRECTORY =
      Pattern.compile("^((?:.*/)?" + JOB_ATTEMPT + "/" + COMMITTED_TASK + ")(?:/.*)?$");

  /** The committed task directory a key lies in, or is. */
  static Optional<String> committedTaskOf(String key) {
    Matcher matcher = IN_COMMITTED_TASK_DIRECTORY.matcher(key);
    return matcher.matches() ? Optional.of(matcher.group(1)) : Optional.empty();
  }

  /** Whether the key is a committed task's directory itself. */
  static boolean isCommittedTaskDirectory(String key) {
    return committedTaskOf(key).map(key::equals).orElse(false);
  }

  /** Whether the key is a job attempt directory, which FileOutputCommitter's job commit lists. */
  static boolean isJobAttemptDirectory(String key) {
    return JOB_ATTEMPT_DIRECTORY.matcher(key).matches();
  }

  /** The task attempt directory a key lies in, or is. */
  static Optional<String> taskAttemptOf(String key) {
    Matcher matcher = IN_TASK_ATTEMPT.matcher(key);
    return matcher.matches() ? Optional.of(matcher.group(1)) : Optional.empty();
  }

  /**
   * Where a committed task's file was before the task commit moved it: the same path under the
   * directory of the attempt that wrote it ({@code _temporary/<n>/_temporary/<attempt>/}).
   * FileOutputCommitter v1's task commit renames the attempt's directory whole, so the path below
   * it is kept.
   */
  static Optional<String> attemptTwinOf(String committedKey, String taskAttempt) {
    Matcher matcher = COMMITTED_TASK_FILE_PARTS.matcher(committedKey);
    if (!matcher.matches() || !taskAttempt.startsWith("attempt_") || taskAttempt.contains("/")) {
      return Optional.empty();
    }
    return Optional.of(matcher.group(1) + "/_temporary/" + taskAttempt + "/" + matcher.group(2));
  }

  /** Whether a rename moves a task attempt's directory to its committed task's directory. */
  static boolean isTaskCommit(String sourceKey, String targetKey) {
    Matcher attempt = IN_TASK_ATTEMPT.matcher(sourceKey);
    Matcher committed = IN_JOB_ATTEMPT.matcher(targetKey);
    return attempt.matches()
        && attempt.group(1).equals(sourceKey)
        && committed.matches()
        && !committed.group(1).equals(targetKey)
        && sourceKey.startsWith(committed.group(1) + "/_temporary/")
        && targetKey.indexOf('/', committed.group(1).length() + 1) < 0;
  }

  /**
   * A committed task's directory or a key in it: group 1 the output, 2 what lies below the task.
   */
  private static final Pattern IN_COMMITTED_TASK =
      Pattern.compile("^((?:.*/)?)" + JOB_ATTEMPT + "/" + COMMITTED_TASK + "(/.*)?$");

  /**
   * Where FileOutputCommitter v1's job commit merges a committed task's directory, or a directory
   * in it: the same path below the committer's output directory ({@code
   * out/_temporary/<n>/task_x/p=1} goes to {@code out/p=1}), whatever the output is (a table, or
   * Spark's staging directory).
   */
  static Optional<String> mergeDestinationOf(String key) {
    Matcher matcher = IN_COMMITTED_TASK.matcher(key);
    if (!matcher.matches()) {
      return Optional.empty();
    }
    String output =
        matcher.group(1).isEmpty()
            ? ""
            : matcher.group(1).substring(0, matcher.group(1).length() - 1);
    String below = matcher.group(2) == null ? "" : matcher.group(2);
    return Optional.of(
        output.isEmpty() ? (below.isEmpty() ? "" : below.substring(1)) : output + below);
  }

  /**
   * Where FileOutputCommitter v1's job commit merges the committed task whose directory holds a
   * key: the committer's output directory ({@code out/_temporary/<n>/task_x/p=1} is merged into
   * {@code out}); empty outside a committed task, or where the output is the bucket's root.
   */
  static Optional<String> mergeRootOf(String key) {
    Matcher matcher = IN_COMMITTED_TASK.matcher(key);
    if (!matcher.matches() || matcher.group(1).isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(matcher.group(1).substring(0, matcher.group(1).length() - 1));
  }

  /** FileOutputCommitter's temporary root of a key in its layout: {@code out/_temporary}. */
  static Optional<String> temporaryRootOf(String key) {
    Matcher matcher = IN_JOB_ATTEMPT_OR_BELOW.matcher(key);
    return matcher.matches() ? Optional.of(matcher.group(1)) : Optional.empty();
  }

  private static final Pattern IN_JOB_ATTEMPT_OR_BELOW =
      Pattern.compile("^((?:.*/)?_temporary)/\\d+(?:/.*)?$");

  /**
   * Whether a key lies under Spark's staging directory of a dynamic partition overwrite, whose
   * files Spark's driver renames into place after the job commit, in the job commit's process.
   */
  static boolean isInSparkStaging(String key) {
    return IN_SPARK_STAGING.matcher(key).find();
  }

  /** Whether the key is a file of a committed task (outside Hive's staging). */
  static boolean isCommittedTaskFile(String key) {
    return COMMITTED_TASK_FILE.matcher(key).matches() && !IN_HIVE_STAGING.matcher(key).find();
  }

  /** Whether the key is a file under a Hive {@code -ext-N} staging directory. */
  static boolean isHiveStagedFile(String key) {
    return HIVE_STAGED_FILE.matcher(key).matches();
  }

  /** Whether a key's name is one Hive gives to keep an existing file. */
  static boolean isHiveCopyName(String key) {
    return HIVE_COPY_NAME.matcher(nameOf(key)).matches();
  }
}
