package dev.writeonce.shim;

import static dev.writeonce.shim.ShimNames.isAtOrUnder;
import static dev.writeonce.shim.ShimNames.isUnder;
import static dev.writeonce.shim.ShimNames.parentOf;
import static dev.writeonce.shim.ShimNames.prefixOf;

import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.model.PendingFile;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.StoreGateway;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * What the shim knows of one bucket's keys, for every shim instance of the bucket in this JVM: the
 * one cache. Commit code asks the file system the same questions over and over (does the
 * destination exist, what does this directory hold); the answers come from three kinds of evidence.
 *
 * <ul>
 *   <li><b>Listings</b>: complete listings of directories (never a truncated one), each answering
 *       for its children, and for everything below a child it shows absent. A flat listing of a
 *       tree gives every directory in it a listing.
 *   <li><b>Facts</b>: what this JVM did (wrote a record or a file, made a directory, removed a key)
 *       or saw (a record it read, a key the store reported absent).
 *   <li><b>Changes in flight</b>: keys an operation of this JVM is changing right now ({@link
 *       #begin}), answered as unknown until it ends, and destinations whose completion is queued
 *       ({@link #promise}), answered as files, with directories above them.
 * </ul>
 *
 * <p>The rules, in one place:
 *
 * <ol>
 *   <li>What the store told (listings, reported absences) and this JVM's removals answer for one
 *       time-to-live, the listing window, counted from when the request was sent; then they are
 *       forgotten. That bounds what another writer can do unseen. What this JVM wrote is kept until
 *       it is removed or the bound below forgets it, and never answers "absent".
 *   <li>Every change this JVM makes is applied at once to every listing and fact it concerns, and
 *       replayed, in order, on every listing that was on the wire while it happened, before that
 *       listing is kept: a listing never shows less than this JVM has done, whenever it was sent. A
 *       change whose outcome is unknown (an operation that failed) makes the key unknown.
 *   <li>At most {@link #MAX_ENTRIES} listed children and facts are kept; past that the expired go
 *       first, then every listing, then the oldest facts. Forgetting only ever makes an answer
 *       unknown, never wrong.
 * </ol>
 *
 * <p>Requests: only the methods named {@code list...} send any, through the gateway they are given,
 * and never while holding this object's lock, which guards all state. No method waits for anything
 * else while holding it.
 */
final class KnownKeys {

  /** Listed children and facts kept at most. */
  static final int MAX_ENTRIES = 200_000;

  /** Whether a listed name is a prefix of other keys (a directory). */
  private enum Prefix {
    NONE,
    PRESENT,
    UNKNOWN
  }

  /**
   * A listed child: its object, null when the name is only a prefix; whether it is a prefix; and
   * whether an operation of this JVM left it unknown.
   */
  private record Child(ObjectInfo object, Prefix prefix, boolean unsure) {
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
  private static final class Listing {
    final long sentNanos;
    final TreeMap<String, Child> children = new TreeMap<>();

    Listing(long sentNanos) {
      this.sentNanos = sentNanos;
    }
  }

  /** A fact about one key: what it is, and since when. */
  private record Fact(Known known, long atNanos, boolean expires) {}

  /** A change this JVM made. */
  private sealed interface Change permits Wrote, MadeDirectory, Removed, Unsure, Tree {
    String key();
  }

  /** A file now exists at the key: its object (size -1 when not known) and record, if one. */
  private record Wrote(String key, ObjectInfo object, PendingFile record) implements Change {}

  /** A directory now exists at the key. */
  private record MadeDirectory(String key) implements Change {}

  /** Nothing exists at or under the key any more. */
  private record Removed(String key) implements Change {}

  /** An operation at the key ended without a known outcome: the key and all under it unknown. */
  private record Unsure(String key) implements Change {}

  /**
   * A directory renamed into place at the key: these objects (size -1 where not known) are what the
   * rename put under it. Where a listing showed the key absent just before, they are all it holds,
   * and its listings are made from them.
   */
  private record Tree(String key, List<ObjectInfo> objects) implements Change {}

  private record Logged(long seq, Change change) {}

  /**
   * A request on the wire whose answer will be kept ({@link #onTheWire}): the changes made while it
   * travels are replayed on its answer.
   */
  final class Ticket implements AutoCloseable {
    final long seq;
    final long sentNanos;
    private boolean closed;

    private Ticket(long seq, long sentNanos) {
      this.seq = seq;
      this.sentNanos = sentNanos;
    }

    @Override
    public void close() {
      synchronized (KnownKeys.this) {
        if (!closed) {
          closed = true;
          onTheWire.merge(seq, -1, (a, b) -> a + b == 0 ? null : a + b);
          trimLog();
        }
      }
    }
  }

  private long ttlNanos;
  private final LongSupplier nanoClock;

  private final Map<String, Listing> listings = new HashMap<>();

  /**
   * Task attempt directories this JVM wrote records into, true while every object under them is a
   * record it wrote (with the object holding it) and none was forgotten: their contents are then
   * known without a listing ({@link #children}). Anything else found in such a directory (another
   * run's leftovers under a reused attempt id) is not the attempt's output, and the job's cleanup
   * removes it.
   */
  private final TreeMap<String, Boolean> ownedAttempts = new TreeMap<>();

  /** Owned attempt directories kept at most; past it they are forgotten (listed instead). */
  private static final int MAX_OWNED_ATTEMPTS = 10_000;

  /**
   * A pending file a job commit's merge moved within the temporary tree in this JVM's view only
   * (into Spark's staging directory of a dynamic partition overwrite): its record stays at {@code
   * storedKey}, in the store, until the file is renamed into place or deleted, when the record
   * goes. Never forgotten while it lasts: forgetting it would lose the file.
   */
  private record Virtual(String storedKey, PendingFile record, ObjectInfo stored) {}

  /** Files moved in this JVM's view only, by their key. */
  private final TreeMap<String, Virtual> virtuals = new TreeMap<>();

  /** The stored key of each such file's record, to its file's key. */
  private final Map<String, String> virtualByStored = new HashMap<>();

  /** Files moved in view only at most; past it a merge moves records in the store. */
  static final int MAX_VIRTUAL = 100_000;

  private final TreeMap<String, Fact> facts = new TreeMap<>();
  private final ArrayDeque<String> factOrder = new ArrayDeque<>();
  private final TreeMap<String, Integer> unsettled = new TreeMap<>();
  private final TreeMap<String, Integer> promised = new TreeMap<>();
  private final ArrayDeque<Logged> log = new ArrayDeque<>();
  private final TreeMap<Long, Integer> onTheWire = new TreeMap<>();
  private long seq;
  private long logFloor;
  private int listedChildren;

  /**
   * @param ttlMillis how long what the store told answers (the listing window); 0 keeps no listing
   *     and no absence
   * @param nanoClock a monotonic clock
   */
  KnownKeys(long ttlMillis, LongSupplier nanoClock) {
    this.ttlNanos = TimeUnit.MILLISECONDS.toNanos(ttlMillis);
    this.nanoClock = nanoClock;
  }

  /** Sets the time-to-live: the shortest listing window of the bucket's open instances. */
  synchronized void window(long ttlMillis) {
    ttlNanos = TimeUnit.MILLISECONDS.toNanos(ttlMillis);
  }

  /** Whether listings and absences are kept at all (a listing window above 0). */
  synchronized boolean caching() {
    return ttlNanos > 0;
  }

  // ---- answers ------------------------------------------------------------------------------

  /** What is known of a key, without a request. */
  Known known(String key) {
    return known(key, List.of());
  }

  /**
   * What is known of a key, for an operation that is changing the keys {@code own}: its own changes
   * in progress do not make its answers unknown.
   */
  synchronized Known known(String key, List<String> own) {
    if (virtualByStored.containsKey(key)) {
      return Known.ABSENT; // the record of a file moved away in this JVM's view
    }
    if (isUnsettled(key, own)) {
      return Known.UNKNOWN;
    }
    if (promised.containsKey(key)) {
      return Known.file(null, null);
    }
    if (promisedUnder(key)) {
      return Known.DIRECTORY;
    }
    long now = nanoClock.getAsLong();
    Known listed = fromListings(key, now);
    Fact fact = fact(key, now);
    // A listing above that cannot tell (a child it saw change) leaves the answer to the facts.
    if (listed != null && listed != Known.UNKNOWN) {
      if (listed.isFile() && fact != null && fact.known().record() != null) {
        ObjectInfo object = listed.object();
        PendingFile record = fact.known().record();
        Known remembered = fact.known();
        boolean same =
            object.etag().isEmpty()
                || remembered.object() == null
                || object.etag().equals(remembered.object().etag());
        return same ? Known.file(object, record) : listed;
      }
      return listed;
    }
    if (fact != null) {
      return fact.known();
    }
    if (positiveFactUnder(key)) {
      return Known.DIRECTORY;
    }
    return absentAbove(key, now) ? Known.ABSENT : Known.UNKNOWN;
  }

  /** The record this JVM wrote or read at a key, if it holds one and has not seen it go. */
  synchronized Optional<PendingFile> record(String key) {
    Fact fact = facts.get(key);
    return fact == null ? Optional.empty() : Optional.ofNullable(fact.known().record());
  }

  /** The record at a key, if this JVM knows it and the object still has the given ETag. */
  synchronized Optional<PendingFile> record(String key, String etag) {
    Fact fact = facts.get(key);
    if (fact == null || fact.known().record() == null || fact.known().object() == null) {
      return Optional.empty();
    }
    return etag.equals(fact.known().object().etag())
        ? Optional.of(fact.known().record())
        : Optional.empty();
  }

  /** Whether a merge may move one more file in view only. */
  synchronized boolean canMoveVirtually() {
    return virtuals.size() < MAX_VIRTUAL;
  }

  /**
   * Moves a pending file to a new key in this JVM's view only: its record stays where it is stored.
   * Returns the object the file shows at its new key (the record's, renamed).
   */
  synchronized ObjectInfo moveVirtually(
      String sourceKey, String targetKey, PendingFile record, ObjectInfo storedObject) {
    Virtual before = virtuals.remove(sourceKey);
    String stored = before == null ? sourceKey : before.storedKey();
    ObjectInfo storedInfo = before == null ? storedObject : before.stored();
    virtuals.put(targetKey, new Virtual(stored, record, storedInfo));
    virtualByStored.put(stored, targetKey);
    // The record's twin from the task commit names the same upload: kept alike.
    ShimNames.attemptTwinOf(stored, record.taskAttempt())
        .ifPresent(twin -> virtualByStored.put(twin, targetKey));
    ObjectInfo shown =
        new ObjectInfo(
            targetKey, storedInfo.size(), storedInfo.etag(), storedInfo.lastModifiedMillis());
    long now = nanoClock.getAsLong();
    change(new Removed(sourceKey), now);
    change(new Wrote(targetKey, shown, record), now);
    bound(now);
    return shown;
  }

  /** The object holding the record this JVM knows at a key, whatever changes at the key now. */
  synchronized Optional<ObjectInfo> recordObject(String key) {
    Fact fact = facts.get(key);
    if (fact == null
        || fact.known().record() == null
        || fact.known().object() == null
        || fact.known().object().size() < 0) {
      return Optional.empty();
    }
    return Optional.of(fact.known().object());
  }

  /** Where the record of a file moved in view only is stored; empty for any other key. */
  synchronized Optional<String> storedKeyOf(String key) {
    Virtual virtual = virtuals.get(key);
    return virtual == null ? Optional.empty() : Optional.of(virtual.storedKey());
  }

  /**
   * Whether a stored object holds the record of a file moved in view only: a listing shows the file
   * at its new key instead, and a delete of the old key's directory leaves the record alone.
   */
  synchronized boolean holdsRecordMovedInView(String storedKey) {
    return virtualByStored.containsKey(storedKey);
  }

  /** Whether any file is moved in view only now. */
  synchronized boolean anyMovedInView() {
    return !virtuals.isEmpty();
  }

  /**
   * What a directory holds as this JVM sees it, from the store's listing of it: without the records
   * of files moved in this JVM's view only, and with the files moved into it.
   */
  synchronized List<ObjectInfo> asSeen(String directoryKey, List<ObjectInfo> stored) {
    List<ObjectInfo> objects = new ArrayList<>();
    for (ObjectInfo object : stored) {
      if (!holdsRecordMovedInView(object.key())) {
        objects.add(object);
      }
    }
    objects.addAll(movedInViewUnder(directoryKey));
    return objects;
  }

  /** The files moved in view only under a directory, with the objects they show. */
  synchronized List<ObjectInfo> movedInViewUnder(String directoryKey) {
    List<ObjectInfo> files = new ArrayList<>();
    String prefix = prefixOf(directoryKey);
    for (Map.Entry<String, Virtual> entry :
        virtuals.subMap(prefix, true, prefix + Character.MAX_VALUE, false).entrySet()) {
      ObjectInfo stored = entry.getValue().stored();
      files.add(
          new ObjectInfo(
              entry.getKey(), stored.size(), stored.etag(), stored.lastModifiedMillis()));
    }
    return files;
  }

  /** A directory's children as a listing gives them: files, and subdirectories by key. */
  record Children(List<ObjectInfo> files, List<String> directories) {}

  /** The children of a directory, from a listing that answers for it now. */
  Optional<Children> children(String directoryKey) {
    return children(directoryKey, List.of());
  }

  /** {@link #children(String)} for an operation changing the keys {@code own}. */
  synchronized Optional<Children> children(String directoryKey, List<String> own) {
    Listing listing = freshListing(directoryKey, nanoClock.getAsLong());
    if (isUnsettled(directoryKey, own) || promisedUnder(directoryKey)) {
      return Optional.empty();
    }
    if (listing == null) {
      return ownedChildren(directoryKey);
    }
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
    return Optional.of(new Children(files, directories));
  }

  /** The children of a directory in an owned task attempt directory, from the facts. */
  private Optional<Children> ownedChildren(String directoryKey) {
    Optional<String> attempt = ShimNames.taskAttemptOf(directoryKey);
    if (attempt.isEmpty() || !Boolean.TRUE.equals(ownedAttempts.get(attempt.get()))) {
      return Optional.empty();
    }
    String prefix = prefixOf(directoryKey);
    String next = unsettled.ceilingKey(prefix);
    if (next != null && next.startsWith(prefix)) {
      return Optional.empty(); // a file still being written
    }
    List<ObjectInfo> files = new ArrayList<>();
    java.util.TreeSet<String> directories = new java.util.TreeSet<>();
    for (Map.Entry<String, Fact> entry :
        facts.subMap(prefix, true, prefix + Character.MAX_VALUE, false).entrySet()) {
      Known fact = entry.getValue().known();
      if (fact.isAbsent()) {
        continue;
      }
      String rest = entry.getKey().substring(prefix.length());
      int slash = rest.indexOf('/');
      if (slash >= 0) {
        directories.add(prefix + rest.substring(0, slash));
      } else if (fact.isDirectory()) {
        directories.add(entry.getKey());
      } else if (fact.record() != null && fact.object() != null && fact.object().size() >= 0) {
        files.add(fact.object());
      } else {
        return Optional.empty();
      }
    }
    return Optional.of(new Children(files, List.copyOf(directories)));
  }

  /**
   * Every object under a directory, from listings that answer for it and each directory below;
   * empty when any of them is missing or unsure.
   */
  synchronized Optional<List<ObjectInfo>> objectsUnder(String directoryKey, List<String> own) {
    List<ObjectInfo> objects = new ArrayList<>();
    return collectUnder(directoryKey, own, objects) ? Optional.of(objects) : Optional.empty();
  }

  private boolean collectUnder(String directoryKey, List<String> own, List<ObjectInfo> into) {
    Optional<Children> children = children(directoryKey, own);
    if (children.isEmpty()) {
      return false;
    }
    into.addAll(children.get().files());
    for (String directory : children.get().directories()) {
      if (!collectUnder(directory, own, into)) {
        return false;
      }
    }
    return true;
  }

  /** Whether a listing of the directory younger than the given age is kept. */
  synchronized boolean listedWithin(String directoryKey, long ageNanos) {
    Listing listing = listings.get(directoryKey);
    return listing != null && nanoClock.getAsLong() - listing.sentNanos < ageNanos;
  }

  private Known fromListings(String key, long now) {
    for (String directory = parentOf(key); directory != null; directory = parentOf(directory)) {
      Listing listing = freshListing(directory, now);
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

  private Listing freshListing(String directoryKey, long now) {
    Listing listing = listings.get(directoryKey);
    if (listing == null) {
      return null;
    }
    if (now - listing.sentNanos >= ttlNanos) {
      forgetListing(directoryKey);
      return null;
    }
    return listing;
  }

  private Fact fact(String key, long now) {
    Fact fact = facts.get(key);
    if (fact != null && fact.expires() && now - fact.atNanos() >= ttlNanos) {
      facts.remove(key);
      return null;
    }
    return fact;
  }

  private boolean positiveFactUnder(String key) {
    String prefix = prefixOf(key);
    for (Map.Entry<String, Fact> entry : facts.tailMap(prefix, false).entrySet()) {
      if (!entry.getKey().startsWith(prefix)) {
        return false;
      }
      if (entry.getValue().known().exists()) {
        return true;
      }
    }
    return false;
  }

  private boolean absentAbove(String key, long now) {
    for (String above = parentOf(key); above != null; above = parentOf(above)) {
      Fact fact = fact(above, now);
      if (fact != null) {
        return fact.known().isAbsent();
      }
    }
    return false;
  }

  private boolean isUnsettled(String key) {
    return isUnsettled(key, List.of());
  }

  /** Whether an operation other than the one changing {@code own} is changing the key or above. */
  private boolean isUnsettled(String key, List<String> own) {
    if (unsettled.isEmpty()) {
      return false;
    }
    for (String k = key; k != null; k = parentOf(k)) {
      Integer changing = unsettled.get(k);
      if (changing != null && changing > (own.contains(k) ? 1 : 0)) {
        return true;
      }
    }
    return false;
  }

  private boolean promisedUnder(String key) {
    String prefix = prefixOf(key);
    String next = promised.ceilingKey(prefix);
    return next != null && next.startsWith(prefix) && !next.equals(key);
  }

  // ---- changes ------------------------------------------------------------------------------

  /** An operation of this JVM starts changing these keys: until it ends they are unknown. */
  synchronized void begin(List<String> keys) {
    for (String key : keys) {
      unsettled.merge(key, 1, Integer::sum);
    }
  }

  /** The operation ended: its outcome is applied, then the keys settle. */
  synchronized void end(List<String> keys, Outcome outcome) {
    long now = nanoClock.getAsLong();
    if (outcome.known) {
      outcome.changes.forEach(change -> change(change, now));
    } else {
      keys.forEach(key -> change(new Unsure(key), now));
    }
    for (String key : keys) {
      unsettled.merge(key, -1, (a, b) -> a + b == 0 ? null : a + b);
    }
    bound(now);
  }

  /**
   * What an operation did, as it reports it before it ends; an operation that ends without
   * reporting (it failed) leaves its keys unknown.
   */
  static final class Outcome {
    private final List<Change> changes = new ArrayList<>();
    private boolean known;
    private boolean handedOver;

    /** The operation completed; what it reported is all it changed. */
    void succeeded() {
      known = true;
    }

    boolean known() {
      return known;
    }

    /**
     * The operation's keys stay changing after it returns, until whoever took them over settles
     * them (a file's writer, at close).
     */
    void handOver() {
      handedOver = true;
    }

    boolean handedOver() {
      return handedOver;
    }

    /** A file exists at the key now (its object when known, else null). */
    void wrote(String key, ObjectInfo object) {
      changes.add(new Wrote(key, object == null ? placeholder(key) : object, null));
    }

    /** A directory exists at the key now. */
    void madeDirectory(String key) {
      changes.add(new MadeDirectory(key));
    }

    /** Nothing exists at or under the key now. */
    void removed(String key) {
      changes.add(new Removed(key));
    }

    /** What lies under the key is not known. */
    void unsure(String key) {
      changes.add(new Unsure(key));
    }

    /**
     * A directory was renamed into place at the key, putting these objects under it (size -1 where
     * not known).
     */
    void tree(String key, List<ObjectInfo> objects) {
      changes.add(new Tree(key, List.copyOf(objects)));
    }
  }

  /** A pending-file record this JVM wrote: a change, with the record remembered. */
  synchronized void recordWritten(String key, PendingFile record, ObjectInfo object) {
    long now = nanoClock.getAsLong();
    change(new Wrote(key, object, record), now);
    bound(now);
  }

  /** Records this JVM deleted (their files completed or aborted). */
  synchronized void recordsDeleted(List<String> keys) {
    long now = nanoClock.getAsLong();
    keys.forEach(key -> change(new Removed(key), now));
    bound(now);
  }

  /** A record this JVM read: remembered, with the object that holds it. */
  synchronized void recordRead(String key, PendingFile record, ObjectInfo object) {
    if (!isUnsettled(key)) {
      putFact(key, new Fact(Known.file(object, record), nanoClock.getAsLong(), false));
    }
  }

  /**
   * The store reported the key absent to a request sent with the ticket: absent for the window,
   * unless this JVM changed it since.
   */
  synchronized void observedAbsent(Ticket ticket, String key) {
    if (!caching() || isUnsettled(key) || promised.containsKey(key) || changedSince(ticket, key)) {
      return;
    }
    Fact fact = facts.get(key);
    if (fact == null || fact.known().record() == null) {
      putFact(key, new Fact(Known.ABSENT, ticket.sentNanos, true));
    }
  }

  /** A destination's completion is queued: answered as a file, with directories above it. */
  synchronized void promise(String key) {
    promised.merge(key, 1, Integer::sum);
  }

  /** The queued completion went through (or, {@code landed} false, failed). */
  synchronized void settlePromise(String key, boolean landed) {
    promised.merge(key, -1, (a, b) -> a + b == 0 ? null : a + b);
    long now = nanoClock.getAsLong();
    change(landed ? new Wrote(key, placeholder(key), null) : new Unsure(key), now);
    bound(now);
  }

  private static ObjectInfo placeholder(String key) {
    return new ObjectInfo(key, -1, null, 0);
  }

  private void change(Change change, long now) {
    seq++;
    if (!onTheWire.isEmpty()) {
      log.addLast(new Logged(seq, change));
    }
    applyToListings(change);
    applyToFacts(change, now);
    noteOwnership(change);
    if (change instanceof Removed || change instanceof Unsure) {
      forgetMovedInView(change.key());
    }
  }

  /** Files moved in view only at or under a key that is removed or unknown now are gone. */
  private void forgetMovedInView(String key) {
    if (virtuals.isEmpty()) {
      return;
    }
    List<String> gone = new ArrayList<>();
    if (virtuals.containsKey(key)) {
      gone.add(key);
    }
    gone.addAll(
        virtuals.subMap(prefixOf(key), true, prefixOf(key) + Character.MAX_VALUE, false).keySet());
    for (String file : gone) {
      virtuals.remove(file);
      virtualByStored.values().removeIf(file::equals);
    }
  }

  /** Keeps {@link #ownedAttempts} true only while every object under them is a known record. */
  private void noteOwnership(Change change) {
    String key = change.key();
    Optional<String> attempt = ShimNames.taskAttemptOf(key);
    if (change instanceof Wrote wrote) {
      if (attempt.isPresent() && !attempt.get().equals(key)) {
        boolean known = wrote.record() != null && wrote.object().size() >= 0;
        ownedAttempts.merge(attempt.get(), known, Boolean::logicalAnd);
        if (ownedAttempts.size() > MAX_OWNED_ATTEMPTS) {
          ownedAttempts.clear();
        }
      }
      return;
    }
    if (change instanceof MadeDirectory) {
      return;
    }
    boolean removed = change instanceof Removed;
    if (attempt.isPresent() && !attempt.get().equals(key) && !removed) {
      ownedAttempts.computeIfPresent(attempt.get(), (dir, owned) -> false);
    }
    NavigableMap<String, Boolean> covered =
        ownedAttempts.subMap(prefixOf(key), true, prefixOf(key) + Character.MAX_VALUE, false);
    if (removed) {
      covered.clear();
      ownedAttempts.remove(key);
    } else {
      covered.replaceAll((dir, owned) -> false);
      ownedAttempts.computeIfPresent(key, (dir, owned) -> false);
    }
  }

  private void applyToListings(Change change) {
    if (change instanceof Tree tree) {
      applyTree(tree);
      return;
    }
    String key = change.key();
    // The listings of the directories above the key, then of the key and all below it.
    for (String directory = parentOf(key); directory != null; directory = parentOf(directory)) {
      Listing listing = listings.get(directory);
      if (listing != null) {
        apply(directory, listing, change);
      }
    }
    if (change instanceof Removed || change instanceof Unsure) {
      List<String> below = new ArrayList<>();
      for (String directory : listings.keySet()) {
        if (isAtOrUnder(directory, key)) {
          below.add(directory);
        }
      }
      below.forEach(this::forgetListing);
    }
  }

  /**
   * A directory renamed into place: each object as a file written, and, where a fresh listing of
   * the parent showed the key absent before, listings of the key and every directory under it made
   * from the objects, as fresh as that listing.
   */
  private void applyTree(Tree tree) {
    String key = tree.key();
    String parent = parentOf(key);
    Listing above = parent == null ? null : freshListing(parent, nanoClock.getAsLong());
    boolean wasAbsent =
        above != null && !above.children.containsKey(ShimNames.nameOf(key)) && !key.isEmpty();
    for (ObjectInfo object : tree.objects()) {
      applyToListings(new Wrote(object.key(), object, null));
    }
    if (!wasAbsent) {
      if (tree.objects().isEmpty()) {
        applyToListings(new MadeDirectory(key));
      }
      return;
    }
    applyToListings(new MadeDirectory(key));
    Map<String, Listing> made = new HashMap<>();
    made.put(key, new Listing(above.sentNanos));
    for (ObjectInfo object : tree.objects()) {
      String directory = key;
      String[] names = object.key().substring(prefixOf(key).length()).split("/", -1);
      for (int i = 0; i < names.length && !names[i].isEmpty(); i++) {
        Listing listing = made.computeIfAbsent(directory, d -> new Listing(above.sentNanos));
        Child old = listing.children.get(names[i]);
        if (i < names.length - 1) {
          listing.children.put(
              names[i], new Child(old == null ? null : old.object(), Prefix.PRESENT, false));
          directory = prefixOf(directory) + names[i];
        } else {
          listing.children.put(
              names[i], new Child(object, old == null ? Prefix.NONE : old.prefix(), false));
        }
      }
    }
    for (Map.Entry<String, Listing> entry : made.entrySet()) {
      forgetListing(entry.getKey());
      listings.put(entry.getKey(), entry.getValue());
      listedChildren += entry.getValue().children.size();
    }
  }

  /**
   * Applies a change to one directory's listing; false when the listing cannot answer after it (an
   * unknown outcome at or above the directory).
   */
  private boolean apply(String directory, Listing listing, Change change) {
    if (change instanceof Tree tree) {
      for (ObjectInfo object : tree.objects()) {
        apply(directory, listing, new Wrote(object.key(), object, null));
      }
      return apply(directory, listing, new MadeDirectory(tree.key()));
    }
    String key = change.key();
    if (isAtOrUnder(directory, key)) {
      if (change instanceof Removed) {
        listedChildren -= listing.children.size();
        listing.children.clear();
      }
      return !(change instanceof Unsure);
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
    if (change instanceof Wrote wrote) {
      ObjectInfo object = wrote.object();
      if (!below && object.size() < 0 && old != null && old.object() != null) {
        object = old.object(); // reported again without its object: the one listed stands
      }
      updated =
          below
              ? new Child(old == null ? null : old.object(), Prefix.PRESENT, false)
              : new Child(object, old == null ? Prefix.NONE : old.prefix(), false);
    } else if (change instanceof MadeDirectory) {
      updated = new Child(old == null ? null : old.object(), Prefix.PRESENT, false);
    } else if (change instanceof Removed) {
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
      if (listing.children.remove(name) != null) {
        listedChildren--;
      }
    } else if (listing.children.put(name, updated) == null) {
      listedChildren++;
    }
    return true;
  }

  private void applyToFacts(Change change, long now) {
    if (change instanceof Tree tree) {
      applyToFacts(new MadeDirectory(tree.key()), now);
      for (ObjectInfo object : tree.objects()) {
        if (!facts.containsKey(object.key())) {
          applyToFacts(new Wrote(object.key(), object, null), now);
        }
      }
      return;
    }
    String key = change.key();
    if (change instanceof Wrote || change instanceof MadeDirectory) {
      for (String above = parentOf(key); above != null; above = parentOf(above)) {
        Fact fact = facts.get(above);
        if (fact != null && !fact.known().exists()) {
          facts.remove(above);
        }
      }
    } else {
      facts.remove(key);
      facts.subMap(prefixOf(key), true, prefixOf(key) + Character.MAX_VALUE, false).clear();
    }
    if (change instanceof Wrote wrote) {
      PendingFile record = wrote.record();
      Fact before = facts.get(key);
      if (wrote.object().size() < 0 && before != null && before.known().isFile()) {
        return; // a write reported without its object: what is known of it already stands
      }
      if (record == null
          && before != null
          && before.known().record() != null
          && before.known().object() != null
          && before.known().object().etag().equals(wrote.object().etag())) {
        record = before.known().record(); // the same object, reported again without its record
      }
      putFact(key, new Fact(Known.file(wrote.object(), record), now, false));
    } else if (change instanceof MadeDirectory) {
      putFact(key, new Fact(Known.DIRECTORY, now, false));
    } else if (change instanceof Removed && ttlNanos > 0) {
      putFact(key, new Fact(Known.ABSENT, now, true));
    }
  }

  private void putFact(String key, Fact fact) {
    if (facts.put(key, fact) == null) {
      factOrder.addLast(key);
    }
  }

  private boolean changedSince(Ticket ticket, String key) {
    if (ticket.seq < logFloor) {
      return true;
    }
    for (Logged logged : log) {
      if (logged.seq() > ticket.seq
          && (isAtOrUnder(key, logged.change().key()) || isUnder(logged.change().key(), key))) {
        return true;
      }
    }
    return false;
  }

  // ---- listing ------------------------------------------------------------------------------

  /** Registers a request about to be sent whose answer will be kept. */
  synchronized Ticket onTheWire() {
    Ticket ticket = new Ticket(seq, nanoClock.getAsLong());
    onTheWire.merge(ticket.seq, 1, Integer::sum);
    return ticket;
  }

  /**
   * Lists a directory (delimited: its children), and keeps the listing when it is complete and
   * holds at most {@code maxEntries} children.
   *
   * @return whether it was kept
   */
  boolean listDirectory(
      StoreGateway gateway, String directoryKey, int maxEntries, ShimStatistics counters)
      throws StoreException {
    if (!caching()) {
      return false;
    }
    try (Ticket ticket = onTheWire()) {
      String prefix = prefixOf(directoryKey);
      List<String> entries = gateway.listChildren(prefix, maxEntries + 1);
      if (entries.size() > maxEntries) {
        return false;
      }
      Listing listing = new Listing(ticket.sentNanos);
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
                : new Child(placeholder(entry), old == null ? Prefix.NONE : old.prefix(), false));
      }
      counters.destinationListings.incrementAndGet();
      return keep(ticket, Map.of(directoryKey, listing));
    }
  }

  /**
   * Lists a directory and everything under it in one flat listing, when it holds at most {@code
   * maxKeys} objects, so that every directory in it gets a listing. The directory {@code skipped}
   * directly under it (a name, or null) is left out: it is shown as present and unknown, and
   * nothing under it is answered. Directories in {@code alsoEmpty} that the listing shows nothing
   * under get an empty listing: a flat listing shows every object under it.
   *
   * @return whether it was kept
   */
  boolean listTree(
      StoreGateway gateway,
      String directoryKey,
      int maxKeys,
      String skipped,
      List<String> alsoEmpty,
      ShimStatistics counters)
      throws StoreException {
    if (!caching()) {
      return false;
    }
    try (Ticket ticket = onTheWire()) {
      String prefix = prefixOf(directoryKey);
      Optional<List<ObjectInfo>> objects =
          skipped == null
              ? gateway.listObjectsUpTo(prefix, maxKeys)
              : gateway.listObjectsUpTo(prefix, maxKeys, prefix + skipped + "/");
      if (objects.isEmpty()) {
        return false;
      }
      Map<String, Listing> tree = new HashMap<>();
      tree.put(directoryKey, new Listing(ticket.sentNanos));
      if (skipped != null) {
        tree.get(directoryKey).children.put(skipped, Child.UNSURE);
      }
      for (ObjectInfo object : objects.get()) {
        String directory = directoryKey;
        String[] names = object.key().substring(prefix.length()).split("/", -1);
        for (int i = 0; i < names.length && !names[i].isEmpty(); i++) {
          Listing listing = tree.computeIfAbsent(directory, d -> new Listing(ticket.sentNanos));
          Child old = listing.children.get(names[i]);
          if (i < names.length - 1) {
            listing.children.put(
                names[i], new Child(old == null ? null : old.object(), Prefix.PRESENT, false));
            directory = prefixOf(directory) + names[i];
            tree.computeIfAbsent(directory, d -> new Listing(ticket.sentNanos));
          } else {
            listing.children.put(
                names[i], new Child(object, old == null ? Prefix.NONE : old.prefix(), false));
          }
        }
      }
      String skippedKey = skipped == null ? null : prefixOf(directoryKey) + skipped;
      for (String directory : alsoEmpty) {
        if (isUnder(directory, directoryKey)
            && (skippedKey == null || !isAtOrUnder(directory, skippedKey))) {
          tree.putIfAbsent(directory, new Listing(ticket.sentNanos));
        }
      }
      counters.destinationListings.incrementAndGet();
      return keep(ticket, tree);
    }
  }

  /**
   * Keeps listings sent with the ticket: the changes made since it was sent are replayed on them,
   * then queued destinations added; none is kept when a change cannot be replayed (the log was cut
   * short), and a listing the replay left unable to answer is dropped. A kept listing replaces an
   * older one only.
   */
  private synchronized boolean keep(Ticket ticket, Map<String, Listing> fresh) {
    if (ticket.seq < logFloor) {
      return false;
    }
    long now = nanoClock.getAsLong();
    if (now - ticket.sentNanos >= ttlNanos) {
      return false;
    }
    List<String> dropped = new ArrayList<>();
    for (Logged logged : log) {
      if (logged.seq() <= ticket.seq) {
        continue;
      }
      for (Map.Entry<String, Listing> entry : fresh.entrySet()) {
        if (!apply(entry.getKey(), entry.getValue(), logged.change())) {
          dropped.add(entry.getKey());
        }
      }
    }
    dropped.forEach(fresh::remove);
    for (Map.Entry<String, Listing> entry : fresh.entrySet()) {
      String prefix = prefixOf(entry.getKey());
      for (String key : promised.tailMap(prefix, true).keySet()) {
        if (!key.startsWith(prefix)) {
          break;
        }
        apply(entry.getKey(), entry.getValue(), new Wrote(key, placeholder(key), null));
      }
      // The store shows files moved in this JVM's view only where their records are stored: the
      // listing shows them where they were moved to.
      for (String stored : virtualByStored.keySet()) {
        if (stored.startsWith(prefix)) {
          apply(entry.getKey(), entry.getValue(), new Removed(stored));
        }
      }
      for (Map.Entry<String, Virtual> moved :
          virtuals.subMap(prefix, true, prefix + Character.MAX_VALUE, false).entrySet()) {
        ObjectInfo stored = moved.getValue().stored();
        apply(
            entry.getKey(),
            entry.getValue(),
            new Wrote(
                moved.getKey(),
                new ObjectInfo(
                    moved.getKey(), stored.size(), stored.etag(), stored.lastModifiedMillis()),
                moved.getValue().record()));
      }
      Listing kept = listings.get(entry.getKey());
      if (kept == null || kept.sentNanos - entry.getValue().sentNanos <= 0) {
        if (kept != null) {
          listedChildren -= kept.children.size();
        }
        listings.put(entry.getKey(), entry.getValue());
        listedChildren += entry.getValue().children.size();
      }
    }
    bound(now);
    return !fresh.isEmpty();
  }

  private void forgetListing(String directoryKey) {
    Listing gone = listings.remove(directoryKey);
    if (gone != null) {
      listedChildren -= gone.children.size();
    }
  }

  // ---- bounds -------------------------------------------------------------------------------

  private void trimLog() {
    long oldest = onTheWire.isEmpty() ? Long.MAX_VALUE : onTheWire.firstKey();
    while (!log.isEmpty() && log.peekFirst().seq() <= oldest) {
      log.removeFirst();
    }
  }

  /** Entries kept now: listed children, facts and logged changes; for tests. */
  synchronized int entries() {
    return listedChildren + facts.size() + log.size();
  }

  /** Listings kept now; for tests. */
  synchronized int listingsKept() {
    return listings.size();
  }

  private void bound(long now) {
    if (entries() <= MAX_ENTRIES) {
      return;
    }
    for (String directory : new ArrayList<>(listings.keySet())) {
      freshListing(directory, now);
    }
    facts.values().removeIf(fact -> fact.expires() && now - fact.atNanos() >= ttlNanos);
    if (entries() > MAX_ENTRIES) {
      listings.clear();
      listedChildren = 0;
    }
    while (facts.size() + log.size() > MAX_ENTRIES && !factOrder.isEmpty()) {
      String forgotten = factOrder.removeFirst();
      if (virtuals.containsKey(forgotten)) {
        factOrder.addLast(forgotten); // a file moved in view only: never forgotten
        if (factOrder.size() <= virtuals.size()) {
          break;
        }
        continue;
      }
      facts.remove(forgotten);
      ShimNames.taskAttemptOf(forgotten)
          .ifPresent(attempt -> ownedAttempts.computeIfPresent(attempt, (dir, owned) -> false));
    }
    if (log.size() > MAX_ENTRIES / 2) {
      // Listings on the wire since before the cut are not kept when they arrive.
      while (log.size() > MAX_ENTRIES / 4) {
        logFloor = log.removeFirst().seq();
      }
    }
    if (factOrder.size() > 2 * facts.size() + 1024) {
      factOrder.removeIf(key -> !facts.containsKey(key));
    }
  }

  /** For a listing of what this JVM knows of a directory, in tests and messages. */
  synchronized NavigableMap<String, String> describe(String directoryKey) {
    TreeMap<String, String> described = new TreeMap<>();
    Listing listing = listings.get(directoryKey);
    if (listing != null) {
      for (Map.Entry<String, Child> entry : listing.children.entrySet()) {
        described.put(entry.getKey(), entry.getValue().toString());
      }
    }
    return described;
  }

  /** Forgets everything: for the bucket state's close. */
  synchronized void clear() {
    listings.clear();
    ownedAttempts.clear();
    virtuals.clear();
    virtualByStored.clear();
    facts.clear();
    factOrder.clear();
    listedChildren = 0;
    log.clear();
  }
}
