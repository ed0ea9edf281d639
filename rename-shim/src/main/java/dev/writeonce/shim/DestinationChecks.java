package dev.writeonce.shim;

import dev.writeonce.core.errors.StoreException;
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

  DestinationChecks(ShimConfig shim, DestinationListings listings) {
    this.shim = shim;
    this.listings = listings;
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
   * existence check of its destination: one LIST of that directory answers them.
   */
  void temporaryListed(String temporaryKey) throws StoreException {
    if (listings.enabled()) {
      Optional<String> destination = destinationDirectoryOf(temporaryKey);
      if (destination.isPresent()) {
        listings.listUnlessFresh(destination.get());
      }
    }
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
