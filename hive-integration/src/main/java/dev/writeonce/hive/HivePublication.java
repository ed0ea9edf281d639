package dev.writeonce.hive;

import dev.writeonce.core.model.Destination;
import dev.writeonce.core.publish.Generations;
import dev.writeonce.core.publish.MetastoreTable;
import dev.writeonce.core.publish.Publication;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.StoreGateway;
import dev.writeonce.shim.RenameShimFileSystem;
import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hive.common.StatsSetupConst;
import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.metastore.HiveMetaStoreClient;
import org.apache.hadoop.hive.metastore.IMetaStoreClient;
import org.apache.hadoop.hive.metastore.TableType;
import org.apache.hadoop.hive.metastore.Warehouse;
import org.apache.hadoop.hive.metastore.api.GetTableRequest;
import org.apache.hadoop.hive.ql.exec.StatsTask;
import org.apache.hadoop.hive.ql.exec.Task;
import org.apache.hadoop.hive.ql.io.AcidUtils;
import org.apache.hadoop.hive.ql.metadata.Hive;
import org.apache.hadoop.hive.ql.metadata.Partition;
import org.apache.hadoop.hive.ql.metadata.Table;
import org.apache.hadoop.hive.ql.plan.DynamicPartitionCtx;
import org.apache.hadoop.hive.ql.plan.LoadFileDesc;
import org.apache.hadoop.hive.ql.plan.LoadTableDesc;
import org.apache.hadoop.hive.ql.plan.MoveWork;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Metastore publish mode for a Hive statement that loads a native table on a shimmed bucket. Before
 * the statement's jobs run, its table load becomes a plain move of the staged files into the
 * statement's generation of the table ({@link Generations}), where the shim completes their
 * uploads, and the statistics task of that load is dropped (it would describe the files the table
 * held before). After the jobs, {@link Publication} points the table or its partitions at the
 * generation with one metastore call; the published partitions' statistics are marked stale.
 */
final class HivePublication {

  private static final Logger LOG = LoggerFactory.getLogger(HivePublication.class);

  /** The table property that makes the metastore purge an external table's data with it. */
  private static final String PURGE = "external.table.purge";

  private final RenameShimFileSystem shim;
  private final Path root;
  private final String runId;
  private final Publication publication;
  private final HiveTable table;

  /** The partition a static load writes; empty for a dynamic one, which is listed afterwards. */
  private final Optional<String> staticFragment;

  private final int partitionDepth;

  private HivePublication(
      RenameShimFileSystem shim,
      Path root,
      String runId,
      Publication publication,
      HiveTable table,
      Optional<String> staticFragment,
      int partitionDepth) {
    this.table = table;
    this.shim = shim;
    this.root = root;
    this.runId = runId;
    this.publication = publication;
    this.staticFragment = staticFragment;
    this.partitionDepth = partitionDepth;
  }

  /**
   * Turns a table load into a move into the statement's generation, when the load is one publish
   * mode covers: a native, non-transactional table whose staged files the shim writes. Empty (and
   * the plan untouched) otherwise.
   */
  static Optional<HivePublication> plan(Task<?> moveTask, HiveConf conf, String runId)
      throws IOException {
    MoveWork move = (MoveWork) moveTask.getWork();
    LoadTableDesc load = move.getLoadTableWork();
    if (load == null || load.getSourcePath() == null) {
      return Optional.empty();
    }
    Path source = load.getSourcePath();
    FileSystem fs = source.getFileSystem(conf);
    if (!(fs instanceof RenameShimFileSystem shim) || !shim.shims(source)) {
      return Optional.empty();
    }
    String name = load.getTable().getTableName();
    Table table;
    try {
      table = Hive.get(conf).getTable(name);
    } catch (Exception e) {
      throw new IOException(
          Publication.MODE + "=metastore: table " + name + " could not be read from the metastore",
          e);
    }
    if (load.getWriteType() != AcidUtils.Operation.NOT_ACID
        || load.isMmTable()
        || load.isDirectInsert()
        || AcidUtils.isTransactionalTable(table)
        || table.isNonNative()
        || table.isStoredAsSubDirectories()
        || table.getNumBuckets() > 0) {
      LOG.info(
          "{}=metastore covers native, non-transactional, unbucketed tables; {} loads in place",
          Publication.MODE,
          name);
      return Optional.empty();
    }
    // An unpartitioned table published before reads one of its generations: its root is above.
    Path root =
        new Path(Generations.rootOf(shim.makeQualified(table.getDataLocation()).toString()));
    if (!(root.getFileSystem(conf) instanceof RenameShimFileSystem)
        || !Destination.of(root.toUri()).bucket().equals(Destination.of(source.toUri()).bucket())) {
      LOG.info(
          "{}=metastore: table {} lies at {}, not in the bucket of its staging directory {}; it"
              + " loads in place",
          Publication.MODE,
          name,
          root,
          source);
      return Optional.empty();
    }
    // A static load writes one partition (or the table); a dynamic one the partitions under its
    // static prefix, found by listing the generation afterwards.
    String prefix = "";
    Optional<String> staticFragment = Optional.of("");
    if (table.isPartitioned()) {
      Map<String, String> fixed = new LinkedHashMap<>();
      for (Map.Entry<String, String> entry : load.getPartitionSpec().entrySet()) {
        if (entry.getValue() == null || entry.getValue().isEmpty()) {
          break; // the dynamic columns follow the static ones
        }
        fixed.put(entry.getKey(), entry.getValue());
      }
      prefix = fixed.isEmpty() ? "" : makePartPath(fixed);
      DynamicPartitionCtx dynamic = load.getDPCtx();
      staticFragment =
          dynamic != null && dynamic.getNumDPCols() > 0 ? Optional.empty() : Optional.of(prefix);
    }
    boolean append = load.getLoadFileType() == LoadTableDesc.LoadFileType.KEEP_EXISTING;
    HiveTable metastore =
        new HiveTable(conf, table.getDbName(), table.getTableName(), table.isPartitioned());
    Publication publication =
        new Publication(
            metastore, root.toString(), runId, "Hive statement " + runId, append, null, conf);
    // Before anything lands in the generation: it is this run's, so that a HiveServer2 that dies
    // before the statement ends leaves nothing there that no record names.
    publication.claim(shim.publicationStore(root));
    Path target = new Path(publication.generationOf(prefix));
    move.setLoadTableWork(null);
    move.setLoadFileWork(new LoadFileDesc(source, target, true, null, null, false));
    dropStatisticsTasks(moveTask);
    LOG.info(
        "{}: {} moves into generation {}, published after the statement", runId, source, target);
    return Optional.of(
        new HivePublication(
            shim,
            root,
            runId,
            publication,
            metastore,
            staticFragment,
            table.getPartitionKeys().size()));
  }

  /**
   * Detaches the statistics tasks that follow a load: they would read the partitions' old files and
   * write their figures into the metastore. Their own followers follow the move instead.
   */
  private static void dropStatisticsTasks(Task<?> moveTask) {
    if (moveTask.getChildTasks() == null) {
      return;
    }
    for (Task<?> child : new ArrayList<>(moveTask.getChildTasks())) {
      if (!(child instanceof StatsTask)) {
        continue;
      }
      for (Task<?> parent : new ArrayList<>(child.getParentTasks())) {
        parent.removeDependentTask(child);
      }
      if (child.getChildTasks() != null) {
        for (Task<?> next : new ArrayList<>(child.getChildTasks())) {
          child.removeDependentTask(next);
          moveTask.addDependentTask(next);
        }
      }
    }
  }

  /** After the statement's jobs: publishes its generation with one metastore call. */
  void publish() throws IOException {
    StoreGateway store = shim.publicationStore(root);
    // The moves may have queued their completions: none may be pending when readers are sent here.
    Path runDirectory = new Path(root, Generations.runDir(runId));
    shim.awaitCompletions(runDirectory);
    Set<String> written = new TreeSet<>();
    if (staticFragment.isPresent()) {
      written.add(staticFragment.get());
    } else {
      Destination rootDestination = Destination.of(root.toUri());
      for (ObjectInfo object :
          store.listObjects(rootDestination.keyOf(Generations.runDir(runId)))) {
        partitionOf(Generations.fragmentOf(rootDestination, runId, object.key()), partitionDepth)
            .ifPresent(written::add);
      }
    }
    try {
      publication.publish(store, written);
    } finally {
      table.close();
    }
  }

  /**
   * The partition a file of a dynamic load lies in, from the directory it lies in: its first {@code
   * depth} segments, each a {@code column=value}. A file may lie deeper, as Hive on Tez writes the
   * branches of a {@code UNION ALL} ({@code p=1/HIVE_UNION_SUBDIR_1/000000_0}); readers of the
   * partition read those too.
   */
  static Optional<String> partitionOf(String directory, int depth) {
    String[] segments = directory.split("/");
    if (directory.isEmpty() || segments.length < depth) {
      return Optional.empty();
    }
    String partition = String.join("/", java.util.Arrays.copyOf(segments, depth));
    for (int i = 0; i < depth; i++) {
      if (segments[i].indexOf('=') <= 0) {
        return Optional.empty();
      }
    }
    return Generations.visibleToReaders(partition) ? Optional.of(partition) : Optional.empty();
  }

  /** After a failed statement: removes the generation when no metastore call named it. */
  void discard() {
    try {
      publication.discardUnpublished(shim.publicationStore(root));
      table.close();
    } catch (IOException | RuntimeException e) {
      LOG.warn(
          "{}: its generation under {} was not removed: {}",
          runId,
          new Path(root, Generations.runDir(runId)),
          e.getMessage());
    }
  }

  private static String makePartPath(Map<String, String> spec) {
    try {
      // Hive's escaped directory names; the flag would add a trailing separator.
      return Warehouse.makePartName(spec, false);
    } catch (Exception e) {
      throw new IllegalArgumentException("partition " + spec + ": " + e.getMessage(), e);
    }
  }

  /**
   * The table through a metastore client of the publication's own. Not the session's: from the
   * post-execution hook on, Hive answers the session's calls from a cache filled while the
   * statement was compiled, and a publication must read the partitions as they are now.
   */
  private static final class HiveTable implements MetastoreTable, AutoCloseable {

    private final HiveConf conf;
    private final String database;
    private final String table;
    private final boolean partitioned;
    private final Map<String, org.apache.hadoop.hive.metastore.api.Partition> known =
        new HashMap<>();
    private IMetaStoreClient client;

    HiveTable(HiveConf conf, String database, String table, boolean partitioned) {
      this.conf = conf;
      this.database = database;
      this.table = table;
      this.partitioned = partitioned;
    }

    @Override
    public String name() {
      return database + "." + table;
    }

    @Override
    public boolean partitioned() {
      return partitioned;
    }

    @Override
    public URI location() throws IOException {
      return call(() -> new Path(definition().getSd().getLocation()).toUri());
    }

    @Override
    public boolean ownsLocation() throws IOException {
      return call(
          () -> {
            org.apache.hadoop.hive.metastore.api.Table current = definition();
            Map<String, String> parameters =
                current.getParameters() == null ? Map.of() : current.getParameters();
            return TableType.MANAGED_TABLE.name().equals(current.getTableType())
                || "true".equalsIgnoreCase(parameters.get(PURGE));
          });
    }

    @Override
    public List<URI> otherLocations() throws IOException {
      return call(
          () -> {
            String rootPath = Generations.rootOf(location().toString());
            List<URI> locations = new ArrayList<>();
            for (String db : client().getAllDatabases()) {
              List<String> names = client().getAllTables(db);
              for (org.apache.hadoop.hive.metastore.api.Table other :
                  client().getTableObjectsByName(db, names)) {
                if (db.equalsIgnoreCase(database) && other.getTableName().equalsIgnoreCase(table)) {
                  continue;
                }
                if (other.getSd() == null || other.getSd().getLocation() == null) {
                  continue; // a view
                }
                URI location = new Path(other.getSd().getLocation()).toUri();
                locations.add(location);
                if (!other.getPartitionKeys().isEmpty()
                    && Generations.overlapsRoot(location, rootPath)) {
                  for (org.apache.hadoop.hive.metastore.api.Partition partition :
                      client().listPartitions(db, other.getTableName(), (short) -1)) {
                    locations.add(new Path(partition.getSd().getLocation()).toUri());
                  }
                }
              }
            }
            return locations;
          });
    }

    @Override
    public Map<String, URI> partitionLocations() throws IOException {
      return call(
          () -> {
            org.apache.hadoop.hive.metastore.api.Table definition = definition();
            Map<String, URI> locations = new LinkedHashMap<>();
            known.clear();
            for (org.apache.hadoop.hive.metastore.api.Partition partition :
                client().listPartitions(database, table, (short) -1)) {
              String fragment =
                  Warehouse.makePartName(definition.getPartitionKeys(), partition.getValues());
              known.put(fragment, partition);
              locations.put(fragment, new Path(partition.getSd().getLocation()).toUri());
            }
            return locations;
          });
    }

    @Override
    public void addPartitions(Map<String, URI> locations) throws IOException {
      call(
          () -> {
            Table definition = new Table(definition());
            List<org.apache.hadoop.hive.metastore.api.Partition> created = new ArrayList<>();
            for (Map.Entry<String, URI> entry : locations.entrySet()) {
              org.apache.hadoop.hive.metastore.api.Partition added =
                  new Partition(
                          definition,
                          Warehouse.makeSpecFromName(entry.getKey()),
                          new Path(entry.getValue()))
                      .getTPartition();
              added.setParameters(staleStatistics(added.getParameters()));
              created.add(added);
            }
            client().add_partitions(created);
            return null;
          });
    }

    @Override
    public void relocatePartitions(Map<String, URI> locations) throws IOException {
      call(
          () -> {
            if (!known.keySet().containsAll(locations.keySet())) {
              partitionLocations(); // some were added by this publication
            }
            List<org.apache.hadoop.hive.metastore.api.Partition> altered = new ArrayList<>();
            for (Map.Entry<String, URI> entry : locations.entrySet()) {
              org.apache.hadoop.hive.metastore.api.Partition partition =
                  known.get(entry.getKey()).deepCopy();
              partition.getSd().setLocation(entry.getValue().toString());
              partition.setParameters(staleStatistics(partition.getParameters()));
              altered.add(partition);
            }
            client().alter_partitions(database, table, altered, null, null, -1);
            return null;
          });
    }

    @Override
    public void relocate(URI location) throws IOException {
      call(
          () -> {
            org.apache.hadoop.hive.metastore.api.Table current = definition();
            current.getSd().setLocation(location.toString());
            current.setParameters(staleStatistics(current.getParameters()));
            client().alter_table(database, table, current);
            return null;
          });
    }

    @Override
    public void close() {
      if (client != null) {
        client.close();
        client = null;
      }
    }

    private org.apache.hadoop.hive.metastore.api.Table definition() throws Exception {
      return client().getTable(new GetTableRequest(database, table));
    }

    private IMetaStoreClient client() throws Exception {
      if (client == null) {
        client = new HiveMetaStoreClient(conf);
      }
      return client;
    }

    /**
     * The statistics of a location this statement changed no longer hold: marked stale, so that
     * Hive answers no query from them (it recomputes them on ANALYZE).
     */
    private static Map<String, String> staleStatistics(Map<String, String> parameters) {
      Map<String, String> copy = parameters == null ? new HashMap<>() : new HashMap<>(parameters);
      StatsSetupConst.setBasicStatsState(copy, StatsSetupConst.FALSE);
      StatsSetupConst.clearColumnStatsState(copy);
      return copy;
    }

    private interface MetastoreCall<T> {
      T run() throws Exception;
    }

    private <T> T call(MetastoreCall<T> call) throws IOException {
      try {
        return call.run();
      } catch (IOException e) {
        throw e;
      } catch (Exception e) {
        throw new IOException("metastore call on " + name() + " failed: " + e.getMessage(), e);
      }
    }
  }
}
