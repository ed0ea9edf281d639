package dev.writeonce.spark;

import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.StoreGateway;
import dev.writeonce.shim.InsertLockHolder;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
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
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.catalyst.catalog.CatalogStorageFormat;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.catalyst.catalog.CatalogTablePartition;
import org.apache.spark.sql.catalyst.catalog.ExternalCatalog;
import org.apache.spark.sql.catalyst.trees.TreeNode;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.execution.QueryExecution;
import org.apache.spark.sql.execution.SQLExecution;
import org.apache.spark.sql.execution.command.DataWritingCommandExec;
import org.apache.spark.sql.execution.datasources.InsertIntoHadoopFsRelationCommand;
import org.apache.spark.sql.execution.datasources.PartitioningUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Metastore publish mode ({@value #MODE}{@code =metastore}): a statement into an existing catalog
 * table completes its uploads into fresh directories named by its run id (see {@link Generations}),
 * then makes them the table's data with one metastore call, so that a reader going through the
 * metastore sees the table before or after the statement, never a mix and never a file that
 * vanishes under it.
 *
 * <ul>
 *   <li>Written partitions point at the new generation; an append copies the partition's current
 *       files into it first (one COPY each, inside the store), because a location names one
 *       directory.
 *   <li>A static overwrite points the matching partitions it did not write at an empty directory in
 *       the same call; Spark drops them afterwards, which changes nothing a reader sees.
 *   <li>Only new partitions: one {@code add_partitions}. Only existing ones: one {@code
 *       alter_partitions}. Both: the new ones are added pointing at the empty directory (no reader
 *       sees a difference), then one {@code alter_partitions} switches them all. An unpartitioned
 *       table: one {@code alter_table} of its location.
 * </ul>
 *
 * <p>After the call, {@code _generations/_retired/<run>} names the locations the statement
 * superseded. A later statement removes what a retire record names once the record is older than
 * {@value #GRACE} on the store's clock, except anything under a location the metastore names at
 * that moment.
 */
final class MetastorePublication {

  private static final Logger LOG = LoggerFactory.getLogger(MetastorePublication.class);

  /** {@code files} (the default: complete in place) or {@code metastore}. */
  static final String MODE = "writeonce.publish";

  /** How long superseded generations stay for readers in flight; a Hadoop time duration. */
  static final String GRACE = "writeonce.publish.grace";

  private static final byte[] EMPTY_MARKER =
      "an empty partition location\n".getBytes(StandardCharsets.UTF_8);

  static final long DEFAULT_GRACE_MILLIS = TimeUnit.HOURS.toMillis(1);

  /** How long a statement waits for another's publication of the same table. */
  static final String WAIT = "writeonce.publish.wait";

  static final long DEFAULT_WAIT_MILLIS = TimeUnit.MINUTES.toMillis(30);

  /**
   * Steps a test may cut at: {@code committed}, {@code copied}, {@code published}, {@code retired}.
   */
  static volatile Consumer<String> stepHook = step -> {};

  private final ExternalCatalog catalog;
  private final org.apache.spark.sql.catalyst.TableIdentifier identifier;
  private final String database;
  private final String table;
  private final Destination root;
  private final String rootPath;
  private final String runId;
  private final boolean append;
  private final boolean dynamic;
  private final Map<String, String> staticSpec;
  private final long graceMillis;
  private final long leaseMillis;
  private final long waitMillis;

  /** The table's publication lock while this statement holds it. */
  private InsertLockHolder lock;

  private MetastorePublication(
      ExternalCatalog catalog,
      CatalogTable definition,
      String rootPath,
      String runId,
      InsertIntoHadoopFsRelationCommand insert,
      Configuration conf) {
    this.catalog = catalog;
    this.identifier = definition.identifier();
    this.database = definition.identifier().database().get();
    this.table = definition.identifier().table();
    this.rootPath = rootPath;
    this.root = Destination.of(URI.create(rootPath));
    this.runId = runId;
    this.append = insert.mode() == SaveMode.Append;
    this.dynamic = insert.dynamicPartitionOverwrite();
    this.staticSpec = CollectionConverters.asJava(insert.staticPartitions());
    this.graceMillis = conf.getTimeDuration(GRACE, DEFAULT_GRACE_MILLIS, TimeUnit.MILLISECONDS);
    this.waitMillis = conf.getTimeDuration(WAIT, DEFAULT_WAIT_MILLIS, TimeUnit.MILLISECONDS);
    this.leaseMillis = CommitterConfig.from(conf).leaseMillis();
  }

  /** True when the configuration asks for metastore publish mode. */
  static boolean requested(Configuration conf) {
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
   * The publication of the statement now running in this driver, when the mode is asked for and the
   * statement inserts into an existing catalog table. A statement that creates its table (CTAS, a
   * first saveAsTable) is published by the table's creation itself and commits in place.
   */
  static Optional<MetastorePublication> forStatement(
      Configuration conf, String runId, String path) {
    Optional<InsertIntoHadoopFsRelationCommand> insert = runningInsert();
    if (insert.isEmpty() || insert.get().catalogTable().isEmpty()) {
      LOG.info(
          "Job {}: {}=metastore applies to inserts into catalog tables; {} is not one, so it"
              + " commits in place",
          runId,
          MODE,
          path);
      return Optional.empty();
    }
    CatalogTable named = insert.get().catalogTable().get();
    ExternalCatalog catalog = SparkSession.active().sharedState().externalCatalog();
    String database = named.identifier().database().get();
    if (!catalog.tableExists(database, named.identifier().table())) {
      LOG.info("Job {}: table {} is being created: it commits in place", runId, named.identifier());
      return Optional.empty();
    }
    CatalogTable definition = catalog.getTable(database, named.identifier().table());
    return Optional.of(
        new MetastorePublication(
            catalog, definition, Generations.rootOf(path), runId, insert.get(), conf));
  }

  /** The insert command of the SQL execution running on this thread. */
  private static Optional<InsertIntoHadoopFsRelationCommand> runningInsert() {
    String id =
        SparkSession.active().sparkContext().getLocalProperty(SQLExecution.EXECUTION_ID_KEY());
    if (id == null) {
      return Optional.empty();
    }
    QueryExecution execution = SQLExecution.getQueryExecution(Long.parseLong(id));
    if (execution == null) {
      return Optional.empty();
    }
    Optional<InsertIntoHadoopFsRelationCommand> found = insertIn(execution.logical());
    return found.isPresent() ? found : insertIn(execution.executedPlan());
  }

  private static Optional<InsertIntoHadoopFsRelationCommand> insertIn(Object node) {
    if (node instanceof InsertIntoHadoopFsRelationCommand insert) {
      return Optional.of(insert);
    }
    if (node instanceof DataWritingCommandExec exec) {
      return insertIn(exec.cmd());
    }
    if (node instanceof TreeNode<?> tree) {
      scala.collection.Iterator<?> children = tree.children().iterator();
      while (children.hasNext()) {
        Optional<InsertIntoHadoopFsRelationCommand> found = insertIn(children.next());
        if (found.isPresent()) {
          return found;
        }
      }
    }
    return Optional.empty();
  }

  /** The table's root, where generations go. */
  String rootPath() {
    return rootPath;
  }

  /** The partition path of each partition location, for writes Spark sends to custom locations. */
  HashMap<String, String> locationFragments() {
    HashMap<String, String> fragments = new HashMap<>();
    CatalogTable definition = catalog.getTable(database, table);
    if (definition.partitionColumnNames().isEmpty()) {
      return fragments;
    }
    for (CatalogTablePartition partition : partitions()) {
      fragments.put(
          normalized(partition.location()),
          PartitioningUtils.getPathFragment(partition.spec(), definition.partitionSchema()));
    }
    return fragments;
  }

  /**
   * Publishes what the committed job wrote, by partition path ({@code ""} for an unpartitioned
   * table), records what it superseded and removes generations whose grace period has passed.
   */
  void publish(StoreGateway store, Set<String> written) throws IOException {
    // One publication of a table at a time: an append copies what the partition holds when it
    // runs, and two appends publishing at once would each drop the other's files.
    String lockKey = root.keyOf(Generations.DIR + InsertLockHolder.OBJECT_NAME);
    lock =
        InsertLockHolder.acquire(
            store,
            lockKey,
            root.uriOf(lockKey),
            rootPath,
            "Spark job " + runId + " publishing to " + database + "." + table,
            leaseMillis,
            waitMillis,
            WAIT,
            message -> LOG.info("Job {}: {}", runId, message));
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

  private void publishHoldingLock(StoreGateway store, Set<String> written) throws IOException {
    // Until the call lands, the record names this run's own generation: a process that dies
    // before it leaves the generation for a later statement to remove. Anything a location names
    // is never removed, so a call that landed keeps its generation.
    retire(store, List.of(root.keyOf(Generations.runDir(runId))));
    step("committed");
    CatalogTable definition = catalog.getTable(database, table);
    List<String> superseded = new ArrayList<>();
    try {
      if (definition.partitionColumnNames().isEmpty()) {
        publishTable(store, definition, superseded);
      } else {
        publishPartitions(store, definition, written, superseded);
      }
    } catch (IOException | RuntimeException e) {
      throw new IOException(
          "publishing job "
              + runId
              + " to table "
              + database
              + "."
              + table
              + " failed: "
              + e.getMessage()
              + ". Its files are complete under "
              + root.uriOf(root.keyOf(Generations.runDir(runId)))
              + " but unpublished; readers see the table as it was, and a later statement removes"
              + " them after "
              + GRACE,
          e);
    }
    // This session's cached relation names the old location of an unpartitioned table.
    SparkSession.active().sessionState().catalog().refreshTable(identifier);
    step("published");
    retire(store, superseded);
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

  private void publishTable(StoreGateway store, CatalogTable definition, List<String> superseded)
      throws IOException {
    URI old = definition.location();
    String target = root.keyOf(Generations.runDir(runId));
    if (append) {
      copyInto(store, old, target);
      retire(store, List.of(root.keyOf(Generations.runDir(runId))));
    }
    step("copied");
    ensureLockHeld();
    CatalogStorageFormat storage =
        CaseClasses.copyWith(definition.storage(), 0, Option.apply(uriOf(target)));
    catalog.alterTable(CaseClasses.copyWith(definition, 2, storage));
    underRoot(old).ifPresent(superseded::add);
    LOG.info("Job {}: table {}.{} now reads {}", runId, database, table, root.uriOf(target));
  }

  private void publishPartitions(
      StoreGateway store, CatalogTable definition, Set<String> written, List<String> superseded)
      throws IOException {
    Map<String, CatalogTablePartition> existing = new LinkedHashMap<>();
    for (CatalogTablePartition partition : partitions()) {
      existing.put(
          PartitioningUtils.getPathFragment(partition.spec(), definition.partitionSchema()),
          partition);
    }
    String emptyKey = root.keyOf(Generations.runDir(runId) + Generations.EMPTY);
    List<CatalogTablePartition> created = new ArrayList<>();
    List<CatalogTablePartition> altered = new ArrayList<>();
    for (String fragment : new TreeSet<>(written)) {
      String target = root.keyOf(Generations.partitionDir(runId, fragment));
      CatalogTablePartition old = existing.get(fragment);
      if (old == null) {
        created.add(newPartition(definition, fragment, target));
      } else {
        if (append) {
          copyInto(store, old.location(), target);
        }
        altered.add(withLocation(old, target));
        underRoot(old.location()).ifPresent(superseded::add);
      }
    }
    boolean emptied = false;
    if (!append && !dynamic) {
      for (Map.Entry<String, CatalogTablePartition> entry : existing.entrySet()) {
        CatalogTablePartition old = entry.getValue();
        if (!written.contains(entry.getKey()) && matchesStaticSpec(old)) {
          altered.add(withLocation(old, emptyKey));
          emptied = true;
          underRoot(old.location()).ifPresent(superseded::add);
        }
      }
    }
    if (append && !altered.isEmpty()) {
      // Copies take time: the record's age must count from just before the call.
      retire(store, List.of(root.keyOf(Generations.runDir(runId))));
    }
    step("copied");
    ensureLockHeld();
    boolean twoSteps = !created.isEmpty() && !altered.isEmpty();
    if (twoSteps || emptied) {
      // A directory marker, so that every reader finds the empty location it is sent to. Not
      // empty itself: Ceph RGW 16 refuses an empty body sent with a trailing checksum.
      store.putObject(emptyKey, EMPTY_MARKER, false);
    }
    if (twoSteps) {
      List<CatalogTablePartition> pending = new ArrayList<>();
      for (CatalogTablePartition partition : created) {
        pending.add(withLocation(partition, emptyKey));
      }
      catalog.createPartitions(database, table, seq(pending), false);
      altered.addAll(created);
      catalog.alterPartitions(database, table, seq(altered));
    } else if (!created.isEmpty()) {
      catalog.createPartitions(database, table, seq(created), false);
    } else if (!altered.isEmpty()) {
      catalog.alterPartitions(database, table, seq(altered));
    }
    LOG.info(
        "Job {}: published {} partitions of {}.{} ({} new, {} replaced) in {} metastore call{}",
        runId,
        created.size() + altered.size(),
        database,
        table,
        created.size(),
        altered.size(),
        twoSteps ? 2 : 1,
        twoSteps ? "s (the new ones added empty first)" : "");
  }

  private boolean matchesStaticSpec(CatalogTablePartition partition) {
    Map<String, String> spec = CollectionConverters.asJava(partition.spec());
    for (Map.Entry<String, String> fixed : staticSpec.entrySet()) {
      if (!fixed.getValue().equals(spec.get(fixed.getKey()))) {
        return false;
      }
    }
    return true;
  }

  /** Copies the files a location holds into the new generation, inside the store. */
  private void copyInto(StoreGateway store, URI location, String targetPrefix) throws IOException {
    Destination source = Destination.of(location);
    if (!source.bucket().equals(root.bucket())) {
      throw new IOException(
          "appending to "
              + database
              + "."
              + table
              + ": its data at "
              + location
              + " is in another bucket than the table's root "
              + rootPath
              + "; "
              + MODE
              + "=metastore copies a partition's files into the new generation inside one bucket");
    }
    int copied = 0;
    for (ObjectInfo object : store.listObjects(source.prefix())) {
      String relative = object.key().substring(source.prefix().length());
      if (relative.isEmpty() || relative.endsWith("/") || !Generations.visibleToReaders(relative)) {
        continue;
      }
      if (object.size() > 5L * 1024 * 1024 * 1024) {
        throw new IOException(
            "appending to "
                + database
                + "."
                + table
                + ": "
                + root.uriOf(object.key())
                + " is larger than one COPY takes (5 GiB)");
      }
      store.copyObject(object.key(), targetPrefix + relative);
      copied++;
    }
    LOG.info(
        "Job {}: {} files of {} copied into the new generation {}",
        runId,
        copied,
        location,
        root.uriOf(targetPrefix));
  }

  /** Writes the record naming what this statement superseded; a failure only leaves them. */
  private void retire(StoreGateway store, List<String> prefixes) {
    // Written even when empty: it replaces the record naming this run's own generation.
    String text = String.join("\n", new LinkedHashSet<>(prefixes)) + "\n";
    String key = Generations.retiredKey(root, runId);
    try {
      store.putObject(key, text.getBytes(StandardCharsets.UTF_8), false);
    } catch (IOException | RuntimeException e) {
      LOG.warn(
          "Job {}: the record of the {} locations it superseded could not be written to {} ({});"
              + " they stay until removed by hand: {}",
          runId,
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
  void removeExpired(StoreGateway store) {
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
      for (ObjectInfo record : due) {
        Optional<byte[]> text = store.getObject(record.key());
        if (text.isEmpty()) {
          continue; // another statement removed it
        }
        List<String> doomed = new ArrayList<>();
        for (String line : new String(text.get(), StandardCharsets.UTF_8).split("\n")) {
          if (line.isBlank()) {
            continue;
          }
          if (!line.startsWith(root.prefix())) {
            continue; // only what lies under this table's root is this table's to remove
          }
          String prefix = line;
          // A generation is removed whole; an older location only of what readers would read.
          boolean generation = line.startsWith(root.keyOf(Generations.DIR));
          for (ObjectInfo object : store.listObjects(prefix)) {
            String relative = object.key().substring(prefix.length());
            boolean ours = generation || Generations.visibleToReaders(relative);
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
          "Job {}: removed {} files of {} superseded generations of {}.{}, older than {} ms",
          runId,
          removed,
          due.size(),
          database,
          table,
          graceMillis);
    } catch (IOException | RuntimeException e) {
      LOG.warn(
          "Job {}: superseded generations of {}.{} not removed this time: {}",
          runId,
          database,
          table,
          e.getMessage());
    }
  }

  /** Key prefixes of the locations readers are sent to now, in the root's bucket. */
  private List<String> liveLocationPrefixes() {
    CatalogTable definition = catalog.getTable(database, table);
    List<URI> locations = new ArrayList<>();
    if (definition.partitionColumnNames().isEmpty()) {
      locations.add(definition.location());
    } else {
      for (CatalogTablePartition partition : partitions()) {
        locations.add(partition.location());
      }
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

  private List<CatalogTablePartition> partitions() {
    return CollectionConverters.asJava(catalog.listPartitions(database, table, Option.empty()));
  }

  /** The key prefix of a location under the table's root, which a retire record may name. */
  private Optional<String> underRoot(URI location) {
    Destination destination = Destination.of(location);
    if (destination.bucket().equals(root.bucket())
        && destination.prefix().startsWith(root.prefix())) {
      return Optional.of(destination.prefix());
    }
    LOG.info(
        "Job {}: {} lies outside the table's root {}; it is left for its owner",
        runId,
        location,
        rootPath);
    return Optional.empty();
  }

  private CatalogTablePartition newPartition(
      CatalogTable definition, String fragment, String targetKey) {
    CatalogStorageFormat storage =
        CaseClasses.copyWith(definition.storage(), 0, Option.apply(uriOf(targetKey)));
    return new CatalogTablePartition(
        PartitioningUtils.parsePathFragment(fragment),
        storage,
        scala.collection.immutable.Map$.MODULE$.empty(),
        System.currentTimeMillis(),
        -1L,
        Option.empty());
  }

  private CatalogTablePartition withLocation(CatalogTablePartition partition, String key) {
    CatalogStorageFormat storage =
        CaseClasses.copyWith(partition.storage(), 0, Option.apply(uriOf(key)));
    return CaseClasses.copyWith(partition, 1, storage);
  }

  private URI uriOf(String key) {
    String uri = root.uriOf(key);
    return new Path(uri.endsWith("/") ? uri.substring(0, uri.length() - 1) : uri).toUri();
  }

  static String normalized(URI location) {
    return new Path(location).toString();
  }

  static String normalized(String location) {
    return new Path(location).toString();
  }

  private static <T> scala.collection.immutable.Seq<T> seq(List<T> list) {
    return CollectionConverters.asScala(list).toSeq();
  }

  private void step(String name) {
    stepHook.accept(name);
  }
}
