package dev.writeonce.shim;

import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.StoreGateway;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Answers the existence checks of a destination directory's children from one listing. Commit code
 * that moves a temporary directory into place lists it, then checks each child's destination before
 * it renames the child there (FileOutputCommitter's merge, Hive's move): S3A sends a HEAD and a
 * LIST for each check. When the shim lists a temporary directory whose files the rules move into
 * one destination directory, it lists that directory too (one LIST, one page), and for {@link
 * ShimConfig#LISTING_WINDOW} a child that listing does not show is known absent without a request.
 *
 * <p>While commit code keeps checking children of a directory, a listing past the window is read
 * again (one LIST), so a merge of any length costs one LIST per window, not two requests per file.
 *
 * <p>What this instance writes outside temporary directories is remembered (at least ten minutes),
 * so that its own renames, creates and directories are never reported absent. Only a file that
 * another process creates in the directory after the listing can be: a rename onto it then
 * overwrites it instead of being refused. That is the window a check and a rename always leave
 * open, widened to at most the listing window plus the second for which a rename trusts the check
 * before it.
 */
final class DestinationListings {

  /** A directory of more children than one LIST page returns is not kept. */
  static final int MAX_CHILDREN = 1000;

  /** How many written keys are remembered before the oldest are forgotten. */
  private static final int MAX_REMEMBERED = 10_000;

  /** Written keys older than this may be forgotten; a file kept open longer is not covered. */
  private static final long FORGET_AFTER_NANOS = java.util.concurrent.TimeUnit.MINUTES.toNanos(10);

  /** One listing, and when a check last used it: a merge in progress lists again once it is old. */
  private record Listing(
      Set<String> names, Set<String> directories, long listedAtNanos, AtomicLong usedAtNanos) {}

  private final StoreGateway gateway;
  private final long windowNanos;
  private final LongSupplier nanoClock;
  private final ShimStatistics counters;
  private final ConcurrentNavigableMap<String, Listing> byDirectory = new ConcurrentSkipListMap<>();

  /**
   * A directory listed whole, with everything under it: when, and how; or found to hold more than
   * {@code maxKeys} objects ({@code tooLarge}), which an output a merge is filling stays.
   */
  private record Tree(long listedAtNanos, int maxKeys, String temporaryName, boolean tooLarge) {}

  /**
   * A directory listed whole within this many windows is taken as the output of a merge still
   * going: a directory under it whose listing ran out gets the whole tree listed again.
   */
  private static final int TREE_IN_USE_WINDOWS = 10;

  /** Directories listed whole, by prefix. */
  private final Map<String, Tree> trees = new ConcurrentHashMap<>();

  /** Keys this instance wrote (created, renamed onto, made a directory), by when. */
  private final Map<String, Long> written = new ConcurrentHashMap<>();

  /** Every ancestor directory of those keys, by when: a write under it makes it exist. */
  private final Map<String, Long> writtenUnder = new ConcurrentHashMap<>();

  /** Keys this instance removed, and directories above them: listings sent before show them. */
  private final Map<String, Long> removed = new ConcurrentHashMap<>();

  private final Map<String, Long> removedUnder = new ConcurrentHashMap<>();

  DestinationListings(
      StoreGateway gateway, long windowMillis, LongSupplier nanoClock, ShimStatistics counters) {
    this.gateway = gateway;
    this.windowNanos = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(windowMillis);
    this.nanoClock = nanoClock;
    this.counters = counters;
  }

  boolean enabled() {
    return windowNanos > 0;
  }

  /**
   * Lists a destination directory and everything under it in one flat listing, when it holds at
   * most {@code maxKeys} objects, so that every directory under it has a listing: what a merge into
   * many directories lists instead of each of them. The directories the merge goes into ({@code
   * mergeInto}) that the listing shows nothing under get an empty listing: a flat listing shows
   * every object under it. Nothing is listed when that was done within the last half window and
   * each of those directories has a listing that answers for it: none does for a directory this
   * instance renamed onto after its listing was sent (a task's merge that made it), so the tree is
   * listed again once rather than each such directory in turn. The temporary directory the merge
   * reads from ({@code temporaryName}, directly under the destination, or null) is left out of the
   * listing: it holds a record for every file of the job, and no check asks about it.
   *
   * @return false when it holds more (then nothing is kept)
   */
  boolean listTreeForMerge(
      String directoryKey, int maxKeys, List<String> mergeInto, String temporaryName)
      throws StoreException {
    if (!enabled()) {
      return false;
    }
    String prefix = directoryKey.isEmpty() ? "" : directoryKey + "/";
    long listedAt = nanoClock.getAsLong();
    Tree before = trees.get(prefix);
    if (before != null
        && before.tooLarge()
        && listedAt - before.listedAtNanos() < TREE_IN_USE_WINDOWS * windowNanos) {
      return false; // pages up to the limit each time would be wasted
    }
    if (before != null
        && !before.tooLarge()
        && listedAt - before.listedAtNanos() < windowNanos / 2
        && mergeInto.stream().allMatch(directory -> answersFor(directory, listedAt))) {
      return true;
    }
    Optional<List<ObjectInfo>> objects =
        temporaryName == null
            ? gateway.listObjectsUpTo(prefix, maxKeys)
            : gateway.listObjectsUpTo(prefix, maxKeys, prefix + temporaryName + "/");
    if (objects.isEmpty()) {
      forgetUnused(listedAt);
      trees.put(prefix, new Tree(listedAt, maxKeys, temporaryName, true));
      return false;
    }
    Map<String, Listing> listed = new HashMap<>();
    listed.put(prefix, emptyListing(listedAt));
    if (temporaryName != null) {
      // Not listed, so shown as present, and not as a directory: nothing is answered for it.
      listed.get(prefix).names().add(temporaryName);
    }
    for (ObjectInfo object : objects.get()) {
      String directory = prefix;
      String[] names = object.key().substring(prefix.length()).split("/", -1);
      for (int i = 0; i < names.length && !names[i].isEmpty(); i++) {
        Listing listing = listed.computeIfAbsent(directory, d -> emptyListing(listedAt));
        listing.names().add(names[i]);
        if (i < names.length - 1) {
          listing.directories().add(names[i]);
          directory = directory + names[i] + "/";
          listed.computeIfAbsent(directory, d -> emptyListing(listedAt));
        }
      }
    }
    String skipped = temporaryName == null ? null : prefix + temporaryName + "/";
    for (String directory : mergeInto) {
      String below = directory + "/";
      // Only what the listing covered: nothing is known of the skipped directory's insides.
      if (below.startsWith(prefix) && (skipped == null || !below.startsWith(skipped))) {
        listed.putIfAbsent(below, emptyListing(listedAt));
      }
    }
    forgetUnused(listedAt);
    // A listing sent later, by a concurrent merge, is kept over this one.
    listed.forEach(
        (directory, listing) ->
            byDirectory.merge(
                directory,
                listing,
                (kept, fresh) -> fresh.listedAtNanos() - kept.listedAtNanos() >= 0 ? fresh : kept));
    trees.merge(
        prefix,
        new Tree(listedAt, maxKeys, temporaryName, false),
        (kept, fresh) -> fresh.listedAtNanos() - kept.listedAtNanos() >= 0 ? fresh : kept);
    counters.destinationListings.incrementAndGet();
    return true;
  }

  /**
   * Whether a listing of the directory, younger than half the window, answers for its children: one
   * sent after this instance last renamed onto the directory or above it.
   */
  private boolean answersFor(String directoryKey, long now) {
    Listing listing = byDirectory.get(directoryKey + "/");
    return listing != null
        && now - listing.listedAtNanos() < windowNanos / 2
        && !since(written, directoryKey, listing.listedAtNanos(), true);
  }

  /**
   * Whether the map (of what this instance wrote or removed) holds the key, or when asked one above
   * it, at or after the given time.
   */
  private static boolean since(Map<String, Long> at, String key, long sinceNanos, boolean above) {
    for (String k = key; k != null; k = above ? parentOf(k) : null) {
      Long when = at.get(k);
      if (when != null && when - sinceNanos >= 0) {
        return true;
      }
    }
    return false;
  }

  private static Listing emptyListing(long listedAt) {
    return new Listing(
        ConcurrentHashMap.newKeySet(),
        ConcurrentHashMap.newKeySet(),
        listedAt,
        new AtomicLong(listedAt));
  }

  /**
   * Lists a destination directory unless a listing of it is still within the window: the merges of
   * a job's tasks into one directory share its listing.
   */
  void listUnlessFresh(String directoryKey) throws StoreException {
    listUnlessYoungerThan(directoryKey, windowNanos);
  }

  /**
   * Lists a destination directory unless a listing of it is younger than half the window: what a
   * merge about to check many children lists beforehand, so that no listing runs out during it.
   */
  void listForMerge(String directoryKey) throws StoreException {
    listUnlessYoungerThan(directoryKey, windowNanos / 2);
  }

  private void listUnlessYoungerThan(String directoryKey, long ageNanos) throws StoreException {
    if (!enabled()) {
      return;
    }
    Listing listing = byDirectory.get(directoryKey.isEmpty() ? "" : directoryKey + "/");
    long now = nanoClock.getAsLong();
    if (listing != null && now - listing.listedAtNanos() < ageNanos) {
      listing.usedAtNanos().set(now);
      return;
    }
    // Under an output a merge listed whole, one flat listing renews every directory of it.
    for (String above = parentOf(directoryKey); !directoryKey.isEmpty(); above = parentOf(above)) {
      String treePrefix = above == null ? "" : above + "/";
      Tree tree = trees.get(treePrefix);
      if (tree != null
          && !tree.tooLarge()
          && now - tree.listedAtNanos() < TREE_IN_USE_WINDOWS * windowNanos) {
        if (listTreeForMerge(
            above == null ? "" : above,
            tree.maxKeys(),
            List.of(directoryKey),
            tree.temporaryName())) {
          return;
        }
        break;
      }
      if (above == null) {
        break;
      }
    }
    list(directoryKey);
  }

  /**
   * Lists a destination directory, in one LIST of at most one page, for the existence checks of its
   * children that follow. A directory of more children is not kept: those checks go to the store.
   */
  void list(String directoryKey) throws StoreException {
    if (!enabled()) {
      return;
    }
    String prefix = directoryKey.isEmpty() ? "" : directoryKey + "/";
    // The window runs from before the request: the listing shows at least what existed then.
    long listedAt = nanoClock.getAsLong();
    List<String> children = gateway.listChildren(prefix, MAX_CHILDREN);
    if (children.size() >= MAX_CHILDREN) {
      byDirectory.remove(prefix);
      return;
    }
    Listing listing = emptyListing(listedAt);
    for (String child : children) {
      String name = child.substring(prefix.length());
      boolean directory = name.endsWith("/");
      name = directory ? name.substring(0, name.length() - 1) : name;
      if (!name.isEmpty()) {
        listing.names().add(name);
        if (directory) {
          listing.directories().add(name);
        }
      }
    }
    forgetUnused(listedAt);
    byDirectory.put(prefix, listing);
    counters.destinationListings.incrementAndGet();
  }

  /**
   * A long-lived instance (a Hive server) lists many directories and outputs: keep only the
   * listings checks still use, and the whole-output listings a merge may still renew.
   */
  private void forgetUnused(long now) {
    byDirectory
        .values()
        .removeIf(
            old ->
                now - old.listedAtNanos() >= windowNanos
                    && now - old.usedAtNanos().get() >= windowNanos);
    trees.values().removeIf(old -> now - old.listedAtNanos() >= TREE_IN_USE_WINDOWS * windowNanos);
  }

  /** How many listings are kept, for tests. */
  int listingsKept() {
    return byDirectory.size();
  }

  /**
   * Whether a fresh listing of the key's directory shows no child of its name, this instance has
   * written nothing at or under the key, and nothing above it since the listing was sent. A listing
   * past the window that a check used within the window (a merge still going) is read again: one
   * LIST.
   */
  boolean knownAbsent(String key) throws StoreException {
    if (!absent(key)) {
      return false;
    }
    counters.destinationChecksFromListing.incrementAndGet();
    return true;
  }

  /** {@link #knownAbsent} without counting it as a check answered. */
  boolean absent(String key) throws StoreException {
    if (!enabled() || key.isEmpty()) {
      return false;
    }
    int slash = key.lastIndexOf('/');
    Listing listing = freshListingAbove(key);
    if (listing == null) {
      return false;
    }
    if (listing.names().contains(key.substring(slash + 1))
        || written.containsKey(key)
        || writtenUnder.containsKey(key)) {
      return false;
    }
    // A directory renamed or copied onto an ancestor brought children this listing, sent before
    // that rename ended, may not show; one that ended before it is in the listing.
    String parent = parentOf(key);
    return parent == null || !since(written, parent, listing.listedAtNanos(), true);
  }

  /**
   * Whether a fresh listing of the key's directory shows it as a directory (a prefix of other keys)
   * that this instance has removed nothing from since: S3A's status of such a directory is built
   * from a listing too, so one is built here without a request.
   */
  boolean knownDirectory(String key) throws StoreException {
    if (!enabled() || key.isEmpty()) {
      return false;
    }
    Listing listing = freshListingAbove(key);
    if (listing == null
        || !listing.directories().contains(key.substring(key.lastIndexOf('/') + 1))
        || since(removed, key, listing.listedAtNanos(), true)
        || since(removedUnder, key, listing.listedAtNanos(), false)) {
      return false;
    }
    counters.destinationDirectoriesFromListing.incrementAndGet();
    return true;
  }

  /**
   * The listing of the key's directory while it is within the window; one past the window that a
   * check used within the window is read again first (one LIST). Null when there is none.
   */
  private Listing freshListingAbove(String key) throws StoreException {
    int slash = key.lastIndexOf('/');
    String prefix = slash < 0 ? "" : key.substring(0, slash + 1);
    Listing listing = byDirectory.get(prefix);
    long now = nanoClock.getAsLong();
    if (listing == null) {
      return null;
    }
    if (now - listing.listedAtNanos() >= windowNanos) {
      byDirectory.remove(prefix, listing);
      if (now - listing.usedAtNanos().get() >= windowNanos) {
        return null;
      }
      list(prefix.isEmpty() ? "" : prefix.substring(0, prefix.length() - 1));
      listing = byDirectory.get(prefix);
      if (listing == null) {
        return null;
      }
    }
    listing.usedAtNanos().set(now);
    return listing;
  }

  /**
   * This instance removes the key (a delete, or a rename away from it): a directory above it may
   * vanish with it, so no listing answers for those directories any more, and listings of the key
   * itself or below it are dropped. A listing sent before this call and kept after it, which may
   * still show them, is not taken as showing directories there: callers call this again when the
   * removal ends.
   */
  void removed(String key) {
    if (!enabled()) {
      return;
    }
    remember(removed, removedUnder, key);
    if (key.isEmpty()) {
      byDirectory.clear();
      return;
    }
    // '0' follows '/': the range holds the key's own listing and every one below it.
    byDirectory.subMap(key + "/", key + "0").clear();
    for (String below = key; below != null; below = parentOf(below)) {
      String above = parentOf(below);
      Listing listing = byDirectory.get(above == null ? "" : above + "/");
      if (listing != null) {
        listing.directories().remove(below.substring(below.lastIndexOf('/') + 1));
      }
    }
  }

  /**
   * This instance writes at the key: it, and every directory above it, exist from now on. Called
   * when the write starts and again when it ends: a listing sent in between may not show it.
   */
  void wrote(String key) {
    if (enabled()) {
      remember(written, writtenUnder, key);
    }
  }

  private void remember(Map<String, Long> keys, Map<String, Long> under, String key) {
    long now = nanoClock.getAsLong();
    if (keys.size() + under.size() > MAX_REMEMBERED) {
      // Long after the window every listing in use was sent after these changes, and shows them.
      keys.values().removeIf(at -> now - at > FORGET_AFTER_NANOS);
      under.values().removeIf(at -> now - at > FORGET_AFTER_NANOS);
    }
    keys.put(key, now);
    for (String above = parentOf(key); above != null; above = parentOf(above)) {
      under.put(above, now);
    }
  }

  private static String parentOf(String key) {
    int slash = key.lastIndexOf('/');
    return slash <= 0 ? null : key.substring(0, slash);
  }
}
