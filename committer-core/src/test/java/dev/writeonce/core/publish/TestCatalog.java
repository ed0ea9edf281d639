package dev.writeonce.core.publish;

import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A metastore of a test's: one partitioned table at a root, whether it owns its location, and the
 * locations other tables name. Each statement reaches it through a {@link Table} of its own, whose
 * calls the test may hold back, fail or lose the answers of.
 */
final class TestCatalog {

  /** One metastore call of a statement's client: applies it, or not, as the test decides. */
  @FunctionalInterface
  interface Call {
    void run(Map<String, URI> locations, Runnable apply) throws IOException;
  }

  static final Call LANDS = (locations, apply) -> apply.run();

  private final String root;
  final Map<String, URI> partitions = new TreeMap<>();
  final List<URI> others = new ArrayList<>();
  boolean owns = true;

  /** Told after every call that changed the table. */
  Runnable afterCall = () -> {};

  TestCatalog(String root) {
    this.root = root;
  }

  Table table() {
    return new Table();
  }

  /** The table as one statement's metastore client sees it. */
  final class Table implements MetastoreTable {
    Call onAdd = LANDS;
    Call onRelocate = LANDS;

    @Override
    public String name() {
      return "db.t";
    }

    @Override
    public boolean partitioned() {
      return true;
    }

    @Override
    public boolean ownsLocation() {
      return owns;
    }

    @Override
    public URI location() {
      return URI.create(root);
    }

    @Override
    public Map<String, URI> partitionLocations() {
      return new TreeMap<>(partitions);
    }

    @Override
    public List<URI> otherLocations() {
      return List.copyOf(others);
    }

    @Override
    public void addPartitions(Map<String, URI> locations) throws IOException {
      Map<String, URI> copy = new TreeMap<>(locations);
      onAdd.run(
          copy,
          () -> {
            for (String fragment : copy.keySet()) {
              if (partitions.containsKey(fragment)) {
                throw new IllegalStateException("AlreadyExistsException " + fragment);
              }
            }
            partitions.putAll(copy);
            afterCall.run();
          });
    }

    @Override
    public void relocatePartitions(Map<String, URI> locations) throws IOException {
      Map<String, URI> copy = new TreeMap<>(locations);
      onRelocate.run(
          copy,
          () -> {
            partitions.putAll(copy);
            afterCall.run();
          });
    }

    @Override
    public void relocate(URI location) {
      throw new UnsupportedOperationException("partitioned");
    }
  }
}
