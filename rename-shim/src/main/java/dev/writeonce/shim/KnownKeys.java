package dev.writeonce.shim;

import static dev.writeonce.shim.Keys.prefixOf;

import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.model.PendingFile;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.StoreGateway;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.function.LongSupplier;

/**
 * What the shim knows of one bucket's keys, for every shim instance of the bucket in this JVM: the
 * one cache. Commit code asks the file system the same questions over and over (does the
 * destination exist, what does this directory hold); the answers come from its parts, each a
 * concept of its own and all guarded by this object's monitor ({@link GuardedByCache}):
 *
 * <ul>
 *   <li>{@link Listings}: complete listings of directories, and destinations too large to list;
 *   <li>{@link Facts}: what this JVM did or saw of single keys, with their bound;
 *   <li>{@link InFlight}: keys an operation of this JVM is changing right now ({@link #begin}),
 *       answered as unknown until it ends, and destinations whose completion is queued ({@link
 *       #promise}), answered as files, with directories above them;
 *   <li>{@link ChangeLog}: the changes made while listings were on the wire ({@link Ticket}), to
 *       replay on them;
 *   <li>{@link MovedInView}: files a job commit moved in this JVM's view only;
 *   <li>{@link OwnedAttempts}: task attempt directories whose every object this JVM wrote.
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

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(KnownKeys.class);

  /** Listed children and facts kept at most. */
  static final int MAX_ENTRIES = 200_000;

  /**
   * A request on the wire whose answer will be kept ({@link #onTheWire}): the changes made while it
   * travels are replayed on its answer. A read reports through it what the store answered.
   */
  final class Ticket implements AutoCloseable {
    final long seq;
    final long sentNanos;
    private boolean closed;

    private Ticket(long seq, long sentNanos) {
      this.seq = seq;
      this.sentNanos = sentNanos;
    }

    /**
     * The store answered that the key does not exist: absent for the window, unless this JVM
     * changed it since the request was sent.
     */
    void reportAbsent(String key) {
      synchronized (KnownKeys.this) {
        if (!window.caching()
            || inFlight.changing(key, List.of())
            || inFlight.promised(key)
            || log.changedSince(seq, key)) {
          return;
        }
        Facts.Fact fact = facts.peek(key);
        if (fact == null || fact.known().record() == null) {
          facts.put(key, new Facts.Fact(Known.ABSENT, sentNanos, true));
        }
      }
    }

    @Override
    public void close() {
      synchronized (KnownKeys.this) {
        if (!closed) {
          closed = true;
          log.answered(seq);
        }
      }
    }
  }

  @GuardedByCache private final Window window;
  @GuardedByCache private final Listings listings;
  @GuardedByCache private final Facts facts;
  @GuardedByCache private final InFlight inFlight = new InFlight();
  @GuardedByCache private final ChangeLog log = new ChangeLog();
  @GuardedByCache private final MovedInView moved = new MovedInView();
  @GuardedByCache private final OwnedAttempts owned = new OwnedAttempts();

  /**
   * @param ttlMillis how long what the store told answers (the listing window); 0 keeps no listing
   *     and no absence
   * @param nanoClock a monotonic clock
   */
  KnownKeys(long ttlMillis, LongSupplier nanoClock) {
    this.window = new Window(ttlMillis, nanoClock);
    this.listings = new Listings(window);
    this.facts = new Facts(window);
  }

  /** Sets the time-to-live: the shortest listing window of the bucket's open instances. */
  synchronized void window(long ttlMillis) {
    window.set(ttlMillis);
  }

  /** Whether listings and absences are kept at all (a listing window above 0). */
  synchronized boolean caching() {
    return window.caching();
  }

  // ---- answers ------------------------------------------------------------------------------

  /** What is known of a key, without a request. */
  Known answer(String key) {
    return answer(key, List.of());
  }

  /**
   * What is known of a key, for an operation that is changing the keys {@code own}: its own changes
   * in progress do not make its answers unknown.
   */
  synchronized Known answer(String key, List<String> own) {
    if (moved.holdsRecordOfMoved(key)) {
      return Known.ABSENT; // the record of a file moved away in this JVM's view
    }
    if (inFlight.changing(key, own)) {
      return Known.UNKNOWN;
    }
    if (inFlight.promised(key)) {
      return Known.file(null, null);
    }
    if (inFlight.promisedUnder(key)) {
      return Known.DIRECTORY;
    }
    long now = window.now();
    Known listed = listings.answer(key, now);
    Facts.Fact fact = facts.get(key, now);
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
    if (facts.existsUnder(key)) {
      return Known.DIRECTORY;
    }
    return facts.absentAbove(key, now) ? Known.ABSENT : Known.UNKNOWN;
  }

  /** The record this JVM wrote or read at a key, if it holds one and has not seen it go. */
  synchronized Optional<PendingFile> record(String key) {
    return facts.record(key);
  }

  /** The record at a key, if this JVM knows it and the object still has the given ETag. */
  synchronized Optional<PendingFile> record(String key, String etag) {
    return facts.record(key, etag);
  }

  /** The object holding the record this JVM knows at a key, whatever changes at the key now. */
  synchronized Optional<ObjectInfo> recordObject(String key) {
    return facts.recordObject(key);
  }

  /** A directory's children as a listing gives them: files, and subdirectories by key. */
  record Children(List<ObjectInfo> files, List<String> directories) {}

  /** The children of a directory, from a listing that answers for it now. */
  Optional<Children> children(String directoryKey) {
    return children(directoryKey, List.of());
  }

  /** {@link #children(String)} for an operation changing the keys {@code own}. */
  synchronized Optional<Children> children(String directoryKey, List<String> own) {
    Listings.Listing listing = listings.fresh(directoryKey, window.now());
    if (inFlight.changing(directoryKey, own) || inFlight.promisedUnder(directoryKey)) {
      return Optional.empty();
    }
    if (listing == null) {
      return ownedChildren(directoryKey);
    }
    return Listings.childrenOf(directoryKey, listing);
  }

  /** The children of a directory in an owned task attempt directory, from the facts. */
  private Optional<Children> ownedChildren(String directoryKey) {
    Optional<String> attempt = Layouts.taskAttemptOf(directoryKey);
    if (attempt.isEmpty() || !owned.owned(attempt.get())) {
      return Optional.empty();
    }
    if (inFlight.changingUnder(directoryKey)) {
      return Optional.empty(); // a file still being written
    }
    String prefix = prefixOf(directoryKey);
    List<ObjectInfo> files = new ArrayList<>();
    TreeSet<String> directories = new TreeSet<>();
    for (Map.Entry<String, Facts.Fact> entry : facts.under(directoryKey).entrySet()) {
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

  /**
   * A merge round will move these names into the directory: a listing of it sent during the round
   * answers for them past the window while the round lasts ({@link Listings#hold}).
   */
  synchronized void hold(MergeRound round, String directoryKey, Collection<String> names) {
    listings.hold(round, directoryKey, names);
  }

  /** Whether the round holds a listing of the directory ({@link #hold}). */
  synchronized boolean heldBy(MergeRound round, String directoryKey) {
    return listings.heldBy(round, directoryKey, window.now());
  }

  /** Whether a listing of the directory younger than the given age is kept. */
  synchronized boolean listedWithin(String directoryKey, long ageNanos) {
    return listings.listedWithin(directoryKey, ageNanos, window.now());
  }

  /** A destination was found larger than a flat listing of it takes. */
  synchronized void foundTooLarge(String directoryKey) {
    listings.foundTooLarge(directoryKey, window.now());
  }

  /** Whether the destination was found too large less than {@code forNanos} ago. */
  synchronized boolean foundTooLarge(String directoryKey, long forNanos) {
    return listings.foundTooLarge(directoryKey, forNanos, window.now());
  }

  /**
   * A directory was found holding more children than a listing of it keeps, so that it is not
   * listed ahead or again for a while (kept beside the trees found too large, by the directory's
   * prefix).
   */
  private synchronized void foundTooManyChildren(String directoryKey) {
    listings.foundTooLarge(prefixOf(directoryKey), window.now());
  }

  /** Whether the directory was found holding too many children less than {@code forNanos} ago. */
  synchronized boolean foundTooManyChildren(String directoryKey, long forNanos) {
    return listings.foundTooLarge(prefixOf(directoryKey), forNanos, window.now());
  }

  /** Destinations found too large kept now; for tests. */
  synchronized int tooLargeKept() {
    return listings.tooLargeKept();
  }

  // ---- moved in view only -------------------------------------------------------------------

  /** Whether a merge may move one more file in view only. */
  synchronized boolean canMoveInView() {
    return !moved.isFull();
  }

  /**
   * Moves a pending file to a new key in this JVM's view only: its record stays where it is stored.
   * Returns the object the file shows at its new key (the record's, renamed).
   */
  synchronized ObjectInfo moveInView(
      String sourceKey, String targetKey, PendingFile record, ObjectInfo storedObject) {
    ObjectInfo shown = moved.move(sourceKey, targetKey, record, storedObject);
    long now = window.now();
    change(new Change.Removed(sourceKey), now);
    change(new Change.Wrote(targetKey, shown, record), now);
    bound(now);
    return shown;
  }

  /** Where the record of a file moved in view only is stored; empty for any other key. */
  synchronized Optional<String> storedKeyOf(String key) {
    return moved.storedKeyOf(key);
  }

  /**
   * Whether a stored object holds the record of a file moved in view only: a listing shows the file
   * at its new key instead, and a delete of the old key's directory leaves the record alone.
   */
  synchronized boolean holdsRecordMovedInView(String storedKey) {
    return moved.holdsRecordOfMoved(storedKey);
  }

  /** Whether any file is moved in view only now. */
  synchronized boolean anyMovedInView() {
    return moved.any();
  }

  /**
   * What a directory holds as this JVM sees it, from the store's listing of it: without the records
   * of files moved in this JVM's view only, and with the files moved into it.
   */
  synchronized List<ObjectInfo> asSeen(String directoryKey, List<ObjectInfo> stored) {
    return moved.asSeen(directoryKey, stored);
  }

  /** The files moved in view only under a directory, with the objects they show. */
  synchronized List<ObjectInfo> movedInViewUnder(String directoryKey) {
    List<ObjectInfo> files = new ArrayList<>();
    for (Map.Entry<String, MovedInView.Move> entry : moved.under(directoryKey).entrySet()) {
      files.add(entry.getValue().shownAt(entry.getKey()));
    }
    return files;
  }

  // ---- changes ------------------------------------------------------------------------------

  /** An operation of this JVM starts changing these keys: until it ends they are unknown. */
  synchronized void begin(List<String> keys) {
    inFlight.begin(keys);
  }

  /** The operation ended: what it reported is applied, then the keys are no longer changing. */
  synchronized void end(List<String> keys, Report report) {
    long now = window.now();
    if (report.succeeded) {
      report.changes.forEach(change -> change(change, now));
    } else {
      keys.forEach(key -> change(new Change.Unsure(key), now));
    }
    inFlight.end(keys);
    bound(now);
  }

  /**
   * What an operation did, as it reports it before it ends; an operation that ends without
   * reporting success (it failed) leaves its keys unknown.
   */
  static final class Report {
    private final List<Change> changes = new ArrayList<>();
    private boolean succeeded;
    private boolean handedOver;

    /** The operation completed; what it reported is all it changed. */
    void succeeded() {
      succeeded = true;
    }

    boolean isSucceeded() {
      return succeeded;
    }

    /**
     * The operation's keys stay changing after it returns, until whoever took them over ends them
     * (a file's writer, at close).
     */
    void handOver() {
      handedOver = true;
    }

    boolean handedOver() {
      return handedOver;
    }

    /** A file exists at the key now (its object when known, else null). */
    void wrote(String key, ObjectInfo object) {
      changes.add(new Change.Wrote(key, object == null ? Change.placeholder(key) : object, null));
    }

    /** A directory exists at the key now. */
    void madeDirectory(String key) {
      changes.add(new Change.MadeDirectory(key));
    }

    /** Nothing exists at or under the key now. */
    void removed(String key) {
      changes.add(new Change.Removed(key));
    }

    /** What lies under the key is not known. */
    void unsure(String key) {
      changes.add(new Change.Unsure(key));
    }

    /**
     * A directory was renamed into place at the key, putting these objects under it (size -1 where
     * not known).
     */
    void tree(String key, List<ObjectInfo> objects) {
      changes.add(new Change.Tree(key, List.copyOf(objects)));
    }
  }

  /** A pending-file record this JVM wrote: a change, with the record remembered. */
  synchronized void recordWritten(String key, PendingFile record, ObjectInfo object) {
    long now = window.now();
    change(new Change.Wrote(key, object, record), now);
    bound(now);
  }

  /** Records this JVM deleted (their files completed or aborted). */
  synchronized void recordsDeleted(List<String> keys) {
    long now = window.now();
    keys.forEach(key -> change(new Change.Removed(key), now));
    bound(now);
  }

  /** A record this JVM read: remembered, with the object that holds it. */
  synchronized void recordRead(String key, PendingFile record, ObjectInfo object) {
    if (!inFlight.changing(key, List.of())) {
      facts.put(key, new Facts.Fact(Known.file(object, record), window.now(), false));
    }
  }

  /** A destination's completion is queued: answered as a file, with directories above it. */
  synchronized void promise(String key) {
    inFlight.promise(key);
  }

  /** The queued completion went through ({@code landed}) or failed: the promise is kept or not. */
  synchronized void promiseEnded(String key, boolean landed) {
    inFlight.unpromise(key);
    long now = window.now();
    change(
        landed ? new Change.Wrote(key, Change.placeholder(key), null) : new Change.Unsure(key),
        now);
    bound(now);
  }

  private void change(Change change, long now) {
    log.append(change);
    listings.apply(change);
    facts.apply(change, now);
    owned.apply(change);
    if (change instanceof Change.Removed || change instanceof Change.Unsure) {
      moved.forget(change.key());
    }
  }

  // ---- listing ------------------------------------------------------------------------------

  /** Registers a request about to be sent whose answer will be kept. */
  synchronized Ticket onTheWire() {
    long sentNanos = window.now();
    return new Ticket(log.send(), sentNanos);
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
        foundTooManyChildren(directoryKey);
        return false;
      }
      Listings.Listing listing = Listings.ofChildren(prefix, entries, ticket.sentNanos);
      counters.destinationListings.incrementAndGet();
      return keep(ticket, new java.util.HashMap<>(Map.of(directoryKey, listing)));
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
        noteTreeSize(directoryKey, maxKeys == Integer.MAX_VALUE ? maxKeys : maxKeys + 1);
        return false;
      }
      Map<String, Listings.Listing> tree =
          Listings.ofTree(directoryKey, objects.get(), skipped, alsoEmpty, ticket.sentNanos);
      counters.destinationListings.incrementAndGet();
      noteTreeSize(directoryKey, objects.get().size());
      return keep(ticket, tree);
    }
  }

  /** What became of a listing: kept, too large to list whole, or not kept (aged, cut short). */
  enum Listed {
    KEPT,
    TOO_LARGE,
    NOT_KEPT
  }

  /**
   * Lists the directories (sorted keys sharing {@code prefix}, which may end inside a name) in one
   * flat listing of the prefix, when it holds at most {@code maxKeys} objects, so that each of
   * them, and every directory in it, gets a listing. Objects under the prefix outside the
   * directories are left out.
   */
  Listed listTrees(
      StoreGateway gateway,
      String prefix,
      List<String> directories,
      int maxKeys,
      ShimStatistics counters)
      throws StoreException {
    if (!caching()) {
      return Listed.NOT_KEPT;
    }
    try (Ticket ticket = onTheWire()) {
      Optional<List<ObjectInfo>> objects = gateway.listObjectsUpTo(prefix, maxKeys);
      if (objects.isEmpty()) {
        return Listed.TOO_LARGE;
      }
      Map<String, List<ObjectInfo>> byDirectory = new java.util.HashMap<>();
      directories.forEach(directory -> byDirectory.put(directory, new ArrayList<>()));
      String parent = directories.isEmpty() ? prefix : prefixOf(Keys.parentOf(directories.get(0)));
      for (ObjectInfo object : objects.get()) {
        int slash =
            object.key().startsWith(parent) ? object.key().indexOf('/', parent.length()) : -1;
        List<ObjectInfo> under =
            slash < 0 ? null : byDirectory.get(object.key().substring(0, slash));
        if (under != null) {
          under.add(object);
        }
      }
      Map<String, Listings.Listing> trees = new java.util.HashMap<>();
      for (Map.Entry<String, List<ObjectInfo>> entry : byDirectory.entrySet()) {
        trees.putAll(
            Listings.ofTree(entry.getKey(), entry.getValue(), null, List.of(), ticket.sentNanos));
      }
      counters.destinationListings.incrementAndGet();
      return keep(ticket, trees) ? Listed.KEPT : Listed.NOT_KEPT;
    }
  }

  /** How many objects the last flat listing of a directory found, for the cost of the next. */
  private final Map<String, Integer> treeSizes = new java.util.HashMap<>();

  private synchronized void noteTreeSize(String directoryKey, int objects) {
    if (treeSizes.size() >= Listings.MAX_TOO_LARGE && !treeSizes.containsKey(directoryKey)) {
      treeSizes.clear();
    }
    treeSizes.put(directoryKey, objects);
  }

  /**
   * The objects the last flat listing of a directory found (one more than it was allowed when it
   * found too many); -1 when it was never listed so.
   */
  synchronized int lastTreeSize(String directoryKey) {
    return treeSizes.getOrDefault(directoryKey, -1);
  }

  /**
   * Keeps listings sent with the ticket: the changes made since it was sent are replayed on them,
   * then queued destinations and files moved in view only added; none is kept when a change cannot
   * be replayed (the log was cut short), and a listing the replay left unable to answer is dropped.
   * A kept listing replaces an older one only.
   */
  private synchronized boolean keep(Ticket ticket, Map<String, Listings.Listing> fresh) {
    if (log.cutSince(ticket.seq)) {
      return false;
    }
    long now = window.now();
    if (window.expired(ticket.sentNanos, now)) {
      warnListingTooSlow(fresh.keySet(), now - ticket.sentNanos);
      return false;
    }
    List<String> dropped = new ArrayList<>();
    for (Change change : log.since(ticket.seq)) {
      for (Map.Entry<String, Listings.Listing> entry : fresh.entrySet()) {
        if (!listings.applyTo(entry.getKey(), entry.getValue(), change)) {
          dropped.add(entry.getKey());
        }
      }
    }
    dropped.forEach(fresh::remove);
    for (Map.Entry<String, Listings.Listing> entry : fresh.entrySet()) {
      String directory = entry.getKey();
      Listings.Listing listing = entry.getValue();
      for (String key : inFlight.promisedIn(directory)) {
        listings.applyTo(directory, listing, new Change.Wrote(key, Change.placeholder(key), null));
      }
      // The store shows files moved in this JVM's view only where their records are stored: the
      // listing shows them where they were moved to.
      for (String stored : moved.storedUnder(prefixOf(directory))) {
        listings.applyTo(directory, listing, new Change.Removed(stored));
      }
      for (Map.Entry<String, MovedInView.Move> move : moved.under(directory).entrySet()) {
        listings.applyTo(
            directory,
            listing,
            new Change.Wrote(
                move.getKey(), move.getValue().shownAt(move.getKey()), move.getValue().record()));
      }
      listings.keep(directory, listing);
    }
    bound(now);
    return !fresh.isEmpty();
  }

  private boolean warnedListingTooSlow;

  /**
   * Says once per cache that a listing took longer than the window and answers nothing: every check
   * it would have answered goes to the store, which at 10,000 files multiplies a job commit's
   * requests and time (docs/benchmarks/shim-job-commit.md).
   */
  private void warnListingTooSlow(java.util.Set<String> directories, long tookNanos) {
    if (warnedListingTooSlow || directories.isEmpty()) {
      return;
    }
    warnedListingTooSlow = true;
    long tookMillis = java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(tookNanos);
    LOG.warn(
        "A listing of {} took {} ms, longer than the rename shim's listing window of {} ms: it"
            + " answers nothing, and the existence checks and listings it would have answered go"
            + " to the store one by one. Set {} to at least {} ms for jobs of this size.",
        directories.stream().sorted().findFirst().orElse(""),
        tookMillis,
        window.millis(),
        ShimConfig.LISTING_WINDOW,
        Math.max(2 * tookMillis, window.millis() + 1));
  }

  // ---- bounds -------------------------------------------------------------------------------

  /** Entries kept now: listed children, facts and logged changes; for tests. */
  synchronized int entries() {
    return listings.children() + facts.size() + log.size();
  }

  private void bound(long now) {
    if (entries() <= MAX_ENTRIES) {
      return;
    }
    listings.expire(now);
    facts.expire(now);
    if (entries() > MAX_ENTRIES) {
      listings.clear();
    }
    facts.forgetOldest(MAX_ENTRIES - log.size(), moved::isMoved, moved.size(), owned::forgotten);
    // Listings on the wire since before the cut are not kept when they arrive.
    log.cut(MAX_ENTRIES / 2, MAX_ENTRIES / 4);
  }
}
