package dev.writeonce.core.publish;

import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.errors.ErrorKind;
import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.lease.LeaseLock;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.model.RetireRecord;
import dev.writeonce.core.model.RetireRecord.RetiredObject;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.StoreGateway;
import dev.writeonce.core.upload.UploadPool;
import dev.writeonce.core.work.Tasks;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Metastore publish mode ({@value #MODE}{@code =metastore}): a statement into an existing catalog
 * table has completed its files into fresh directories named by its run id (see {@link
 * Generations}); this makes them the table's data with one metastore call, so that a reader going
 * through the metastore sees the table before or after the statement, never a mix and never a file
 * that vanishes under it.
 *
 * <ul>
 *   <li>Written partitions point at the new generation; an append copies the partition's current
 *       files into it first (one COPY each, inside the store), because a location names one
 *       directory. A copy never replaces a file the statement wrote: it takes the next free {@code
 *       _copy_K} name instead.
 *   <li>A static overwrite points each matching partition it did not write at an empty directory of
 *       its own, in the same call; the engine drops them afterwards, which changes nothing a reader
 *       sees.
 *   <li>Only new partitions: one {@code add_partitions}. Only existing ones: one {@code
 *       alter_partitions}. Both: the new ones are added first, each pointing at an empty directory
 *       of its own (no reader sees a difference), then one {@code alter_partitions} switches them
 *       all. An unpartitioned table: one {@code alter_table} of its location.
 * </ul>
 *
 * <p>Three rules keep it from losing what an ordinary statement would have kept:
 *
 * <ul>
 *   <li><b>A lease is not a fence.</b> Publications of one table run one at a time under its
 *       publication lock, whichever engine runs them, and so do loads the mode does in place. Right
 *       before its metastore call a statement reads the table again (the partitions it replaces
 *       must still be where it read them, the files it copied still those it copied) and renews the
 *       lock conditionally ({@link LeaseLock#fence}); a statement that lost the lock, or cannot
 *       prove it holds it, changes nothing in the metastore and fails naming who took it.
 *   <li><b>Remove what you recorded, not where it was.</b> Before its call, a statement records its
 *       own generation's objects (a pending {@link RetireRecord}); after it, the objects its call
 *       took out of the table, as it read them (key and ETag). A later statement removes them once
 *       the record is older than {@value #GRACE}, each only while its ETag still matches and no
 *       location of any table of the metastore holds it; files outside the generations only when
 *       the table owns its location. A run claims its generation in a record before anything lands
 *       in it, so nothing of the mode's is left that no record names.
 *   <li><b>One name, one owner.</b> Every partition gets a directory of its own; a catalog that
 *       maps two partitions to one location is refused, naming them and the fix.
 * </ul>
 */
public final class Publication {

  private static final Logger LOG = LoggerFactory.getLogger(Publication.class);

  /** {@code files} (the default: complete in place) or {@code metastore}. */
  public static final String MODE = "writeonce.publish";

  /** How long superseded generations stay for readers in flight; a Hadoop time duration. */
  public static final String GRACE = "writeonce.publish.grace";

  public static final long DEFAULT_GRACE_MILLIS = TimeUnit.HOURS.toMillis(1);

  /**
   * How long a statement waits for another's publication of the same table. Its generation stays
   * claimed while it waits, whatever the grace period.
   */
  public static final String WAIT = "writeonce.publish.wait";

  public static final long DEFAULT_WAIT_MILLIS = TimeUnit.MINUTES.toMillis(30);

  private static final String COPY_KEYWORD = "_copy_";

  private static final long MAX_COPY_BYTES = 5L * 1024 * 1024 * 1024;

  /** How often a statement copies what was added to a partition while it appended to it. */
  private static final int CATCH_UP_ROUNDS = 3;

  private static final byte[] EMPTY_MARKER =
      "an empty partition location\n".getBytes(StandardCharsets.UTF_8);

  /**
   * Steps a test may cut at: {@code committed}, {@code copied}, {@code published}, {@code retired}.
   */
  public static volatile Consumer<String> stepHook = step -> {};

  private final MetastoreTable table;
  private final Destination root;
  private final String rootPath;
  private final String runId;
  private final String who;
  private final boolean append;
  private final Predicate<String> replacedWhenUnwritten;
  private final long graceMillis;
  private final long leaseMillis;
  private final long waitMillis;
  private final int threads;

  /** Where the last publication spent its time, phase by phase. */
  private final PublicationProfile profile = new PublicationProfile();

  /** The lock's clock, pauses and renewals: the process's, or a simulation's. */
  private LeaseLock.Timing timing = LeaseLock.Timing.PROCESS;

  /** A publication lock the statement took before its jobs ran (a Hive statement's). */
  private LeaseLock held;

  /** This run's record, and the removal of what the records of the table name. */
  private final RetireRecords records;

  /** Whether the table owns its location, once asked. */
  private Boolean owns;

  /** Set before the first call that may change the table: from then on its answer may be lost. */
  private volatile boolean metastoreCalled;

  /** Set while a call has not answered, and left set when it failed: it may still land. */
  private volatile boolean callInDoubt;

  /**
   * @param rootPath the table's root, where generations go
   * @param who the statement, for the lock and messages ({@code Spark job <id>})
   * @param append whether the statement keeps the partitions' current files
   * @param replacedWhenUnwritten which existing partitions the statement replaces even when it
   *     wrote none of their files (a static overwrite's), by fragment
   */
  public Publication(
      MetastoreTable table,
      String rootPath,
      String runId,
      String who,
      boolean append,
      Predicate<String> replacedWhenUnwritten,
      Configuration conf) {
    this.table = table;
    this.rootPath = rootPath;
    this.root = Destination.of(URI.create(rootPath));
    this.runId = runId;
    this.who = who;
    this.append = append;
    this.replacedWhenUnwritten = replacedWhenUnwritten;
    this.graceMillis = graceMillis(conf);
    this.waitMillis = waitMillis(conf);
    CommitterConfig config = CommitterConfig.from(conf);
    this.leaseMillis = config.leaseMillis();
    this.threads = config.commitThreads();
    this.records = new RetireRecords(table, root, runId, who, graceMillis);
  }

  private static long graceMillis(Configuration conf) {
    return conf.getTimeDuration(GRACE, DEFAULT_GRACE_MILLIS, TimeUnit.MILLISECONDS);
  }

  private static long waitMillis(Configuration conf) {
    return conf.getTimeDuration(WAIT, DEFAULT_WAIT_MILLIS, TimeUnit.MILLISECONDS);
  }

  /** Gives the publication lock another clock, pause and renewals: for tests and simulations. */
  public Publication withTiming(LeaseLock.Timing timing) {
    this.timing = timing;
    return this;
  }

  /**
   * Publishes under a publication lock the statement already holds (taken with {@link #lockFor}
   * before its jobs ran); the caller releases it.
   */
  public Publication withLock(LeaseLock lock) {
    this.held = lock;
    return this;
  }

  /** True when the configuration asks for metastore publish mode. */
  public static boolean requested(Configuration conf) {
    String mode = conf.getTrimmed(MODE, "files").toLowerCase(Locale.ROOT);
    return switch (mode) {
      case "files" -> false;
      case "metastore" -> true;
      default ->
          throw new IllegalArgumentException(
              MODE + "=" + mode + ": expected 'files' (complete in place) or 'metastore'");
    };
  }

  /**
   * Takes the publication lock of the table at {@code rootPath}: every statement that changes a
   * table in the mode holds it, those that publish and those that load in place, so that no file
   * lands in a partition between an append's copy of it and its call.
   */
  public static LeaseLock lockFor(
      StoreGateway store, String rootPath, String who, Configuration conf, LeaseLock.Timing timing)
      throws IOException {
    return acquireLock(
        store,
        Destination.of(URI.create(rootPath)),
        rootPath,
        who,
        CommitterConfig.from(conf).leaseMillis(),
        waitMillis(conf),
        timing);
  }

  private static LeaseLock acquireLock(
      StoreGateway store,
      Destination root,
      String rootPath,
      String who,
      long leaseMillis,
      long waitMillis,
      LeaseLock.Timing timing)
      throws IOException {
    String key = root.keyOf(Generations.DIR + LeaseLock.OBJECT_NAME);
    return LeaseLock.acquire(
        new LeaseLock.Request(
            store,
            key,
            root.uriOf(key),
            rootPath,
            who,
            leaseMillis,
            waitMillis,
            WAIT,
            "publish to",
            "Statements that change a table in metastore publish mode run their publications one"
                + " at a time.",
            message -> LOG.info("{}: {}", who, message)),
        timing);
  }

  /** The table's root, where generations go. */
  public String rootPath() {
    return rootPath;
  }

  /** The location of this run's generation of a partition ({@code ""}: the table's). */
  public URI generationOf(String fragment) {
    return uriOf(root.keyOf(Generations.partitionDir(runId, fragment)));
  }

  /**
   * Publishes what the statement wrote, by partition fragment ({@code ""} for an unpartitioned
   * table), records what it superseded and removes what is due.
   */
  public void publish(StoreGateway store, Set<String> written) throws IOException {
    profile.clear();
    long started = System.nanoTime();
    try {
      LeaseLock lock =
          held != null
              ? held
              : acquireLock(
                  store,
                  root,
                  rootPath,
                  who + " publishing to " + table.name(),
                  leaseMillis,
                  waitMillis,
                  timing);
      profile.lap("lock", started, held == null ? 1 : 0);
      try {
        publishHoldingLock(store, lock, written);
        // Under the lock too: no other publication is then between its pending record and its
        // call, the one moment its generation is complete but neither named nor due.
        started = System.nanoTime();
        removeExpired(store);
        profile.lap("removal", started, 1);
      } finally {
        started = System.nanoTime();
        if (held == null && callInDoubt) {
          // A call whose answer was lost may still land: the next statement waits a lease
          // before it reads the table, rather than publishing under it.
          lock.abandon();
        } else if (held == null) {
          lock.release();
        }
        profile.lap("release", started, held == null ? 1 : 0);
      }
      LOG.info("{}: publication profile for table {}: {}", who, table.name(), profile);
    } finally {
      records.stopClaim();
    }
  }

  /** Where the last {@link #publish} spent its time, phase by phase. */
  public PublicationProfile profile() {
    return profile;
  }

  /**
   * Claims this run's generation before anything lands in it: a record ({@code claimed}) that says
   * the directory is this run's, so that a statement that dies before it publishes leaves nothing
   * that no record names. Written when the statement starts, and again right before its files are
   * completed when the engine gives that moment.
   *
   * @throws IOException when the record cannot be written: the statement must not go on
   */
  public void claim(StoreGateway store) throws IOException {
    records.claim(store, leaseMillis, timing);
  }

  /**
   * Removes this run's generation when the statement failed before any metastore call: nothing
   * names it, and it carries this run's id. After a call was made, its answer may have been lost,
   * so the generation is left to the retire records.
   */
  public void discardUnpublished(StoreGateway store) {
    records.stopClaim();
    String generation = root.keyOf(Generations.runDir(runId));
    if (metastoreCalled) {
      LOG.info(
          "{}: failed after its metastore call was made; its generation {} is left to the retire"
              + " records",
          who,
          root.uriOf(generation));
      return;
    }
    try {
      List<String> keys = new ArrayList<>();
      for (ObjectInfo object : store.listObjects(generation)) {
        if (!Generations.inStaging(object.key().substring(generation.length()))) {
          keys.add(object.key());
        }
      }
      store.deleteObjects(keys);
      if (records.claimedOnly()) {
        // Left to lapse: a file still on its way into the generation (a completion an engine
        // queued) lands under a claim, which a later statement acts on after lease and grace.
        LOG.info(
            "{}: its claim {} is left to lapse",
            who,
            root.uriOf(Generations.retiredKey(root, runId)));
      } else {
        // The record goes last, and only as this run last wrote it: while anything of the
        // generation may be left, it names it.
        records.forget(store);
      }
      LOG.info(
          "{}: failed before publishing; removed its {} unpublished objects under {}",
          who,
          keys.size(),
          root.uriOf(generation));
    } catch (IOException | RuntimeException e) {
      LOG.warn(
          "{}: its unpublished generation {} was not removed ({}); its record stays, and a"
              + " statement on {} removes it once the record is {} ms old",
          who,
          root.uriOf(generation),
          e.getMessage(),
          table.name(),
          graceMillis);
    }
  }

  // ---- publishing ------------------------------------------------------------------------------

  /** What the statement changes: the new location of each partition, by what it was before. */
  private final class Change {
    /** New partitions, by fragment, at their generation. */
    final Map<String, String> created = new TreeMap<>();

    /** Existing partitions (or the unpartitioned table, fragment ""), at their new location. */
    final Map<String, String> altered = new TreeMap<>();

    /** Where each altered partition was, as read. */
    final Map<String, URI> before = new TreeMap<>();

    /** Altered partitions whose files the statement appends to (copies into its generation). */
    final Set<String> appended = new TreeSet<>();

    /** What the statement read at each old location, by its key prefix. */
    final Map<String, List<ObjectInfo>> read = new HashMap<>();

    /** This run's own objects: files, copies, empty directories. */
    final List<RetiredObject> own = new ArrayList<>();

    boolean twoSteps() {
      return table.partitioned() && !created.isEmpty() && !altered.isEmpty();
    }
  }

  private void publishHoldingLock(StoreGateway store, LeaseLock lock, Set<String> written)
      throws IOException {
    Change change = new Change();
    try {
      long started = System.nanoTime();
      plan(store, written, change);
      profile.lap("plan", started, written.size());
      step("committed");
      prepare(store, change);
      step("copied");
      fencedCalls(store, lock, change);
    } catch (IOException | RuntimeException e) {
      throw new IOException(
          who
              + ": publishing to table "
              + table.name()
              + " failed: "
              + e.getMessage()
              + ". Its files are complete under "
              + root.uriOf(root.keyOf(Generations.runDir(runId)))
              + " but "
              + (metastoreCalled ? "may be unpublished" : "unpublished")
              + "; readers see the table as it was"
              + (metastoreCalled ? " or whole after the statement" : "")
              + ", and a later statement removes what is unpublished after "
              + GRACE,
          e);
    }
    table.published();
    step("published");
    long started = System.nanoTime();
    List<RetiredObject> superseded = superseded(change);
    // The empty directories: the new partitions' the second call replaced, and those of
    // partitions the engine drops after a static overwrite. Removal leaves them while named.
    for (RetiredObject object : change.own) {
      if (object.key().startsWith(root.keyOf(Generations.runDir(runId) + Generations.EMPTY))) {
        superseded.add(object);
      }
    }
    try {
      if (superseded.isEmpty()) {
        records.forget(store);
      } else {
        records.write(store, RetireRecord.State.SUPERSEDED, List.of(), superseded);
      }
    } catch (IOException | RuntimeException e) {
      LOG.warn(
          "{}: the record of what its call replaced could not be written ({}); its pending record"
              + " names it, and it is removed once this statement's generation is superseded in"
              + " turn",
          who,
          e.getMessage());
    }
    profile.lap("superseded record", started, superseded.size());
    step("retired");
  }

  /** Reads the table and decides each partition's new location. */
  private void plan(StoreGateway store, Set<String> written, Change change) throws IOException {
    if (!table.partitioned()) {
      URI old = table.location();
      change.altered.put("", root.keyOf(Generations.runDir(runId)));
      change.before.put("", old);
      if (append) {
        change.appended.add("");
      }
    } else {
      Map<String, URI> existing = table.partitionLocations();
      Generations.requireOwnLocations(table.name(), existing);
      for (String fragment : written) {
        String target = root.keyOf(Generations.partitionDir(runId, fragment));
        URI old = existing.get(fragment);
        if (old == null) {
          change.created.put(fragment, target);
        } else {
          change.altered.put(fragment, target);
          change.before.put(fragment, old);
          if (append) {
            change.appended.add(fragment);
          }
        }
      }
      if (!append && replacedWhenUnwritten != null) {
        for (Map.Entry<String, URI> entry : existing.entrySet()) {
          if (!written.contains(entry.getKey()) && replacedWhenUnwritten.test(entry.getKey())) {
            change.altered.put(
                entry.getKey(), root.keyOf(Generations.emptyDir(runId, entry.getKey())));
            change.before.put(entry.getKey(), entry.getValue());
          }
        }
      }
    }
    String generation = root.keyOf(Generations.runDir(runId));
    for (ObjectInfo object : store.listObjects(generation)) {
      if (!Generations.inStaging(object.key().substring(generation.length()))) {
        change.own.add(new RetiredObject(object.key(), object.etag()));
      }
    }
  }

  /**
   * Copies what appended partitions hold, reads what the others held, puts the empty directories,
   * and records the run's own objects before the call.
   */
  private void prepare(StoreGateway store, Change change) throws IOException {
    long started = System.nanoTime();
    List<String> read = new ArrayList<>();
    for (Map.Entry<String, URI> old : change.before.entrySet()) {
      boolean appended = change.appended.contains(old.getKey());
      if (appended || recordable(old.getValue()).isPresent()) {
        read.add(old.getKey()); // else nothing of it is copied or recorded: it is not read
      }
    }
    Map<String, List<ObjectInfo>> objects = objectsAt(store, change, read);
    profile.lap("read", started, read.size());
    started = System.nanoTime();
    Map<String, List<ObjectInfo>> copies = new TreeMap<>();
    for (String fragment : read) {
      URI old = change.before.get(fragment);
      change.read.put(prefixOf(old), objects.get(fragment));
      if (change.appended.contains(fragment)) {
        copies.put(fragment, visible(old, objects.get(fragment)));
      }
    }
    profile.lap("copies", started, copyInto(store, copies, change));
    started = System.nanoTime();
    Set<String> empty = new TreeSet<>();
    for (String target : change.altered.values()) {
      if (target.startsWith(root.keyOf(Generations.runDir(runId) + Generations.EMPTY))) {
        empty.add(target);
      }
    }
    if (change.twoSteps()) {
      change.created.keySet().forEach(f -> empty.add(root.keyOf(Generations.emptyDir(runId, f))));
    }
    for (String directory : empty) {
      // A directory marker, so that every reader finds the empty location it is sent to. Not
      // empty itself: Ceph RGW 16 refuses an empty body sent with a trailing checksum.
      change.own.add(new RetiredObject(directory, store.putObject(directory, EMPTY_MARKER, false)));
    }
    profile.lap("markers", started, empty.size());
    started = System.nanoTime();
    // The appended partitions are read again, as late as the record allows: everything this run
    // writes into its generation is written before its pending record, which names it all.
    catchUp(store, change);
    profile.lap("catch-up", started, change.appended.size());
    started = System.nanoTime();
    try {
      records.write(store, RetireRecord.State.PENDING, change.own, superseded(change));
    } catch (StoreException e) {
      if (e.is(ErrorKind.PRECONDITION_FAILED)) {
        // Its claim was taken for lapsed: nothing publishes this generation, so it goes now.
        discardUnpublished(store);
      }
      throw e;
    }
    profile.lap("pending record", started, 1);
  }

  /**
   * Reads the table again, proves the lock, and calls the metastore; refuses when the table changed
   * since it was read.
   */
  private void fencedCalls(StoreGateway store, LeaseLock lock, Change change) throws IOException {
    long started = System.nanoTime();
    requireUnchanged(store, change);
    String action = "call the metastore for table " + table.name();
    lock.fence(action);
    profile.lap("fence", started, 1);
    metastoreCalled = true;
    if (!table.partitioned()) {
      call(() -> table.relocate(uriOf(change.altered.get(""))));
      LOG.info("{}: table {} now reads {}", who, table.name(), root.uriOf(change.altered.get("")));
      return;
    }
    Map<String, URI> created = uris(change.created);
    Map<String, URI> altered = uris(change.altered);
    if (change.twoSteps()) {
      Map<String, URI> placeholders = new LinkedHashMap<>();
      created
          .keySet()
          .forEach(f -> placeholders.put(f, uriOf(root.keyOf(Generations.emptyDir(runId, f)))));
      call(() -> table.addPartitions(placeholders));
      started = System.nanoTime();
      requireUnchanged(store, change);
      lock.fence(action);
      profile.lap("fence", started, 1);
      altered.putAll(created);
      call(() -> table.relocatePartitions(altered));
    } else if (!created.isEmpty()) {
      call(() -> table.addPartitions(created));
    } else if (!altered.isEmpty()) {
      call(() -> table.relocatePartitions(altered));
    }
    LOG.info(
        "{}: published {} partitions of {} ({} new, {} replaced) in {} metastore call{}",
        who,
        created.size() + change.altered.size(),
        table.name(),
        created.size(),
        change.altered.size(),
        change.twoSteps() ? 2 : 1,
        change.twoSteps() ? "s (the new ones added empty first)" : "");
  }

  /** One metastore call that may change the table. */
  private interface MetastoreCall {
    void run() throws IOException;
  }

  /** Makes a call; while it has not answered, its outcome is in doubt. */
  private void call(MetastoreCall call) throws IOException {
    long started = System.nanoTime();
    callInDoubt = true;
    call.run();
    callInDoubt = false;
    profile.lap("metastore", started, 1);
  }

  /**
   * An append copied what its partitions held; a file added since (by a writer outside the mode) is
   * copied too, a few rounds at most. A file that changed or vanished refuses the call: its copy
   * would bring back what another writer replaced.
   */
  private void catchUp(StoreGateway store, Change change) throws IOException {
    for (int round = 0; ; round++) {
      Map<String, List<ObjectInfo>> reads =
          objectsAt(store, change, new ArrayList<>(change.appended));
      Map<String, List<ObjectInfo>> copies = new TreeMap<>();
      for (String fragment : change.appended) {
        URI old = change.before.get(fragment);
        List<ObjectInfo> before = change.read.get(prefixOf(old));
        List<ObjectInfo> now = reads.get(fragment);
        Map<String, String> etags = new HashMap<>();
        now.forEach(object -> etags.put(object.key(), object.etag()));
        Set<String> known = new HashSet<>();
        before.forEach(object -> known.add(object.key()));
        // Only what readers read: another statement's staging under the partition may change.
        for (ObjectInfo object : visible(old, before)) {
          if (!object.etag().equals(etags.get(object.key()))) {
            throw new IOException(
                root.uriOf(object.key())
                    + " was "
                    + (etags.containsKey(object.key()) ? "replaced" : "removed")
                    + " while this statement appended to partition "
                    + partitionName(fragment)
                    + ": another writer changed the partition outside the publication lock, so"
                    + " this statement does not publish its copy. Run it again");
          }
        }
        List<ObjectInfo> fresh = new ArrayList<>();
        for (ObjectInfo object : now) {
          if (!known.contains(object.key())) {
            fresh.add(object);
          }
        }
        List<ObjectInfo> freshVisible = visible(old, fresh);
        if (!freshVisible.isEmpty()) {
          if (round >= CATCH_UP_ROUNDS) {
            throw new IOException(
                "files keep arriving in partition "
                    + partitionName(fragment)
                    + " at "
                    + old
                    + " while this statement appends to it (another writer outside the"
                    + " publication lock); it does not publish. Run it again once they stop");
          }
          copies.put(fragment, freshVisible);
        }
        List<ObjectInfo> all = new ArrayList<>(before);
        all.addAll(fresh);
        change.read.put(prefixOf(old), all);
      }
      if (copies.isEmpty()) {
        return;
      }
      copyInto(store, copies, change);
    }
  }

  /** Refuses the call when a partition it replaces moved, or one it adds appeared, since read. */
  private void requireUnchanged(StoreGateway store, Change change) throws IOException {
    if (!table.partitioned()) {
      URI now = table.location();
      URI before = change.before.get("");
      if (!Generations.normalized(now).equals(Generations.normalized(before))) {
        throw changed("the table", before, now);
      }
      requireSameFiles(store, change);
      return;
    }
    Map<String, URI> now = table.partitionLocations();
    for (Map.Entry<String, URI> before : change.before.entrySet()) {
      URI current = now.get(before.getKey());
      if (current == null
          || !Generations.normalized(current).equals(Generations.normalized(before.getValue()))) {
        throw changed("partition " + partitionName(before.getKey()), before.getValue(), current);
      }
    }
    requireSameFiles(store, change);
    for (String fragment : change.created.keySet()) {
      URI current = now.get(fragment);
      if (current != null
          && !Generations.normalized(current)
              .equals(
                  Generations.normalized(
                      uriOf(root.keyOf(Generations.emptyDir(runId, fragment)))))) {
        throw changed("partition " + partitionName(fragment), null, current);
      }
    }
  }

  /**
   * An appended partition must hold what the statement copied from it, right before the call: a
   * file that arrived after the last catch-up (a writer outside the publication lock) would drop
   * out of the table with the call, and it is no longer copied, since the pending record is
   * written.
   */
  private void requireSameFiles(StoreGateway store, Change change) throws IOException {
    Map<String, List<ObjectInfo>> reads =
        objectsAt(store, change, new ArrayList<>(change.appended));
    for (String fragment : change.appended) {
      URI old = change.before.get(fragment);
      Map<String, String> copied = new HashMap<>();
      for (ObjectInfo object : visible(old, change.read.get(prefixOf(old)))) {
        copied.put(object.key(), object.etag());
      }
      Map<String, String> now = new HashMap<>();
      for (ObjectInfo object : visible(old, reads.get(fragment))) {
        now.put(object.key(), object.etag());
      }
      if (!now.equals(copied)) {
        throw new IOException(
            "the files of partition "
                + partitionName(fragment)
                + " at "
                + old
                + " changed after this statement copied them (another writer outside the"
                + " publication lock): it does not publish, so that no file drops out of table "
                + table.name()
                + ". Run it again");
      }
    }
  }

  private IOException changed(String what, URI before, URI now) {
    return new IOException(
        what
            + " of table "
            + table.name()
            + (before == null ? " did not exist" : " was at " + before)
            + " when this statement read it, and is "
            + (now == null ? "gone" : "at " + now)
            + " now: another statement or tool changed the table meanwhile, so this statement does"
            + " not publish. Run it again");
  }

  /** The objects this statement's call took out of the table, as it read them. */
  private List<RetiredObject> superseded(Change change) throws IOException {
    List<RetiredObject> superseded = new ArrayList<>();
    for (URI old : change.before.values()) {
      Optional<String> prefix = recordable(old);
      if (prefix.isEmpty()) {
        continue;
      }
      boolean generation = prefix.get().startsWith(root.keyOf(Generations.DIR));
      for (ObjectInfo object : change.read.getOrDefault(prefix.get(), List.of())) {
        String relative = object.key().substring(prefix.get().length());
        boolean ours =
            generation ? !Generations.inStaging(relative) : Generations.visibleToReaders(relative);
        if (ours) {
          superseded.add(new RetiredObject(object.key(), object.etag()));
        }
      }
    }
    return superseded;
  }

  /**
   * The key prefix of an old location whose objects a record may name: a generation of this table,
   * or, when the table owns its location, a directory under its root. Empty for anything else,
   * whose files stay where they are.
   */
  private Optional<String> recordable(URI location) throws IOException {
    Optional<String> prefix = underRoot(location);
    if (prefix.isEmpty() || prefix.get().startsWith(root.keyOf(Generations.DIR))) {
      return prefix;
    }
    if (owns == null) {
      owns = table.ownsLocation();
      if (!owns) {
        LOG.info(
            "{}: table {} does not own its location: the files it held outside its generations"
                + " stay where they are",
            who,
            table.name());
      }
    }
    return owns ? prefix : Optional.empty();
  }

  /**
   * Copies the files of each appended partition (by fragment) into its new generation, inside the
   * store, all at once. A name the statement already wrote there is kept; the copy takes the first
   * free {@code _copy_K} name instead.
   *
   * @return how many files were copied
   */
  private int copyInto(StoreGateway store, Map<String, List<ObjectInfo>> byFragment, Change change)
      throws IOException {
    record Copy(String source, String target) {}
    List<Copy> copies = new ArrayList<>();
    for (Map.Entry<String, List<ObjectInfo>> entry : byFragment.entrySet()) {
      String fragment = entry.getKey();
      URI location = change.before.get(fragment);
      Destination source = Destination.of(location);
      if (!source.bucket().equals(root.bucket())) {
        throw new IOException(
            "appending to "
                + table.name()
                + ": its data at "
                + location
                + " is in another bucket than the table's root "
                + rootPath
                + "; "
                + MODE
                + "=metastore copies a partition's files into the new generation inside one"
                + " bucket");
      }
      String targetPrefix = change.altered.get(fragment);
      Set<String> taken = new HashSet<>();
      for (RetiredObject object : change.own) {
        if (object.key().startsWith(targetPrefix)) {
          taken.add(object.key().substring(targetPrefix.length()));
        }
      }
      String sourcePrefix = prefixOf(location);
      for (ObjectInfo object : entry.getValue()) {
        String relative = object.key().substring(sourcePrefix.length());
        if (object.size() > MAX_COPY_BYTES) {
          throw new IOException(
              "appending to "
                  + table.name()
                  + ": "
                  + root.uriOf(object.key())
                  + " is larger than one COPY takes (5 GiB)");
        }
        String name = freeName(relative, taken);
        taken.add(name);
        copies.add(new Copy(object.key(), targetPrefix + name));
      }
      LOG.info(
          "{}: copying {} files of {} into the new generation {}",
          who,
          entry.getValue().size(),
          location,
          root.uriOf(targetPrefix));
    }
    Map<Copy, String> etags = new java.util.concurrent.ConcurrentHashMap<>();
    try {
      inParallel(
          "copying appended partitions' files",
          copies,
          copy -> etags.put(copy, store.copyObject(copy.source(), copy.target())));
    } finally {
      // Recorded in the order planned, whatever order they landed in; when one failed, those
      // that landed, as they were recorded when copies went one after the other.
      for (Copy copy : copies) {
        String etag = etags.get(copy);
        if (etag != null) {
          change.own.add(new RetiredObject(copy.target(), etag));
        }
      }
    }
    return copies.size();
  }

  /** The objects at each partition's old location, by fragment, read all at once. */
  private Map<String, List<ObjectInfo>> objectsAt(
      StoreGateway store, Change change, List<String> fragments) throws IOException {
    Map<String, List<ObjectInfo>> objects = new java.util.concurrent.ConcurrentHashMap<>();
    inParallel(
        "reading partitions",
        fragments,
        fragment -> objects.put(fragment, objectsAt(store, change.before.get(fragment))));
    return objects;
  }

  /**
   * Runs the work for each item on the commit threads ({@link CommitterConfig#COMMIT_THREADS}); one
   * after the other under a simulation's timing, whose scheduler runs one thread at a time.
   */
  private <T> void inParallel(String what, List<T> items, Tasks.Action<T> action)
      throws IOException {
    if (items.size() <= 1 || timing != LeaseLock.Timing.PROCESS) {
      for (T item : items) {
        action.run(item);
      }
      return;
    }
    try (UploadPool pool =
        new UploadPool(who + " publishing to " + table.name(), Math.min(threads, items.size()))) {
      Tasks.runStoppingOnFailure(pool, what, items, action);
    }
  }

  /** The relative name itself when free, else {@code <base>_copy_K<extension>}, as Hive names. */
  static String freeName(String relative, Set<String> taken) {
    if (!taken.contains(relative)) {
      return relative;
    }
    int slash = relative.lastIndexOf('/');
    int dot = relative.lastIndexOf('.');
    boolean extension = dot > slash + 1;
    String base = extension ? relative.substring(0, dot) : relative;
    String suffix = extension ? relative.substring(dot) : "";
    for (int copy = 1; ; copy++) {
      String candidate = base + COPY_KEYWORD + copy + suffix;
      if (!taken.contains(candidate)) {
        return candidate;
      }
    }
  }

  /**
   * The objects at a location. The table's root holds its generations too: those are skipped rather
   * than listed.
   */
  private List<ObjectInfo> objectsAt(StoreGateway store, URI location) throws IOException {
    if (!Generations.inBucket(location, root.bucket())) {
      return List.of();
    }
    String prefix = prefixOf(location);
    if (prefix.equals(root.prefix())) {
      return store
          .listObjectsUpTo(prefix, Integer.MAX_VALUE, root.keyOf(Generations.DIR))
          .orElseThrow();
    }
    return store.listObjects(prefix);
  }

  /** What readers read of a location's objects: no hidden names, no directory markers. */
  private List<ObjectInfo> visible(URI location, List<ObjectInfo> objects) {
    String prefix = prefixOf(location);
    List<ObjectInfo> visible = new ArrayList<>();
    for (ObjectInfo object : objects) {
      String relative = object.key().substring(prefix.length());
      if (!relative.isEmpty()
          && !relative.endsWith("/")
          && Generations.visibleToReaders(relative)) {
        visible.add(object);
      }
    }
    return visible;
  }

  /**
   * Acts on the records older than the grace period (see {@link RetireRecords}); a failure is only
   * logged.
   */
  public void removeExpired(StoreGateway store) {
    records.removeDue(store);
  }

  // ---- names -----------------------------------------------------------------------------------

  private Map<String, URI> uris(Map<String, String> keys) {
    Map<String, URI> uris = new LinkedHashMap<>();
    keys.forEach((fragment, key) -> uris.put(fragment, uriOf(key)));
    return uris;
  }

  private static String partitionName(String fragment) {
    return fragment.isEmpty() ? "(the table)" : "(" + Generations.spec(fragment) + ")";
  }

  /** A location's key prefix, ending in '/'. */
  private static String prefixOf(URI location) {
    return Destination.of(location).prefix();
  }

  /** The key prefix of a location under the table's root, which a record may name. */
  private Optional<String> underRoot(URI location) {
    if (Generations.inBucket(location, root.bucket())
        && prefixOf(location).startsWith(root.prefix())) {
      return Optional.of(prefixOf(location));
    }
    LOG.info(
        "{}: {} lies outside the table's root {}; it is left for its owner",
        who,
        location,
        rootPath);
    return Optional.empty();
  }

  private URI uriOf(String key) {
    String uri = root.uriOf(key);
    return new Path(uri.endsWith("/") ? uri.substring(0, uri.length() - 1) : uri).toUri();
  }

  private void step(String name) {
    stepHook.accept(name);
  }
}
