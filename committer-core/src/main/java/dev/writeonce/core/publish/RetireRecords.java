package dev.writeonce.core.publish;

import dev.writeonce.core.errors.ErrorKind;
import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.json.RetireRecordFormat;
import dev.writeonce.core.lease.LeaseLock;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.model.RetireRecord;
import dev.writeonce.core.model.RetireRecord.RetiredObject;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.PeekedObject;
import dev.writeonce.core.store.StoreGateway;
import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The retire records of one table in metastore publish mode ({@link RetireRecord}, under {@code
 * _generations/_retired/}), seen by one run: writing its own, and, under the table's publication
 * lock, acting on the others once they are older than the grace period on the store's clock.
 *
 * <ul>
 *   <li>A claimed record's statement never published: once due, what its generation holds is
 *       recorded as superseded (grace again), unless a location names it.
 *   <li>A pending or superseded record's objects are sorted: one this table's own locations name is
 *       dropped (it is the table's data; the statement that replaces that location records it
 *       then), one only another table names is held, and the rest go: a superseded record's now,
 *       each only while its ETag still matches; a pending record's and held ones that no location
 *       names any more one grace period later, as a superseded record.
 *   <li>A record of the mode's first version, which named directories, becomes a superseded record
 *       of what its generations hold now (grace again); directories outside the generations are
 *       left where they are.
 * </ul>
 *
 * Nothing is removed by listing a directory that no record of this library claims.
 */
final class RetireRecords {

  private static final Logger LOG = LoggerFactory.getLogger(RetireRecords.class);

  /** A record is read whole; this much is enough to tell it is one. */
  private static final int RECORD_HEAD = 64;

  private final MetastoreTable table;
  private final Destination root;
  private final String runId;
  private final String who;
  private final long graceMillis;

  RetireRecords(
      MetastoreTable table, Destination root, String runId, String who, long graceMillis) {
    this.table = table;
    this.root = root;
    this.runId = runId;
    this.who = who;
    this.graceMillis = graceMillis;
  }

  /**
   * The ETag and body of this run's record as it last wrote it; null before its first write. Every
   * write after the first is conditional on it: a statement never overwrites what a removal made of
   * its record (a claim found lapsed while the statement was paused), and learns of it instead.
   * Written by the statement's thread and by the claim's renewals; no request is sent under it.
   */
  private final Object mutex = new Object();

  private String etag;
  private RetireRecord claim;
  private boolean claimLost;
  private Runnable stopRenewals = () -> {};

  /**
   * Claims the run's generation: a claimed record, renewed every quarter of {@code leaseMillis} on
   * the timing's renewals until the run writes its pending record. Called again, it renews the
   * claim at once and must succeed: right before files land in the generation, it proves that no
   * other statement took the generation for abandoned meanwhile.
   */
  void claim(StoreGateway store, long leaseMillis, LeaseLock.Timing timing) throws IOException {
    RetireRecord next;
    boolean first;
    synchronized (mutex) {
      if (claimLost) {
        throw new IllegalStateException(runId + ": its claim was lost");
      }
      first = claim == null;
      if (first && etag != null) {
        throw new IllegalStateException(runId + ": claimed after its record moved past its claim");
      }
      next = claimRecord(leaseMillis, first ? 0 : claim.renewal() + 1);
    }
    writeRecord(store, next);
    synchronized (mutex) {
      claim = next;
    }
    if (first) {
      Runnable stop = timing.renewals().schedule(leaseMillis / 4, () -> renewClaim(store));
      synchronized (mutex) {
        stopRenewals = stop;
      }
    }
  }

  /** The claim's record at its {@code renewal}-th write. */
  private RetireRecord claimRecord(long leaseMillis, long renewal) {
    return new RetireRecord(
        runId,
        table.name(),
        RetireRecord.State.CLAIMED,
        List.of(),
        List.of(),
        leaseMillis,
        renewal,
        graceMillis);
  }

  /** Rewrites the claim, as long as this run still holds it; a failure is only logged. */
  private void renewClaim(StoreGateway store) {
    RetireRecord next;
    synchronized (mutex) {
      if (claim == null || claimLost) {
        return;
      }
      next = claimRecord(claim.leaseMillis(), claim.renewal() + 1);
    }
    try {
      writeRecord(store, next);
      synchronized (mutex) {
        if (claim != null) {
          claim = next;
        }
      }
    } catch (IOException | RuntimeException e) {
      LOG.warn(
          "{}: renewing the claim on its generation failed ({}); the next renewal tries again",
          who,
          e.getMessage());
    }
  }

  /** Whether the run's record is still its claim: it wrote no pending record. */
  boolean claimedOnly() {
    synchronized (mutex) {
      return claim != null && !claimLost;
    }
  }

  /** Stops renewing the claim: the statement ended, published or not. */
  void stopClaim() {
    Runnable stop;
    synchronized (mutex) {
      stop = stopRenewals;
      stopRenewals = () -> {};
    }
    stop.run();
  }

  /**
   * Writes this run's record. The claim's renewals stop first; a renewal still on the wire that
   * lands before this write is recognised when the write is refused, and the write is sent again.
   *
   * @throws IOException of kind {@link ErrorKind#PRECONDITION_FAILED} when another statement's
   *     removal changed the record: the statement must not go on
   */
  void write(
      StoreGateway store,
      RetireRecord.State state,
      List<RetiredObject> own,
      List<RetiredObject> superseded)
      throws IOException {
    stopClaim();
    synchronized (mutex) {
      claim = null;
    }
    writeRecord(
        store,
        new RetireRecord(runId, table.name(), state, sorted(own), sorted(superseded), graceMillis));
  }

  /**
   * Writes the record: the first time only if there is none, then only over the record as this run
   * last wrote it. A write whose answer was lost, or a renewal of the claim that landed after this
   * write read the ETag, is recognised by reading the record back.
   */
  private void writeRecord(StoreGateway store, RetireRecord record) throws IOException {
    String key = Generations.retiredKey(root, runId);
    byte[] body = RetireRecordFormat.toJson(record);
    for (int attempt = 0; ; attempt++) {
      String expected;
      synchronized (mutex) {
        expected = etag;
      }
      try {
        String landed =
            expected == null
                ? store.putObject(key, body, true)
                : store.replaceObject(key, body, expected);
        remember(expected, landed);
        return;
      } catch (StoreException e) {
        if (!e.is(ErrorKind.TRANSIENT) && !e.is(ErrorKind.PRECONDITION_FAILED)) {
          throw e;
        }
        Optional<PeekedObject> back = store.peekObject(key, RECORD_HEAD, any -> true);
        byte[] found = back.flatMap(PeekedObject::matchingBody).orElse(null);
        if (found != null && java.util.Arrays.equals(found, body)) {
          remember(expected, back.get().info().etag()); // it landed; its answer was lost
          return;
        }
        if (found != null && attempt < 3 && ownClaim(found)) {
          // A renewal of this run's claim landed in between: write over it.
          remember(null, back.get().info().etag());
          continue;
        }
        if (e.is(ErrorKind.TRANSIENT)) {
          throw e;
        }
        synchronized (mutex) {
          claimLost = true;
        }
        throw new StoreException(
            ErrorKind.PRECONDITION_FAILED,
            412,
            "the record "
                + root.uriOf(key)
                + " of this statement's generation was changed by another statement, which took"
                + " the generation for abandoned (this statement was paused longer than its lease"
                + " and "
                + Publication.GRACE
                + "); the generation may have lost files, so the statement does not publish it",
            e);
      }
    }
  }

  private void remember(String expected, String landed) {
    synchronized (mutex) {
      if (expected == null || expected.equals(etag)) {
        etag = landed;
      }
    }
  }

  /** Whether a record read back is a claim of this run's, written by its renewals. */
  private boolean ownClaim(byte[] body) {
    try {
      RetireRecord found = RetireRecordFormat.fromJson(body, "this run's record");
      return found.run().equals(runId) && found.state() == RetireRecord.State.CLAIMED;
    } catch (FormatException e) {
      return false;
    }
  }

  /**
   * Removes this run's record as it last wrote it: after a call that superseded nothing (a location
   * names all), or after the run removed its unpublished generation.
   */
  void forget(StoreGateway store) {
    String last;
    synchronized (mutex) {
      last = etag;
    }
    if (last == null) {
      return;
    }
    try {
      store.deleteObjectIfMatch(Generations.retiredKey(root, runId), last);
    } catch (IOException | RuntimeException e) {
      LOG.debug("{}: its pending record stays until superseded: {}", who, e.getMessage());
    }
  }

  static List<RetiredObject> sorted(List<RetiredObject> objects) {
    Map<String, RetiredObject> byKey = new TreeMap<>();
    objects.forEach(object -> byKey.put(object.key(), object));
    return new ArrayList<>(byKey.values());
  }

  /** One pass over the records, under the publication lock; a failure is only logged. */
  void removeDue(StoreGateway store) {
    try {
      new Pass(store).run();
    } catch (IOException | RuntimeException e) {
      LOG.warn(
          "{}: superseded generations of {} not removed this time: {}",
          who,
          table.name(),
          e.getMessage());
    }
  }

  /** One pass: costs one LIST when nothing is due. */
  private final class Pass {
    private final StoreGateway store;
    private final String records = root.keyOf(Generations.RETIRED);
    private final String generations = root.keyOf(Generations.DIR);
    private List<String> live;
    private List<String> own;
    private int removed;
    private int restarted;

    Pass(StoreGateway store) {
      this.store = store;
    }

    void run() throws IOException {
      long now = store.storeNowMillis();
      List<ObjectInfo> due = new ArrayList<>();
      for (ObjectInfo record : store.listObjects(records)) {
        String run = record.key().substring(records.length());
        if (now - record.lastModifiedMillis() >= graceMillis && !run.equals(runId)) {
          due.add(record);
        }
      }
      if (due.isEmpty()) {
        return;
      }
      for (ObjectInfo record : due) {
        act(record);
      }
      LOG.info(
          "{}: removed {} objects of {} records of {} due after {} ms; {} records wait another"
              + " grace period",
          who,
          removed,
          due.size() - restarted,
          table.name(),
          graceMillis,
          restarted);
    }

    /** Key prefixes of every location a table of the metastore names, in the root's bucket. */
    private List<String> live() throws IOException {
      if (live == null) {
        List<String> prefixes = new ArrayList<>(own());
        prefixes.addAll(prefixesOf(table.otherLocations()));
        live = prefixes;
      }
      return live;
    }

    /** Key prefixes of the table's own locations: read first, since reading others costs more. */
    private List<String> own() throws IOException {
      if (own == null) {
        own =
            prefixesOf(
                table.partitioned()
                    ? new ArrayList<>(table.partitionLocations().values())
                    : List.of(table.location()));
      }
      return own;
    }

    private List<String> prefixesOf(List<URI> locations) {
      List<String> prefixes = new ArrayList<>();
      for (URI location : locations) {
        if (Generations.inBucket(location, root.bucket())) {
          prefixes.add(Destination.of(location).prefix());
        }
      }
      return prefixes;
    }

    /**
     * Whether one of the locations reads the key: it lies under the location, in no directory a
     * reader of that location skips ({@code _generations/} under a table over the root is not
     * read).
     */
    private boolean reads(List<String> prefixes, String key) {
      for (String prefix : prefixes) {
        if (key.startsWith(prefix)) {
          String relative = key.substring(prefix.length());
          int slash = relative.lastIndexOf('/');
          if (slash < 0 || Generations.visibleToReaders(relative.substring(0, slash))) {
            return true;
          }
        }
      }
      return false;
    }

    private boolean named(String key) throws IOException {
      return reads(own(), key) || reads(live(), key);
    }

    /** Whether a location names a directory that holds, or lies inside, this one. */
    private boolean overlapsLive(String directory) throws IOException {
      for (String prefix : live()) {
        if (prefix.startsWith(directory)
            || directory.startsWith(prefix)
                && Generations.visibleToReaders(directory.substring(prefix.length()))) {
          return true;
        }
      }
      return false;
    }

    private void act(ObjectInfo info) throws IOException {
      Optional<PeekedObject> read = store.peekObject(info.key(), RECORD_HEAD, any -> true);
      if (read.isEmpty() || read.get().matchingBody().isEmpty()) {
        return; // another statement acted on it
      }
      if (store.storeNowMillis() - read.get().info().lastModifiedMillis() < graceMillis) {
        return; // written again since it was listed: not due
      }
      byte[] body = read.get().matchingBody().get();
      // Every rewrite is conditional on the record as read: a statement that wrote its own record
      // meanwhile (its claim became its pending record) is never overwritten.
      String etag = read.get().info().etag();
      String run = info.key().substring(records.length());
      if (!RetireRecordFormat.isJson(body)) {
        upgrade(info.key(), etag, run, body);
        return;
      }
      RetireRecord record;
      try {
        record = RetireRecordFormat.fromJson(body, root.uriOf(info.key()));
      } catch (FormatException e) {
        LOG.warn(
            "{}: {} is not a retire record this version reads; left in place", who, e.getMessage());
        return;
      }
      if (store.storeNowMillis() - read.get().info().lastModifiedMillis() < record.graceMillis()) {
        return; // its writer's grace is longer than this statement's: not due yet
      }
      switch (record.state()) {
        case CLAIMED -> {
          if (store.storeNowMillis() - read.get().info().lastModifiedMillis()
              < record.leaseMillis()) {
            return; // its statement renews it: alive
          }
          // Its statement never published: what its generation holds now is its, unless a
          // location names it, and is removed one grace period from now.
          String generation = root.keyOf(Generations.runDir(record.run()));
          if (overlapsLive(generation)) {
            return;
          }
          List<RetiredObject> found = new ArrayList<>();
          for (ObjectInfo object : store.listObjects(generation)) {
            if (!Generations.inStaging(object.key().substring(generation.length()))) {
              found.add(new RetiredObject(object.key(), object.etag()));
            }
          }
          if (found.isEmpty()) {
            store.deleteObjectIfMatch(info.key(), etag);
          } else {
            supersede(info.key(), etag, record.run(), found, record.graceMillis());
            restarted++;
          }
        }
        case PENDING -> {
          // The statement never wrote its end: it failed, died, or lost the answer of a call
          // that landed. Its own objects and what it superseded are sorted as below; readers
          // may have read the released ones until just now, so their grace starts here.
          Sorted sorted = new Sorted();
          sorted.add(record.own(), false);
          sorted.add(record.superseded(), false);
          rewrite(info.key(), etag, record, sorted);
        }
        case SUPERSEDED -> {
          // Its superseded objects go now, unless a location names them; the objects it held
          // (named by another table when last seen) are released with a grace of their own once
          // none does.
          Sorted sorted = new Sorted();
          sorted.add(record.superseded(), true);
          sorted.add(record.own(), false);
          rewrite(info.key(), etag, record, sorted);
        }
      }
    }

    /**
     * The objects of a record, sorted for its next version. One this table's own locations name is
     * dropped: it is the table's data, and the statement that replaces that location records it
     * then, with the grace from that moment. One only another table names is held. Any other is
     * released (removed one grace period from now) or, where the record is due for removal, deleted
     * at once.
     */
    private final class Sorted {
      final List<RetiredObject> held = new ArrayList<>();
      final List<RetiredObject> released = new ArrayList<>();
      final List<RetiredObject> due = new ArrayList<>();

      void add(List<RetiredObject> objects, boolean removable) throws IOException {
        for (RetiredObject object : objects) {
          if (!object.key().startsWith(root.prefix()) || reads(own(), object.key())) {
            continue;
          }
          if (reads(live(), object.key())) {
            held.add(object);
          } else if (removable) {
            due.add(object);
          } else {
            released.add(object);
          }
        }
      }
    }

    /** Deletes what is due, and writes the record's next version, or deletes it when empty. */
    private void rewrite(String key, String etag, RetireRecord record, Sorted sorted)
        throws IOException {
      remove(sorted.due);
      if (sorted.held.isEmpty() && sorted.released.isEmpty()) {
        store.deleteObjectIfMatch(key, etag);
        return;
      }
      try {
        store.replaceObject(
            key,
            RetireRecordFormat.toJson(
                new RetireRecord(
                    record.run(),
                    table.name(),
                    RetireRecord.State.SUPERSEDED,
                    sorted(sorted.held),
                    sorted(sorted.released),
                    Math.max(record.graceMillis(), graceMillis))),
            etag);
        if (!sorted.released.isEmpty()) {
          restarted++;
        }
      } catch (StoreException e) {
        if (!e.is(ErrorKind.PRECONDITION_FAILED)) {
          throw e;
        }
        // its statement wrote it meanwhile: it is that statement's again
      }
    }

    /**
     * Deletes the objects a record names, each only while its ETag still matches and no location
     * holds it, after one LIST of each directory they lie in. A generation's objects go in bulk
     * (the window left is between that LIST and the delete); others one by one with {@code
     * If-Match}, which a store that ignores it leaves to the same window.
     */
    private void remove(List<RetiredObject> objects) throws IOException {
      Map<String, Map<String, String>> listings = new HashMap<>();
      List<String> bulk = new ArrayList<>();
      for (RetiredObject object : objects) {
        String directory = object.key().substring(0, object.key().lastIndexOf('/') + 1);
        Map<String, String> current = listings.get(directory);
        if (current == null) {
          current = new HashMap<>();
          for (ObjectInfo found : store.listObjects(directory)) {
            current.put(found.key(), found.etag());
          }
          listings.put(directory, current);
        }
        if (!object.etag().equals(current.get(object.key()))) {
          continue; // gone, or written again since it was recorded: not the object recorded
        }
        if (object.key().startsWith(generations)) {
          bulk.add(object.key());
        } else if (store.deleteObjectIfMatch(object.key(), object.etag())) {
          removed++;
        }
      }
      if (!bulk.isEmpty()) {
        store.deleteObjects(bulk);
        removed += bulk.size();
      }
    }

    /**
     * A record of the mode's first version names directories, not objects: what the generations
     * among them hold now becomes a superseded record, so that the grace counts from here and only
     * what is there now is removed; anything outside the generations is left where it is.
     */
    private void upgrade(String key, String etag, String run, byte[] body) throws IOException {
      List<RetiredObject> objects = new ArrayList<>();
      for (String location : RetireRecordFormat.legacyLocations(body)) {
        if (!location.startsWith(generations) || location.startsWith(records)) {
          LOG.info(
              "{}: {} lies outside the generations; left where it is", who, root.uriOf(location));
          continue;
        }
        if (overlapsLive(location)) {
          return; // a first-version pending record whose generation is still read: it waits
        }
        for (ObjectInfo object : store.listObjects(location)) {
          String relative = object.key().substring(location.length());
          if (!Generations.inStaging(relative) && !named(object.key())) {
            objects.add(new RetiredObject(object.key(), object.etag()));
          }
        }
      }
      supersede(key, etag, run, objects, 0);
      restarted++;
    }

    /** Rewrites a record as superseded, keeping the longer of its writer's grace and this one. */
    private void supersede(
        String key, String etag, String run, List<RetiredObject> objects, long writtenGrace)
        throws IOException {
      try {
        store.replaceObject(
            key,
            RetireRecordFormat.toJson(
                new RetireRecord(
                    run,
                    table.name(),
                    RetireRecord.State.SUPERSEDED,
                    List.of(),
                    sorted(objects),
                    Math.max(writtenGrace, graceMillis))),
            etag);
      } catch (StoreException e) {
        if (!e.is(ErrorKind.PRECONDITION_FAILED)) {
          throw e;
        }
        restarted--; // its statement wrote it meanwhile: it is that statement's again
      }
    }
  }
}
