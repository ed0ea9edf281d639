package dev.writeonce.shim;

import static dev.writeonce.shim.Keys.isAtOrUnder;
import static dev.writeonce.shim.Keys.isUnder;
import static dev.writeonce.shim.Keys.parentOf;
import static dev.writeonce.shim.Keys.prefixOf;

import dev.writeonce.core.store.ObjectInfo;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * The complete listings of directories the cache keeps (never a truncated one): each answers for
 * its children, and for everything below a child it shows absent. A flat listing of a tree gives
 * every directory in it a listing. Also the destinations found too large to list whole, so that
 * they are not paged again for a while.
 *
 * <p><b>Held listings.</b> A job commit's merge round checks each destination of its files just
 * before it moves it there; at 10,000 files a round outlasts the window many times over, and each
 * partition it enters again would be listed again. A listing of a destination sent during a round
 * is held for it ({@link #hold}): past the window, until the round ends (at most {@link
 * #MAX_HOLD_NANOS} after it started), it answers for the round's own names in that directory, its
 * direct children the round moves there, and for nothing else. Every change this JVM makes is
 * applied to it as to any listing; what it may miss is another process writing one of those very
 * names meanwhile, which the merge overwrites whatever it is told (FileOutputCommitter deletes a
 * file it finds there).
 */
@GuardedByCache
final class Listings {

  /** Whether a listed name is a prefix of other keys (a directory). */
  enum Prefix {
    NONE,
    PRESENT,
    UNKNOWN
  }

  /**
   * A listed child: its object, null when the name is only a prefix; whether it is a prefix; and
   * whether an operation of this JVM left it unknown.
   */
  record Child(ObjectInfo object, Prefix prefix, boolean unsure) {
    static final Child UNSURE = new Child(null, Prefix.UNKNOWN, true);

    Known answer() {
      if (unsure) {
        return Known.UNKNOWN;
      }
      if (object != null) {
        return Known.file(object, null);
      }
      return switch (prefix) {
        case PRESENT -> Known.DIRECTORY;
        case UNKNOWN -> Known.UNKNOWN;
        case NONE -> Known.ABSENT;
      };
    }

    /** What the child says of a key below it, for which no listing of its own answers. */
    Known answerBelow() {
      return unsure || prefix != Prefix.NONE ? Known.UNKNOWN : Known.ABSENT;
    }
  }

  /** A complete listing of one directory, sent at {@code sentNanos}. */
  static final class Listing {
    final long sentNanos;
    final TreeMap<String, Child> children = new TreeMap<>();

    /**
     * The rounds holding this listing, each with the names it moves into the directory; null when
     * none. A listing that replaces it holds for none: a round holds what it was sent, not the
     * directory.
     */
    Map<MergeRound, Set<String>> heldBy;

    Listing(long sentNanos) {
      this.sentNanos = sentNanos;
    }
  }

  private final Window window;

  /** Sorted, so that the listings at or under a key are one range, not a scan of all. */
  private final TreeMap<String, Listing> listings = new TreeMap<>();

  private final Map<String, Long> tooLarge = new HashMap<>();
  private int listedChildren;

  /** A round holds listings at most this long after it started. */
  static final long MAX_HOLD_NANOS = TimeUnit.MINUTES.toNanos(10);

  Listings(Window window) {
    this.window = window;
  }

  // ---- made from the store's answers ---------------------------------------------------------

  /** A delimited listing's entries (children, directories ending in "/") as a listing. */
  static Listing ofChildren(String prefix, List<String> entries, long sentNanos) {
    Listing listing = new Listing(sentNanos);
    for (String entry : entries) {
      String name = entry.substring(prefix.length());
      boolean directory = name.endsWith("/");
      name = directory ? name.substring(0, name.length() - 1) : name;
      if (name.isEmpty()) {
        continue; // the directory's own marker
      }
      Child old = listing.children.get(name);
      listing.children.put(
          name,
          directory
              ? new Child(old == null ? null : old.object(), Prefix.PRESENT, false)
              : new Child(
                  Change.placeholder(entry), old == null ? Prefix.NONE : old.prefix(), false));
    }
    return listing;
  }

  /**
   * A flat listing of a tree as listings of every directory in it; see {@link KnownKeys#listTree}
   * for {@code skipped} and {@code alsoEmpty}.
   */
  static Map<String, Listing> ofTree(
      String directoryKey,
      List<ObjectInfo> objects,
      String skipped,
      List<String> alsoEmpty,
      long sentNanos) {
    String prefix = prefixOf(directoryKey);
    Map<String, Listing> tree = new HashMap<>();
    tree.put(directoryKey, new Listing(sentNanos));
    if (skipped != null) {
      tree.get(directoryKey).children.put(skipped, Child.UNSURE);
    }
    for (ObjectInfo object : objects) {
      addObject(tree, directoryKey, object, sentNanos, true);
    }
    String skippedKey = skipped == null ? null : prefix + skipped;
    for (String directory : alsoEmpty) {
      if (isUnder(directory, directoryKey)
          && (skippedKey == null || !isAtOrUnder(directory, skippedKey))) {
        tree.putIfAbsent(directory, new Listing(sentNanos));
      }
    }
    return tree;
  }

  /**
   * Puts an object under {@code directoryKey} into the listings of the directories on its way,
   * {@code listEach} making a listing of each directory passed.
   */
  private static void addObject(
      Map<String, Listing> tree,
      String directoryKey,
      ObjectInfo object,
      long sentNanos,
      boolean listEach) {
    String directory = directoryKey;
    String[] names = object.key().substring(prefixOf(directoryKey).length()).split("/", -1);
    for (int i = 0; i < names.length && !names[i].isEmpty(); i++) {
      Listing listing = tree.computeIfAbsent(directory, d -> new Listing(sentNanos));
      Child old = listing.children.get(names[i]);
      if (i < names.length - 1) {
        listing.children.put(
            names[i], new Child(old == null ? null : old.object(), Prefix.PRESENT, false));
        directory = prefixOf(directory) + names[i];
        if (listEach) {
          tree.computeIfAbsent(directory, d -> new Listing(sentNanos));
        }
      } else {
        listing.children.put(
            names[i], new Child(object, old == null ? Prefix.NONE : old.prefix(), false));
      }
    }
  }

  // ---- answers --------------------------------------------------------------------------------

  /** The listing of a directory while it answers; an expired one is forgotten. */
  Listing fresh(String directoryKey, long now) {
    Listing listing = listings.get(directoryKey);
    if (listing == null) {
      return null;
    }
    if (window.expired(listing.sentNanos, now)) {
      if (!held(directoryKey, now)) {
        forget(directoryKey);
      }
      return null;
    }
    return listing;
  }

  /**
   * What the nearest listing above a key says of it; null when none answers. A listing held past
   * the window answers for its direct children that a round holding it moves there only.
   */
  Known answer(String key, long now) {
    String parent = parentOf(key);
    for (String directory = parent; directory != null; directory = parentOf(directory)) {
      Listing listing = fresh(directory, now);
      if (listing == null && directory.equals(parent)) {
        listing = heldFor(directory, Keys.nameOf(key), now);
      }
      if (listing != null) {
        String rest = key.substring(prefixOf(directory).length());
        int slash = rest.indexOf('/');
        Child child = listing.children.get(slash < 0 ? rest : rest.substring(0, slash));
        if (child == null) {
          return Known.ABSENT;
        }
        return slash < 0 ? child.answer() : child.answerBelow();
      }
    }
    return null;
  }

  /** A directory's children from its listing; empty when a child is unknown. */
  static Optional<KnownKeys.Children> childrenOf(String directoryKey, Listing listing) {
    List<ObjectInfo> files = new ArrayList<>();
    List<String> directories = new ArrayList<>();
    String prefix = prefixOf(directoryKey);
    for (Map.Entry<String, Child> entry : listing.children.entrySet()) {
      Child child = entry.getValue();
      if (child.unsure() || child.prefix() == Prefix.UNKNOWN) {
        return Optional.empty();
      }
      if (child.object() != null) {
        if (child.object().size() < 0) {
          return Optional.empty(); // written here, details unknown: the store's listing has them
        }
        files.add(child.object());
      }
      if (child.prefix() == Prefix.PRESENT) {
        directories.add(prefix + entry.getKey());
      }
    }
    return Optional.of(new KnownKeys.Children(files, directories));
  }

  /** Whether a listing of the directory younger than the given age is kept. */
  boolean listedWithin(String directoryKey, long ageNanos, long now) {
    Listing listing = listings.get(directoryKey);
    return listing != null && now - listing.sentNanos < ageNanos;
  }

  // ---- changes ----------------------------------------------------------------------------------

  /** Applies a change to the listings of the directories above its key, at it and below it. */
  void apply(Change change) {
    if (change instanceof Change.Tree tree) {
      applyTree(tree);
      return;
    }
    String key = change.key();
    for (String directory = parentOf(key); directory != null; directory = parentOf(directory)) {
      Listing listing = listings.get(directory);
      if (listing != null) {
        applyTo(directory, listing, change);
      }
    }
    if (change instanceof Change.Removed || change instanceof Change.Unsure) {
      atOrUnder(key).forEach(this::forget);
    }
  }

  /**
   * A directory renamed into place: each object as a file written, and, where a fresh listing of
   * the parent showed the key absent before, listings of the key and every directory under it made
   * from the objects, as fresh as that listing.
   */
  private void applyTree(Change.Tree tree) {
    String key = tree.key();
    String parent = parentOf(key);
    Listing above = parent == null ? null : fresh(parent, window.now());
    boolean wasAbsent =
        above != null && !above.children.containsKey(Keys.nameOf(key)) && !key.isEmpty();
    for (ObjectInfo object : tree.objects()) {
      apply(new Change.Wrote(object.key(), object, null));
    }
    if (!wasAbsent) {
      if (tree.objects().isEmpty()) {
        apply(new Change.MadeDirectory(key));
      }
      return;
    }
    apply(new Change.MadeDirectory(key));
    Map<String, Listing> made = new HashMap<>();
    made.put(key, new Listing(above.sentNanos));
    for (ObjectInfo object : tree.objects()) {
      addObject(made, key, object, above.sentNanos, false);
    }
    for (Map.Entry<String, Listing> entry : made.entrySet()) {
      forget(entry.getKey());
      listings.put(entry.getKey(), entry.getValue());
      listedChildren += entry.getValue().children.size();
    }
  }

  /**
   * Applies a change to one directory's listing, kept or about to be; false when the listing cannot
   * answer after it (an unknown outcome at or above the directory).
   */
  boolean applyTo(String directory, Listing listing, Change change) {
    if (change instanceof Change.Tree tree) {
      for (ObjectInfo object : tree.objects()) {
        applyTo(directory, listing, new Change.Wrote(object.key(), object, null));
      }
      return applyTo(directory, listing, new Change.MadeDirectory(tree.key()));
    }
    boolean kept = listings.get(directory) == listing;
    String key = change.key();
    if (isAtOrUnder(directory, key)) {
      if (change instanceof Change.Removed) {
        if (kept) {
          listedChildren -= listing.children.size();
        }
        listing.children.clear();
      }
      return !(change instanceof Change.Unsure);
    }
    if (!isUnder(key, directory)) {
      return true;
    }
    String rest = key.substring(prefixOf(directory).length());
    int slash = rest.indexOf('/');
    String name = slash < 0 ? rest : rest.substring(0, slash);
    boolean below = slash >= 0;
    Child old = listing.children.get(name);
    Child updated;
    if (change instanceof Change.Wrote wrote) {
      ObjectInfo object = wrote.object();
      if (!below && object.size() < 0 && old != null && old.object() != null) {
        object = old.object(); // reported again without its object: the one listed stands
      }
      updated =
          below
              ? new Child(old == null ? null : old.object(), Prefix.PRESENT, false)
              : new Child(object, old == null ? Prefix.NONE : old.prefix(), false);
    } else if (change instanceof Change.MadeDirectory) {
      updated = new Child(old == null ? null : old.object(), Prefix.PRESENT, false);
    } else if (change instanceof Change.Removed) {
      if (!below || old == null) {
        updated = null;
      } else {
        // Whatever was removed may have been all the directory held.
        updated = new Child(old.object(), Prefix.UNKNOWN, old.unsure());
      }
    } else if (!below) {
      updated = Child.UNSURE;
    } else if (old != null && old.unsure()) {
      updated = old;
    } else {
      updated = new Child(old == null ? null : old.object(), Prefix.UNKNOWN, false);
    }
    if (updated == null) {
      if (listing.children.remove(name) != null && kept) {
        listedChildren--;
      }
    } else if (listing.children.put(name, updated) == null && kept) {
      listedChildren++;
    }
    return true;
  }

  /** Keeps a listing, replacing an older one only. */
  void keep(String directoryKey, Listing listing) {
    Listing kept = listings.get(directoryKey);
    if (kept == null || kept.sentNanos - listing.sentNanos <= 0) {
      if (kept != null) {
        listedChildren -= kept.children.size();
      }
      listings.put(directoryKey, listing);
      listedChildren += listing.children.size();
    }
  }

  void forget(String directoryKey) {
    Listing gone = listings.remove(directoryKey);
    if (gone != null) {
      listedChildren -= gone.children.size();
    }
  }

  // ---- bounds -----------------------------------------------------------------------------------

  /**
   * The directories with a listing at or under a key: the key itself and the range of keys that
   * start with it and a slash ('0' is the character after '/').
   */
  private List<String> atOrUnder(String key) {
    if (key.isEmpty()) {
      return new ArrayList<>(listings.keySet());
    }
    List<String> found = new ArrayList<>();
    if (listings.containsKey(key)) {
      found.add(key);
    }
    found.addAll(listings.subMap(key + "/", true, key + "0", false).keySet());
    return found;
  }

  /** Listed children kept now. */
  int children() {
    return listedChildren;
  }

  /** Forgets every expired listing. */
  void expire(long now) {
    for (String directory : new ArrayList<>(listings.keySet())) {
      fresh(directory, now);
    }
  }

  void clear() {
    listings.clear();
    listedChildren = 0;
  }

  // ---- held for merge rounds -------------------------------------------------------------------

  /**
   * A round will move these names into the directory: its listing, when one sent since the round
   * started is kept, answers for them past the window while the round lasts.
   */
  void hold(MergeRound round, String directoryKey, Collection<String> names) {
    Listing listing = listings.get(directoryKey);
    if (listing == null || !holdLasts(round, listing, window.now())) {
      return;
    }
    if (listing.heldBy == null) {
      listing.heldBy = new HashMap<>();
    }
    listing.heldBy.computeIfAbsent(round, r -> new HashSet<>()).addAll(names);
  }

  /** Whether the round holds the directory's listing now. */
  boolean heldBy(MergeRound round, String directoryKey, long now) {
    Listing listing = listings.get(directoryKey);
    return listing != null
        && listing.heldBy != null
        && listing.heldBy.containsKey(round)
        && holdLasts(round, listing, now);
  }

  /** The directory's listing, when a round holding it moves the name there; null otherwise. */
  private Listing heldFor(String directoryKey, String name, long now) {
    Listing listing = listings.get(directoryKey);
    if (listing == null || listing.heldBy == null) {
      return null;
    }
    for (Map.Entry<MergeRound, Set<String>> entry : listing.heldBy.entrySet()) {
      if (entry.getValue().contains(name) && holdLasts(entry.getKey(), listing, now)) {
        return listing;
      }
    }
    return null;
  }

  /** Whether any round still holds the directory's listing; rounds whose hold ended are dropped. */
  private boolean held(String directoryKey, long now) {
    Listing listing = listings.get(directoryKey);
    if (listing == null || listing.heldBy == null) {
      return false;
    }
    listing.heldBy.keySet().removeIf(round -> !holdLasts(round, listing, now));
    if (listing.heldBy.isEmpty()) {
      listing.heldBy = null;
      return false;
    }
    return true;
  }

  /**
   * Whether a round's hold on a listing lasts: the cache keeps listings at all (a window of 0 keeps
   * none, held or not), the round is under way and younger than {@link #MAX_HOLD_NANOS} (a round
   * that never ends, a job commit that failed without its cleanup, holds nothing past it), and the
   * listing was sent during it.
   */
  private boolean holdLasts(MergeRound round, Listing listing, long now) {
    return window.caching()
        && !round.ended()
        && listing.sentNanos - round.startedNanos() >= 0
        && now - round.startedNanos() < MAX_HOLD_NANOS;
  }

  // ---- destinations too large -------------------------------------------------------------------

  /** Destinations found too large kept at most; past it all are forgotten (listed again). */
  static final int MAX_TOO_LARGE = 1_000;

  /** A destination held more keys than a flat listing takes. */
  void foundTooLarge(String directoryKey, long now) {
    if (tooLarge.size() >= MAX_TOO_LARGE && !tooLarge.containsKey(directoryKey)) {
      tooLarge.clear();
    }
    tooLarge.put(directoryKey, now);
  }

  /**
   * Whether the destination was found too large less than {@code forNanos} ago. Each instance asks
   * with its own length, so an answer that expired for one stays for the others.
   */
  boolean foundTooLarge(String directoryKey, long forNanos, long now) {
    Long at = tooLarge.get(directoryKey);
    return at != null && now - at < forNanos;
  }

  /** Destinations found too large kept now; for tests. */
  int tooLargeKept() {
    return tooLarge.size();
  }
}
