package dev.writeonce.core.publish;

import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.lease.LeaseLock;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.StoreGateway;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
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
 *   <li>A static overwrite points the matching partitions it did not write at an empty directory in
 *       the same call; the engine drops them afterwards, which changes nothing a reader sees.
 *   <li>Only new partitions: one {@code add_partitions}. Only existing ones: one {@code
 *       alter_partitions}. Both: the new ones are added pointing at the empty directory (no reader
 *       sees a difference), then one {@code alter_partitions} switches them all. An unpartitioned
 *       table: one {@code alter_table} of its location.
 * </ul>
 *
 * <p>After the call, {@code _generations/_retired/<run>} names the locations the statement
 * superseded. A later statement removes what a retire record names once the record is older than
 * {@value #GRACE} on the store's clock, except anything under a location the metastore names at
 * that moment. Publications and removals of one table run under its publication lock, whichever
 * engine runs them.
 */
public final class Publication {

  private static final Logger LOG = LoggerFactory.getLogger(Publication.class);

  /** {@code files} (the default: complete in place) or {@code metastore}. */
  public static final String MODE = "writeonce.publish";

  /** How long superseded generations stay for readers in flight; a Hadoop time duration. */
  public static final String GRACE = "writeonce.publish.grace";

  public static final long DEFAULT_GRACE_MILLIS = TimeUnit.HOURS.toMillis(1);

  /** How long a statement waits for another's publication of the same table. */
  public static final String WAIT = "writeonce.publish.wait";

  public static final long DEFAULT_WAIT_MILLIS = TimeUnit.MINUTES.toMillis(30);

  private static final String COPY_KEYWORD = "_copy_";

  /** The first line of a record written before the metastore call. */
  static final String PENDING = "# pending: names the generation of a statement before its call";

  private static final long MAX_COPY_BYTES = 5L * 1024 * 1024 * 1024;

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

  /** The lock's clock, pauses and renewals: the process's, or a simulation's. */
  private LeaseLock.Timing timing = LeaseLock.Timing.PROCESS;

  /** The table's publication lock while this statement holds it. */
  private LeaseLock lock;

  /** Set before the first call that may change the table: from then on its answer may be lost. */
  private volatile boolean metastoreCalled;

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
    this.graceMillis = conf.getTimeDuration(GRACE, DEFAULT_GRACE_MILLIS, TimeUnit.MILLISECONDS);
    this.waitMillis = conf.getTimeDuration(WAIT, DEFAULT_WAIT_MILLIS, TimeUnit.MILLISECONDS);
    this.leaseMillis = CommitterConfig.from(conf).leaseMillis();
  }

  /** Gives the publication lock another clock, pause and renewals: for tests and simulations. */
  public Publication withTiming(LeaseLock.Timing timing) {
    this.timing = timing;
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
   * table), records what it superseded and removes generations whose grace period has passed.
   */
  public void publish(StoreGateway store, Set<String> written) throws IOException {
    // One publication of a table at a time: an append copies what the partition holds when it
    // runs, and two appends publishing at once would each drop the other's files.
    String lockKey = root.keyOf(Generations.DIR + LeaseLock.OBJECT_NAME);
    lock =
        LeaseLock.acquire(
            new LeaseLock.Request(
                store,
                lockKey,
                root.uriOf(lockKey),
                rootPath,
                who + " publishing to " + table.name(),
                leaseMillis,
                waitMillis,
                WAIT,
                "publish to",
                "Statements publish to one table one at a time.",
                message -> LOG.info("{}: {}", who, message)),
            timing);
    try {
      publishHoldingLock(store, written);
      // Under the lock too: no other publication is then between its record and its call, the
      // one moment its record names a generation that is complete but not yet published.
      removeExpired(store);
    } finally {
      lock.release();
      lock = null;
    }
  }

  /**
   * Removes this run's generation when the statement failed before any metastore call: nothing
   * names it, and it carries this run's id. After a call was made, its answer may have been lost,
   * so the generation is left to the retire records.
   */
  public void discardUnpublished(StoreGateway store) {
    if (metastoreCalled) {
      LOG.info(
          "{}: failed after its metastore call was made; its generation {} is left to the retire"
              + " records",
          who,
          root.uriOf(root.keyOf(Generations.runDir(runId))));
      return;
    }
    try {
      List<String> keys = new ArrayList<>();
      for (ObjectInfo object : store.listObjects(root.keyOf(Generations.runDir(runId)))) {
        keys.add(object.key());
      }
      keys.add(Generations.retiredKey(root, runId));
      store.deleteObjects(keys);
      LOG.info(
          "{}: failed before publishing; removed its {} unpublished objects under {}",
          who,
          keys.size() - 1,
          root.uriOf(root.keyOf(Generations.runDir(runId))));
    } catch (IOException | RuntimeException e) {
      LOG.warn(
          "{}: its unpublished generation {} was not removed ({}); a later statement's retire"
              + " records do not name it, remove it by hand",
          who,
          root.uriOf(root.keyOf(Generations.runDir(runId))),
          e.getMessage());
    }
  }

  private void publishHoldingLock(StoreGateway store, Set<String> written) throws IOException {
    // Until the call lands, the record names this run's own generation: a process that dies
    // before it leaves the generation for a later statement to remove. Anything a location names
    // is never removed, so a call that landed keeps its generation.
    retire(store, List.of(root.keyOf(Generations.runDir(runId))), true);
    step("committed");
    List<String> superseded = new ArrayList<>();
    try {
      if (table.partitioned()) {
        publishPartitions(store, written, superseded);
      } else {
        publishTable(store, superseded);
      }
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
    retire(store, superseded, false);
    step("retired");
  }

  /** Refuses the metastore call when the lock lapsed and another statement took it over. */
  private void ensureLockHeld() throws IOException {
    if (lock != null && lock.isLost()) {
      throw new IOException(
          "the publication lock of "
              + rootPath
              + " lapsed and was taken over by another statement before the metastore call: the"
              + " partitions this statement copied may be stale, so it does not publish (raise "
              + CommitterConfig.JOB_LEASE
              + ")");
    }
  }

  private void publishTable(StoreGateway store, List<String> superseded) throws IOException {
    URI old = table.location();
    String target = root.keyOf(Generations.runDir(runId));
    if (append) {
      copyInto(store, old, target);
      retire(store, List.of(root.keyOf(Generations.runDir(runId))), true);
    }
    step("copied");
    ensureLockHeld();
    metastoreCalled = true;
    table.relocate(uriOf(target));
    underRoot(old).ifPresent(superseded::add);
    LOG.info("{}: table {} now reads {}", who, table.name(), root.uriOf(target));
  }

  private void publishPartitions(StoreGateway store, Set<String> written, List<String> superseded)
      throws IOException {
    Map<String, URI> existing = table.partitionLocations();
    String emptyKey = root.keyOf(Generations.runDir(runId) + Generations.EMPTY);
    Map<String, URI> created = new LinkedHashMap<>();
    Map<String, URI> altered = new LinkedHashMap<>();
    for (String fragment : new TreeSet<>(written)) {
      String target = root.keyOf(Generations.partitionDir(runId, fragment));
      URI old = existing.get(fragment);
      if (old == null) {
        created.put(fragment, uriOf(target));
      } else {
        if (append) {
          copyInto(store, old, target);
        }
        altered.put(fragment, uriOf(target));
        underRoot(old).ifPresent(superseded::add);
      }
    }
    boolean emptied = false;
    if (!append && replacedWhenUnwritten != null) {
      for (Map.Entry<String, URI> entry : existing.entrySet()) {
        if (!written.contains(entry.getKey()) && replacedWhenUnwritten.test(entry.getKey())) {
          altered.put(entry.getKey(), uriOf(emptyKey));
          emptied = true;
          underRoot(entry.getValue()).ifPresent(superseded::add);
        }
      }
    }
    if (append && !altered.isEmpty()) {
      // Copies take time: the record's age must count from just before the call.
      retire(store, List.of(root.keyOf(Generations.runDir(runId))), true);
    }
    step("copied");
    ensureLockHeld();
    boolean twoSteps = !created.isEmpty() && !altered.isEmpty();
    if (twoSteps || emptied) {
      // A directory marker, so that every reader finds the empty location it is sent to. Not
      // empty itself: Ceph RGW 16 refuses an empty body sent with a trailing checksum.
      store.putObject(emptyKey, EMPTY_MARKER, false);
    }
    metastoreCalled = true;
    if (twoSteps) {
      Map<String, URI> pending = new LinkedHashMap<>();
      created.keySet().forEach(fragment -> pending.put(fragment, uriOf(emptyKey)));
      table.addPartitions(pending);
      altered.putAll(created);
      table.relocatePartitions(altered);
    } else if (!created.isEmpty()) {
      table.addPartitions(created);
    } else if (!altered.isEmpty()) {
      table.relocatePartitions(altered);
    }
    LOG.info(
        "{}: published {} partitions of {} ({} new, {} replaced) in {} metastore call{}",
        who,
        created.size() + altered.size(),
        table.name(),
        created.size(),
        altered.size(),
        twoSteps ? 2 : 1,
        twoSteps ? "s (the new ones added empty first)" : "");
  }

  /**
   * Copies the files a location holds into the new generation, inside the store. A name the
   * statement already wrote there is kept; the copy takes the first free {@code _copy_K} name.
   */
  private void copyInto(StoreGateway store, URI location, String targetPrefix) throws IOException {
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
              + "=metastore copies a partition's files into the new generation inside one bucket");
    }
    Set<String> taken = new HashSet<>();
    for (ObjectInfo object : store.listObjects(targetPrefix)) {
      taken.add(object.key().substring(targetPrefix.length()));
    }
    int copied = 0;
    for (ObjectInfo object : store.listObjects(source.prefix())) {
      String relative = object.key().substring(source.prefix().length());
      if (relative.isEmpty() || relative.endsWith("/") || !Generations.visibleToReaders(relative)) {
        continue;
      }
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
      store.copyObject(object.key(), targetPrefix + name);
      copied++;
    }
    LOG.info(
        "{}: {} files of {} copied into the new generation {}",
        who,
        copied,
        location,
        root.uriOf(targetPrefix));
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
   * Writes the record naming what this statement superseded; a failure only leaves them. A pending
   * record (written before the call, naming the statement's own generation) starts with {@value
   * #PENDING}: its age says nothing of when that generation stopped being read.
   */
  private void retire(StoreGateway store, List<String> prefixes, boolean pending) {
    // Written even when empty: it replaces the record naming this run's own generation.
    String text =
        (pending ? PENDING + "\n" : "") + String.join("\n", new LinkedHashSet<>(prefixes)) + "\n";
    String key = Generations.retiredKey(root, runId);
    try {
      store.putObject(key, text.getBytes(StandardCharsets.UTF_8), false);
    } catch (IOException | RuntimeException e) {
      LOG.warn(
          "{}: the record of the {} locations it superseded could not be written to {} ({});"
              + " they stay until removed by hand: {}",
          who,
          prefixes.size(),
          root.uriOf(key),
          e.getMessage(),
          prefixes);
    }
  }

  /**
   * Removes what retire records older than the grace period name, except anything under a location
   * the metastore names now; then the records. Costs one LIST when nothing is due.
   */
  public void removeExpired(StoreGateway store) {
    try {
      List<ObjectInfo> records = store.listObjects(root.keyOf(Generations.RETIRED));
      long now = store.storeNowMillis();
      List<ObjectInfo> due = new ArrayList<>();
      for (ObjectInfo record : records) {
        if (now - record.lastModifiedMillis() >= graceMillis
            && !record.key().equals(Generations.retiredKey(root, runId))) {
          due.add(record);
        }
      }
      if (due.isEmpty()) {
        return;
      }
      List<String> live = liveLocationPrefixes();
      int removed = 0;
      int restarted = 0;
      for (ObjectInfo record : due) {
        Optional<byte[]> text = store.getObject(record.key());
        if (text.isEmpty()) {
          continue; // another statement removed it
        }
        List<String> lines = List.of(new String(text.get(), StandardCharsets.UTF_8).split("\n"));
        if (!lines.isEmpty() && lines.get(0).equals(PENDING)) {
          // The statement never wrote its record after the call: it failed, died, or lost the
          // answer of a call that landed. Readers may have read its generation until just now, so
          // the grace starts again from here, once no location names it; while one does, the
          // record waits.
          List<String> named = lines.subList(1, lines.size());
          boolean read =
              named.stream()
                  .anyMatch(
                      line ->
                          !line.isBlank()
                              && live.stream().anyMatch(prefix -> prefix.startsWith(line)));
          if (!read) {
            store.putObject(
                record.key(),
                (String.join("\n", named) + "\n").getBytes(StandardCharsets.UTF_8),
                false);
            restarted++;
          }
          continue;
        }
        List<String> doomed = new ArrayList<>();
        for (String line : lines) {
          if (line.isBlank() || !line.startsWith(root.prefix())) {
            continue; // only what lies under this table's root is this table's to remove
          }
          // A generation is removed whole but for the staging directories of statements still
          // writing through it (Hive stages a partition's files under its location); an older
          // location only of what readers would read.
          boolean generation = line.startsWith(root.keyOf(Generations.DIR));
          for (ObjectInfo object : store.listObjects(line)) {
            String relative = object.key().substring(line.length());
            boolean ours =
                generation
                    ? !Generations.inStaging(relative)
                    : Generations.visibleToReaders(relative);
            if (ours && live.stream().noneMatch(object.key()::startsWith)) {
              doomed.add(object.key());
            }
          }
        }
        if (!doomed.isEmpty()) {
          store.deleteObjects(doomed);
        }
        store.deleteObjects(List.of(record.key()));
        removed += doomed.size();
      }
      LOG.info(
          "{}: removed {} files of {} superseded generations of {}, older than {} ms; {} left by"
              + " statements that never recorded their end wait another {} ms",
          who,
          removed,
          due.size() - restarted,
          table.name(),
          graceMillis,
          restarted,
          graceMillis);
    } catch (IOException | RuntimeException e) {
      LOG.warn(
          "{}: superseded generations of {} not removed this time: {}",
          who,
          table.name(),
          e.getMessage());
    }
  }

  /** Key prefixes of the locations readers are sent to now, in the root's bucket. */
  private List<String> liveLocationPrefixes() throws IOException {
    List<URI> locations = new ArrayList<>();
    if (table.partitioned()) {
      locations.addAll(table.partitionLocations().values());
    } else {
      locations.add(table.location());
    }
    List<String> prefixes = new ArrayList<>();
    for (URI location : locations) {
      Destination destination = Destination.of(location);
      if (destination.bucket().equals(root.bucket())) {
        prefixes.add(destination.prefix());
      }
    }
    return prefixes;
  }

  /** The key prefix of a location under the table's root, which a retire record may name. */
  private Optional<String> underRoot(URI location) {
    Destination destination = Destination.of(location);
    if (destination.bucket().equals(root.bucket())
        && destination.prefix().startsWith(root.prefix())) {
      return Optional.of(destination.prefix());
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
