package dev.writeonce.shim;

import dev.writeonce.core.engine.Tasks;
import dev.writeonce.core.engine.WorkerPool;
import dev.writeonce.core.errors.StoreException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * What the shim knows of destinations outside temporary directories without asking the store: the
 * destination listings ({@link DestinationListings}), and the last destination this thread found
 * absent.
 *
 * <p>Commit code checks a destination just before it renames a file there (FileOutputCommitter's
 * merge, Hive's move), so the rename need not check it again. Any other call of the thread on the
 * file system forgets it, and it is good for {@link #ABSENT_FRESH_NANOS} only.
 */
final class DestinationChecks {

  /**
   * A destination holding at most this many objects is listed whole, in as many LISTs as they fill
   * pages, for a merge into its subdirectories; a larger one directory by directory.
   */
  static final int MERGE_TREE_KEYS = 5_000;

  /** How long an absent destination stays known to the rename that follows. */
  static final long ABSENT_FRESH_NANOS = TimeUnit.SECONDS.toNanos(1);

  /** What a listing says of a key. */
  enum Answer {
    ABSENT,
    DIRECTORY,
    UNKNOWN
  }

  private record Absent(String key, long atNanos) {}

  private final ShimConfig shim;
  private final DestinationListings listings;
  private final ThreadLocal<Absent> lastAbsent = new ThreadLocal<>();
  private final WorkerPool pool;

  DestinationChecks(ShimConfig shim, DestinationListings listings, WorkerPool pool) {
    this.shim = shim;
    this.listings = listings;
    this.pool = pool;
  }

  /** What the listings say of a key outside temporary directories; remembers an absent one. */
  Answer answer(String key) throws StoreException {
    if (!shim.enabled()) {
      return Answer.UNKNOWN;
    }
    if (listings.knownAbsent(key)) {
      foundAbsent(key);
      return Answer.ABSENT;
    }
    return listings.knownDirectory(key) ? Answer.DIRECTORY : Answer.UNKNOWN;
  }

  /** S3A found the key absent in this thread just now. */
  void foundAbsent(String key) {
    if (shim.enabled()) {
      lastAbsent.set(new Absent(key, System.nanoTime()));
    }
  }

  /** Forgets the absent destination: this thread did something else since. */
  void forget() {
    lastAbsent.remove();
  }

  /** Whether this key was found absent just before, in this thread, with nothing done since. */
  boolean takeAbsent(String key) {
    Absent absent = lastAbsent.get();
    lastAbsent.remove();
    return absent != null
        && absent.key().equals(key)
        && System.nanoTime() - absent.atNanos() < ABSENT_FRESH_NANOS;
  }

  /**
   * Forgets what the listings know of a key this instance removes, and of the directories above.
   */
  void removed(String key) {
    if (shim.enabled()) {
      listings.removed(key);
    }
  }

  /** Remembers a key this instance writes outside temporary directories, for the listings. */
  void wrote(String key) {
    if (shim.enabled() && !shim.rules().isTemporary(key)) {
      listings.wrote(key);
    }
  }

  /**
   * Commit code lists a temporary directory before it moves its children into place, each after an
   * existence check of its destination: one LIST of that directory answers them. A committed task's
   * directory lists its subdirectories too ({@code subdirectories}, from {@link
   * CommittedTaskTrees}): the merge goes into each in turn, so the destination directories that
   * exist are listed now, in parallel, instead of one round trip after another.
   */
  void temporaryListed(String temporaryKey, List<String> subdirectories) throws IOException {
    if (!listings.enabled()) {
      return;
    }
    Optional<String> destination = destinationDirectoryOf(temporaryKey);
    if (destination.isEmpty()) {
      return;
    }
    List<String> mergeInto = new ArrayList<>();
    for (String subdirectory : subdirectories) {
      destinationDirectoryOf(subdirectory).ifPresent(mergeInto::add);
    }
    if (!subdirectories.isEmpty()
        && listings.listTreeForMerge(
            destination.get(),
            MERGE_TREE_KEYS,
            mergeInto,
            temporaryNameUnder(destination.get(), temporaryKey))) {
      return;
    }
    listings.listUnlessFresh(destination.get());
    List<String> existing = new ArrayList<>();
    for (String below : mergeInto) {
      // One the destination's listing shows absent is moved whole: nothing checks inside it.
      if (!listings.absent(below)) {
        existing.add(below);
      }
    }
    Tasks.runAll(pool, "listing destination directories", existing, listings::listForMerge);
  }

  /** The name of the directory directly under the destination that holds the temporary key. */
  private static String temporaryNameUnder(String destinationKey, String temporaryKey) {
    String prefix = destinationKey.isEmpty() ? "" : destinationKey + "/";
    if (!temporaryKey.startsWith(prefix) || temporaryKey.length() == prefix.length()) {
      return null;
    }
    String rest = temporaryKey.substring(prefix.length());
    int slash = rest.indexOf('/');
    return slash < 0 ? rest : rest.substring(0, slash);
  }

  /**
   * The directory the rules move a temporary directory's files into, when they keep the files'
   * names (FileOutputCommitter's and Spark's layouts); empty otherwise.
   */
  private Optional<String> destinationDirectoryOf(String temporaryKey) {
    String probe = "/part-00000";
    Optional<String> finalKey = shim.rules().predictFinalKey(temporaryKey + probe);
    return finalKey
        .filter(key -> key.endsWith(probe) && key.length() > probe.length())
        .map(key -> key.substring(0, key.length() - probe.length()));
  }
}
