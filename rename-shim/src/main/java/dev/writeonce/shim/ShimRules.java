package dev.writeonce.shim;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Which keys lie under temporary directories of rename-based commit code, and where a file written
 * there will be after the commit's renames: its predicted final key. Each rule recognises one kind
 * of temporary directory and removes it from a key; rules apply until none matches, so nested
 * layouts (Spark's dynamic-partition staging around FileOutputCommitter's attempt directories)
 * resolve in one prediction.
 */
public final class ShimRules {

  /** FileOutputCommitter, v1 and v2: {@code _temporary/<n>/[_temporary/]<attempt or task>/}. */
  public static final Rule FILE_OUTPUT_COMMITTER =
      new Rule(
          "file-output-committer",
          Pattern.compile("(^|/)_temporary(/|$)"),
          Layouts.FILE_OUTPUT_COMMITTER_FILE,
          "$1$2");

  /** Spark's dynamic-partition staging directory: {@code .spark-staging-<jobId>/}. */
  public static final Rule SPARK_STAGING =
      new Rule(
          "spark-staging",
          Pattern.compile("(^|/)\\.spark-staging-[^/]+(/|$)"),
          Pattern.compile("^((?:.*/)?)\\.spark-staging-[^/]+/(.+)$"),
          "$1$2");

  /**
   * Hive's staging directory {@code .hive-staging_*} with its {@code _task_tmp.-ext-N}, {@code
   * -tmp.-ext-N}, {@code -tmp.-ext-N.moved} and {@code -ext-N} directories, and the {@code -tmp.}
   * and {@code _tmp.} prefixes of files still being written.
   */
  public static final Rule HIVE =
      new Rule(
          "hive",
          Pattern.compile("(^|/)" + Layouts.HIVE_STAGING + "(/|$)"),
          Layouts.HIVE_STAGED_FILE,
          "$1$4$5");

  /** The built-in rules, by name. */
  public static final List<Rule> BUILT_IN = List.of(FILE_OUTPUT_COMMITTER, SPARK_STAGING, HIVE);

  /** More nesting than any commit protocol produces: a guard against rules that feed each other. */
  private static final int MAX_ROUNDS = 8;

  /**
   * One kind of temporary directory.
   *
   * @param name the rule's name in configuration and logs
   * @param temporary finds the temporary directory anywhere in a key
   * @param predict matches a key of a file under the directory, capturing what stays
   * @param replacement how the captured groups form the predicted key ({@code $1$2})
   */
  public record Rule(String name, Pattern temporary, Pattern predict, String replacement) {}

  private final List<Rule> rules;
  private final Pattern plainFiles;

  /**
   * @param rules the rules in force
   * @param plainFiles names of files written as ordinary objects even under temporary directories,
   *     because the engine reads them back before the commit
   */
  public ShimRules(List<Rule> rules, Pattern plainFiles) {
    this.rules = List.copyOf(rules);
    this.plainFiles = plainFiles;
  }

  public List<Rule> rules() {
    return rules;
  }

  /** Whether the key lies under a temporary directory of any rule (or is one). */
  public boolean isTemporary(String key) {
    for (Rule rule : rules) {
      if (rule.temporary().matcher(key).find()) {
        return true;
      }
    }
    return false;
  }

  /**
   * The outermost temporary directory in a key: the one the job deletes as a whole when it cleans
   * up ({@code out/_temporary}, {@code out/.spark-staging-x}, {@code t/.hive-staging_x}); empty
   * when the key lies under none.
   */
  public Optional<String> temporaryRoot(String key) {
    int end = -1;
    for (Rule rule : rules) {
      Matcher matcher = rule.temporary().matcher(key);
      if (matcher.find()) {
        int found = matcher.end();
        // The directory ends where its name does, whether or not the pattern took the slash.
        if (found > 0 && key.charAt(found - 1) == '/') {
          found--;
        } else {
          int slash = key.indexOf('/', found);
          found = slash < 0 ? key.length() : slash;
        }
        end = end < 0 ? found : Math.min(end, found);
      }
    }
    return end <= 0 ? Optional.empty() : Optional.of(key.substring(0, end));
  }

  /** Whether the key names a file the engine reads back before the commit: written plainly. */
  public boolean isPlainFile(String key) {
    return plainFiles.matcher(key.substring(key.lastIndexOf('/') + 1)).matches();
  }

  /**
   * The final key of a file created at this key, when the key lies under a temporary directory, the
   * rules can tell where the file will end up and the file is not one to write plainly.
   */
  public Optional<String> predictFinalKey(String key) {
    if (isPlainFile(key)) {
      return Optional.empty();
    }
    String current = key;
    boolean predicted = false;
    for (int round = 0; round < MAX_ROUNDS; round++) {
      Optional<String> next = applyOnce(current);
      if (next.isEmpty()) {
        break;
      }
      current = next.get();
      predicted = true;
    }
    if (!predicted || isTemporary(current) || current.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(current);
  }

  /**
   * The directory the files of a temporary directory go to: where the rules put a file directly in
   * it. Rules remove temporary directories from a key and keep the file's name, so one name stands
   * for all; the name used is one no rule or plain-file pattern singles out, and a prediction that
   * does not keep it (a rule that renames files) predicts no directory.
   */
  public Optional<String> predictFinalDirectory(String directoryKey) {
    String name = "/" + ANY_FILE_NAME;
    if (plainFiles.matcher(ANY_FILE_NAME).matches()) {
      return Optional.empty();
    }
    return predictFinalKey(directoryKey + name)
        .filter(key -> key.endsWith(name) && key.length() > name.length())
        .map(key -> key.substring(0, key.length() - name.length()));
  }

  /** A file name that stands for any in {@link #predictFinalDirectory}: an ordinary data file's. */
  private static final String ANY_FILE_NAME = "part-00000";

  private Optional<String> applyOnce(String key) {
    for (Rule rule : rules) {
      Matcher matcher = rule.predict().matcher(key);
      if (matcher.matches()) {
        return Optional.of(matcher.replaceFirst(rule.replacement()));
      }
    }
    return Optional.empty();
  }

  /** The task attempt named in a key, for the record, or "unknown". */
  public static String attemptOf(String key) {
    Matcher matcher = ATTEMPT.matcher(key);
    return matcher.find() ? matcher.group(1) : "unknown";
  }

  private static final Pattern ATTEMPT = Pattern.compile("(?:^|/)(attempt_[^/]+)/");

  /** Names of the rules, for messages. */
  public List<String> names() {
    List<String> names = new ArrayList<>();
    rules.forEach(rule -> names.add(rule.name()));
    return names;
  }
}
