package dev.writeonce.shim;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import org.apache.hadoop.conf.Configuration;

/**
 * The rename shim's settings, parsed once when the filesystem starts. Every error names the key and
 * the value at fault.
 *
 * @param enabled whether this bucket's temporary files become pending uploads
 * @param rules the rules that recognise temporary directories and predict final keys
 * @param onMiss what a rename the rules did not predict does
 * @param insertWaitMillis how long a statement waits for another one's insert lock on a directory
 * @param listingWindowMillis how long a listing of a destination directory answers the existence
 *     checks of its children ({@link #LISTING_WINDOW})
 */
public record ShimConfig(
    boolean enabled,
    ShimRules rules,
    OnMiss onMiss,
    long insertWaitMillis,
    long listingWindowMillis,
    boolean queueCompletions) {

  /** What a rename does when the rules predicted another name for the file (a miss). */
  public enum OnMiss {
    /**
     * Complete the upload under its predicted key and copy it to the rename's destination: the
     * rename succeeds for one COPY, and the data is visible under the predicted key during the
     * copy.
     */
    COPY,
    /** Refuse the rename; nothing is completed and the upload stays pending and abortable. */
    FAIL;

    /** The value as written in configuration. */
    public String value() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  public static final String PREFIX = "writeonce.shim.";

  /** Turns the shim off without changing {@code fs.s3a.impl}: every path is plain S3A. */
  public static final String ENABLED = PREFIX + "enabled";

  public static final boolean ENABLED_DEFAULT = true;

  /** Buckets the shim serves, comma-separated; empty means every bucket. */
  public static final String BUCKETS = PREFIX + "buckets";

  /** The rules in force, by name, comma-separated: built-in names or custom rules. */
  public static final String RULES = PREFIX + "rules";

  public static final String RULES_DEFAULT = "file-output-committer,spark-staging,hive";

  /** A custom rule's pattern finding its temporary directory in a key. */
  public static final String RULE_TEMPORARY = PREFIX + "rule.<name>.temporary";

  /** A custom rule's pattern matching a whole key under its directory, capturing what stays. */
  public static final String RULE_PREDICT = PREFIX + "rule.<name>.predict";

  /** A custom rule's replacement forming the final key from the captured groups. */
  public static final String RULE_FINAL = PREFIX + "rule.<name>.final";

  /** File names written as ordinary objects even under temporary directories (a pattern). */
  public static final String PLAIN_FILES = PREFIX + "plain-files";

  public static final String PLAIN_FILES_DEFAULT = "_SUCCESS|_blob_manifest_file";

  /** What a rename the rules did not predict does: {@code copy} or {@code fail}. */
  public static final String ON_MISS = PREFIX + "on-miss";

  public static final String ON_MISS_DEFAULT = "copy";

  /**
   * How long a Hive statement that adds files to a table waits while another statement holds the
   * table's insert lock ({@link dev.writeonce.core.lease.LeaseLock}).
   */
  public static final String INSERT_WAIT = PREFIX + "insert-wait";

  public static final String INSERT_WAIT_DEFAULT = "2h";

  /**
   * How long one LIST of a destination directory, sent when a temporary directory that moves there
   * is listed (FileOutputCommitter's merge, Hive's move), answers the existence checks of its
   * children that follow, instead of a HEAD and a LIST each. A file another process creates there
   * within this time after the listing is overwritten by a rename onto its name rather than
   * refusing it; 0 turns the listing off.
   */
  public static final String LISTING_WINDOW = PREFIX + "listing-window";

  public static final String LISTING_WINDOW_DEFAULT = "1s";

  /**
   * Whether FileOutputCommitter v1's job commit queues the completions of the files it merges,
   * instead of one round trip per file ({@link CompletionQueue}): the merge's last rename waits for
   * them and fails with the first that failed, whatever the job's own settings.
   */
  public static final String QUEUE_COMPLETIONS = PREFIX + "queue-completions";

  public static final boolean QUEUE_COMPLETIONS_DEFAULT = true;

  public static ShimConfig from(Configuration conf, String bucket) {
    boolean enabled = conf.getBoolean(ENABLED, ENABLED_DEFAULT);
    Set<String> buckets = new LinkedHashSet<>(conf.getTrimmedStringCollection(BUCKETS));
    if (!buckets.isEmpty() && !buckets.contains(bucket)) {
      enabled = false;
    }
    List<ShimRules.Rule> rules = new ArrayList<>();
    for (String name : conf.getTrimmedStrings(RULES, RULES_DEFAULT.split(","))) {
      rules.add(rule(conf, name));
    }
    return new ShimConfig(
        enabled,
        new ShimRules(
            rules, pattern(PLAIN_FILES, conf.getTrimmed(PLAIN_FILES, PLAIN_FILES_DEFAULT))),
        onMiss(conf.getTrimmed(ON_MISS, ON_MISS_DEFAULT)),
        duration(conf, INSERT_WAIT, INSERT_WAIT_DEFAULT, "30m, 2h or 1d", "do not wait"),
        duration(conf, LISTING_WINDOW, LISTING_WINDOW_DEFAULT, "500ms, 1s or 5s", "no listing"),
        conf.getBoolean(QUEUE_COMPLETIONS, QUEUE_COMPLETIONS_DEFAULT));
  }

  private static long duration(
      Configuration conf, String key, String defaultValue, String examples, String zeroMeans) {
    long millis;
    try {
      millis = conf.getTimeDuration(key, defaultValue, TimeUnit.MILLISECONDS);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          key + " = '" + conf.get(key) + "' is not a duration (for example " + examples + ")", e);
    }
    if (millis < 0) {
      throw new IllegalArgumentException(
          key + " = '" + conf.get(key) + "' is negative; 0 means " + zeroMeans);
    }
    return millis;
  }

  private static OnMiss onMiss(String value) {
    for (OnMiss choice : OnMiss.values()) {
      if (choice.value().equalsIgnoreCase(value)) {
        return choice;
      }
    }
    throw new IllegalArgumentException(
        ON_MISS
            + " = '"
            + value
            + "' is not one of copy (complete under the predicted name, then copy) or fail"
            + " (refuse renames the rules did not predict)");
  }

  private static ShimRules.Rule rule(Configuration conf, String name) {
    for (ShimRules.Rule rule : ShimRules.BUILT_IN) {
      if (rule.name().equals(name)) {
        return rule;
      }
    }
    String temporary = RULE_TEMPORARY.replace("<name>", name);
    String predict = RULE_PREDICT.replace("<name>", name);
    String replacement = RULE_FINAL.replace("<name>", name);
    String[] keys = {temporary, predict, replacement};
    for (String key : keys) {
      if (conf.getTrimmed(key, "").isEmpty()) {
        throw new IllegalArgumentException(
            RULES
                + " names rule '"
                + name
                + "', which is not built in ("
                + String.join(", ", builtInNames())
                + ") and has no "
                + key
                + ": set "
                + String.join(", ", keys)
                + " or remove it from "
                + RULES);
      }
    }
    return new ShimRules.Rule(
        name,
        pattern(temporary, conf.getTrimmed(temporary)),
        pattern(predict, conf.getTrimmed(predict)),
        conf.getTrimmed(replacement));
  }

  private static List<String> builtInNames() {
    return ShimRules.BUILT_IN.stream().map(ShimRules.Rule::name).toList();
  }

  private static Pattern pattern(String key, String value) {
    try {
      return Pattern.compile(value);
    } catch (PatternSyntaxException e) {
      throw new IllegalArgumentException(
          key + " = '" + value + "' is not a valid regular expression: " + e.getDescription(), e);
    }
  }
}
