package dev.writeonce.spark;

import dev.writeonce.core.publish.Generations;
import dev.writeonce.core.publish.MetastoreTable;
import dev.writeonce.core.publish.Publication;
import dev.writeonce.core.store.StoreGateway;
import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.catalyst.catalog.CatalogStorageFormat;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.catalyst.catalog.CatalogTablePartition;
import org.apache.spark.sql.catalyst.catalog.CatalogTableType;
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
 * Metastore publish mode for a Spark SQL insert into an existing catalog table: the statement's
 * uploads complete into its generation of the table (see {@link Generations}), and {@link
 * Publication} makes them the table's data with one call through Spark's external catalog.
 */
final class MetastorePublication {

  private static final Logger LOG = LoggerFactory.getLogger(MetastorePublication.class);

  /** The table property that makes the metastore purge an external table's data with it. */
  private static final String PURGE = "external.table.purge";

  private final ExternalCatalog catalog;
  private final org.apache.spark.sql.catalyst.TableIdentifier identifier;
  private final String database;
  private final String table;
  private final String rootPath;
  private final Map<String, String> staticSpec;
  private final Publication publication;

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
    this.staticSpec = CollectionConverters.asJava(insert.staticPartitions());
    boolean append = insert.mode() == SaveMode.Append;
    // A static overwrite replaces every partition its spec covers, written or not.
    boolean staticOverwrite = !append && !insert.dynamicPartitionOverwrite();
    this.publication =
        new Publication(
            new SparkTable(),
            rootPath,
            runId,
            "Spark job " + runId,
            append,
            staticOverwrite ? this::matchesStaticSpec : null,
            conf);
  }

  /** True when the configuration asks for metastore publish mode. */
  static boolean requested(Configuration conf) {
    return Publication.requested(conf);
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
          Publication.MODE,
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
  HashMap<String, String> locationFragments() throws IOException {
    CatalogTable definition = catalog.getTable(database, table);
    if (definition.partitionColumnNames().isEmpty()) {
      return new HashMap<>();
    }
    Map<String, URI> locations = new LinkedHashMap<>();
    for (CatalogTablePartition partition : partitions()) {
      locations.put(
          PartitioningUtils.getPathFragment(partition.spec(), definition.partitionSchema()),
          partition.location());
    }
    return new HashMap<>(Generations.fragmentsByLocation(database + "." + table, locations));
  }

  /**
   * Publishes what the committed job wrote, by partition path ({@code ""} for an unpartitioned
   * table), records what it superseded and removes generations whose grace period has passed.
   */
  void publish(StoreGateway store, Set<String> written) throws IOException {
    publication.publish(store, written);
  }

  /** Claims the statement's generation, or renews the claim at once; see {@link Publication}. */
  void claim(StoreGateway store) throws IOException {
    publication.claim(store);
  }

  /** Removes the generation of a statement that failed before its metastore call. */
  void discardUnpublished(StoreGateway store) {
    publication.discardUnpublished(store);
  }

  /** The table through Spark's external catalog. */
  private final class SparkTable implements MetastoreTable {

    private final CatalogTable definition = catalog.getTable(database, table);

    /** The partitions last read, by fragment, so that a relocation keeps everything else. */
    private final Map<String, CatalogTablePartition> known = new LinkedHashMap<>();

    @Override
    public String name() {
      return database + "." + table;
    }

    @Override
    public boolean partitioned() {
      return !definition.partitionColumnNames().isEmpty();
    }

    @Override
    public URI location() {
      return catalog.getTable(database, table).location();
    }

    @Override
    public boolean ownsLocation() {
      CatalogTable current = catalog.getTable(database, table);
      return current.tableType().equals(CatalogTableType.MANAGED())
          || "true".equalsIgnoreCase(current.properties().getOrElse(PURGE, () -> "false"));
    }

    @Override
    public List<URI> otherLocations() {
      List<URI> locations = new ArrayList<>();
      for (String db : CollectionConverters.asJava(catalog.listDatabases())) {
        scala.collection.immutable.Seq<String> names = catalog.listTables(db);
        for (CatalogTable other : CollectionConverters.asJava(catalog.getTablesByName(db, names))) {
          if (other.identifier().table().equals(table) && db.equals(database)) {
            continue;
          }
          Option<URI> location = other.storage().locationUri();
          if (location.isEmpty()) {
            continue; // a view
          }
          locations.add(location.get());
          if (!other.partitionColumnNames().isEmpty()
              && Generations.overlapsRoot(location.get(), rootPath)) {
            for (CatalogTablePartition partition :
                CollectionConverters.asJava(
                    catalog.listPartitions(db, other.identifier().table(), Option.empty()))) {
              partition.storage().locationUri().foreach(locations::add);
            }
          }
        }
      }
      return locations;
    }

    @Override
    public Map<String, URI> partitionLocations() {
      Map<String, URI> locations = new LinkedHashMap<>();
      known.clear();
      for (CatalogTablePartition partition : partitions()) {
        String fragment =
            PartitioningUtils.getPathFragment(partition.spec(), definition.partitionSchema());
        known.put(fragment, partition);
        locations.put(fragment, partition.location());
      }
      return locations;
    }

    @Override
    public void addPartitions(Map<String, URI> locations) {
      List<CatalogTablePartition> created = new ArrayList<>();
      locations.forEach((fragment, location) -> created.add(newPartition(fragment, location)));
      catalog.createPartitions(database, table, seq(created), false);
    }

    @Override
    public void relocatePartitions(Map<String, URI> locations) {
      if (!known.keySet().containsAll(locations.keySet())) {
        partitionLocations(); // some were added by this publication
      }
      List<CatalogTablePartition> altered = new ArrayList<>();
      locations.forEach(
          (fragment, location) -> altered.add(withLocation(known.get(fragment), location)));
      catalog.alterPartitions(database, table, seq(altered));
    }

    @Override
    public void relocate(URI location) {
      CatalogTable current = catalog.getTable(database, table);
      CatalogStorageFormat storage =
          CaseClasses.copyWith(current.storage(), 0, Option.apply(location));
      catalog.alterTable(CaseClasses.copyWith(current, 2, storage));
    }

    @Override
    public void published() {
      // This session's cached relation names the old location of an unpartitioned table.
      SparkSession.active().sessionState().catalog().refreshTable(identifier);
    }

    private CatalogTablePartition newPartition(String fragment, URI location) {
      CatalogStorageFormat storage =
          CaseClasses.copyWith(definition.storage(), 0, Option.apply(location));
      return new CatalogTablePartition(
          PartitioningUtils.parsePathFragment(fragment),
          storage,
          scala.collection.immutable.Map$.MODULE$.empty(),
          System.currentTimeMillis(),
          -1L,
          Option.empty());
    }

    private CatalogTablePartition withLocation(CatalogTablePartition partition, URI location) {
      CatalogStorageFormat storage =
          CaseClasses.copyWith(partition.storage(), 0, Option.apply(location));
      return CaseClasses.copyWith(partition, 1, storage);
    }
  }

  /** Whether a static overwrite's spec covers a partition, by its fragment. */
  private boolean matchesStaticSpec(String fragment) {
    Map<String, String> spec =
        CollectionConverters.asJava(PartitioningUtils.parsePathFragment(fragment));
    for (Map.Entry<String, String> fixed : staticSpec.entrySet()) {
      if (!fixed.getValue().equals(spec.get(fixed.getKey()))) {
        return false;
      }
    }
    return true;
  }

  private List<CatalogTablePartition> partitions() {
    return CollectionConverters.asJava(catalog.listPartitions(database, table, Option.empty()));
  }

  static String normalized(String location) {
    return new Path(location).toString();
  }

  private static <T> scala.collection.immutable.Seq<T> seq(List<T> list) {
    return CollectionConverters.asScala(list).toSeq();
  }
}
