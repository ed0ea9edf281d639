package dev.writeonce.shim;

import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.StoreGateway;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Whole listings of the trees FileOutputCommitter v1's job commit merges. Its merge lists a
 * committed task's directory ({@code _temporary/<n>/task_<id>/}), then each subdirectory in turn,
 * one LIST and one round trip each: a partitioned task of 50 partitions costs 51. Here the first
 * listing of such a tree lists all of it, in as many LISTs as its keys fill pages, and the listings
 * of its subdirectories and the renames of them are answered from that.
 *
 * <p>A committed task's tree belongs to its job: no task writes into it once committed, and only
 * the job commit or abort changes it, through this instance, which keeps the listing in step with
 * what it renames or deletes there; a task commit renaming into the job attempt's directory drops
 * its listing. Attempts' own directories ({@code _temporary/<n>/_temporary/}) are never answered
 * from it: tasks may still be writing there. A tree is listed again when no call used it for the
 * listing window (another job commit, or a task attempt of another process that committed since),
 * or once a minute old while a merge keeps using it; it is never kept when the window is 0. A task
 * attempt that commits into the job attempt's directory while the job commit merges it races that
 * commit with or without the listing: FileOutputCommitter replaces the task's directory.
 */
final class CommittedTaskTrees {

  /**
   * A job attempt's directory ({@code _temporary/<n>}), itself or a committed task's tree in it:
   * FileOutputCommitter's job commit lists the former for the committed tasks, then merges each.
   */
  private static final Pattern IN_JOB_ATTEMPT =
      Pattern.compile("^((?:.*/)?_temporary/\\d+)(?:/task_[^/]+(?:/.*)?)?$");

  /** Objects under a job attempt's directory listed at most; a larger one is listed per task. */
  static final int MAX_KEYS = 100_000;

  /** How long a tree in use is kept at most before it is listed again. */
  static final long MAX_AGE_NANOS = TimeUnit.MINUTES.toNanos(1);

  /**
   * One tree's listing: every object under the task's directory, by key; when a call last used it.
   */
  private record Tree(
      NavigableMap<String, ObjectInfo> objects, long listedAtNanos, AtomicLong usedAtNanos) {}

  /** A directory's children as a listing gives them: files, and subdirectories by key. */
  record Children(List<ObjectInfo> files, List<String> directories) {}

  private final StoreGateway gateway;
  private final long windowNanos;
  private final LongSupplier nanoClock;
  private final Map<String, Tree> trees = new ConcurrentHashMap<>();

  CommittedTaskTrees(StoreGateway gateway, long windowMillis, LongSupplier nanoClock) {
    this.gateway = gateway;
    this.windowNanos = TimeUnit.MILLISECONDS.toNanos(windowMillis);
    this.nanoClock = nanoClock;
  }

  /**
   * The children of a directory inside a committed task's tree, from the tree's listing (one LIST
   * per page of the tree when it is not listed yet); empty when the key is in no such tree or the
   * listing holds nothing under it, so that the caller asks the store, with its own semantics.
   */
  Optional<Children> children(String directoryKey) throws StoreException {
    Optional<NavigableMap<String, ObjectInfo>> under = under(directoryKey);
    if (under.isEmpty()) {
      return Optional.empty();
    }
    String prefix = directoryKey + "/";
    List<ObjectInfo> files = new ArrayList<>();
    TreeSet<String> directories = new TreeSet<>();
    for (ObjectInfo object : under.get().values()) {
      String rest = object.key().substring(prefix.length());
      int slash = rest.indexOf('/');
      if (slash >= 0) {
        directories.add(prefix + rest.substring(0, slash));
      } else if (!rest.isEmpty()) {
        files.add(object);
      }
    }
    return Optional.of(new Children(files, List.copyOf(directories)));
  }

  /** Every object under a directory of a committed task's tree, as {@link #children} finds them. */
  Optional<List<ObjectInfo>> objectsUnder(String directoryKey) throws StoreException {
    return under(directoryKey).map(objects -> List.copyOf(objects.values()));
  }

  private Optional<NavigableMap<String, ObjectInfo>> under(String directoryKey)
      throws StoreException {
    if (windowNanos <= 0) {
      return Optional.empty();
    }
    Matcher matcher = IN_JOB_ATTEMPT.matcher(directoryKey);
    if (!matcher.matches()) {
      return Optional.empty();
    }
    String root = matcher.group(1);
    long now = nanoClock.getAsLong();
    Tree tree = trees.get(root);
    if (tree == null
        || now - tree.usedAtNanos().get() >= windowNanos
        || now - tree.listedAtNanos() >= MAX_AGE_NANOS) {
      trees.values().removeIf(old -> now - old.usedAtNanos().get() >= windowNanos);
      Optional<List<ObjectInfo>> listed = gateway.listObjectsUpTo(root + "/", MAX_KEYS);
      if (listed.isEmpty()) {
        return Optional.empty();
      }
      NavigableMap<String, ObjectInfo> objects = new ConcurrentSkipListMap<>();
      for (ObjectInfo object : listed.get()) {
        objects.put(object.key(), object);
      }
      tree = new Tree(objects, now, new AtomicLong(now));
      trees.put(root, tree);
    }
    tree.usedAtNanos().set(now);
    String prefix = directoryKey + "/";
    NavigableMap<String, ObjectInfo> under =
        tree.objects().subMap(prefix, true, prefix + Character.MAX_VALUE, false);
    return under.isEmpty() ? Optional.empty() : Optional.of(under);
  }

  /** This instance removed the key, and what lay under it: a rename away, or a delete. */
  void removed(String key) {
    for (Tree tree : trees.values()) {
      tree.objects().remove(key);
      tree.objects().subMap(key + "/", true, key + "/" + Character.MAX_VALUE, false).clear();
    }
  }

  /** This instance wrote at the key: a tree it lies in is no longer known whole. */
  void wrote(String key) {
    Matcher matcher = IN_JOB_ATTEMPT.matcher(key);
    if (matcher.matches()) {
      trees.remove(matcher.group(1));
    }
  }
}
