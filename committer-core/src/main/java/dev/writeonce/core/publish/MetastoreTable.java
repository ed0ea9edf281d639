package dev.writeonce.core.publish;

import java.io.IOException;
import java.net.URI;
import java.util.List;
import java.util.Map;

/**
 * A catalog table as {@link Publication} sees it, through an engine's own metastore client.
 * Partitions are named by their path fragment ({@code a=1/b=x}, escaped as the engine escapes
 * directory names). Each method that changes the table is one metastore call.
 */
public interface MetastoreTable {

  /** {@code database.table}, for messages. */
  String name();

  boolean partitioned();

  /**
   * Whether the table owns its location: a managed table, or one the metastore purges with its
   * data. Only then may superseded files outside the table's generations (the directories it was
   * written to before the mode) be removed; an external table's files are never removed.
   */
  boolean ownsLocation() throws IOException;

  /** The table's location, read from the metastore now. */
  URI location() throws IOException;

  /** The location of every partition by its fragment, read from the metastore now. */
  Map<String, URI> partitionLocations() throws IOException;

  /**
   * The locations that other tables of the metastore name: their own, and those of their partitions
   * when the table's location lies under this table's root or above it. Nothing under them is ever
   * removed.
   */
  List<URI> otherLocations() throws IOException;

  /** Adds new partitions with the given locations: one call. */
  void addPartitions(Map<String, URI> locations) throws IOException;

  /** Points existing partitions at new locations: one call. */
  void relocatePartitions(Map<String, URI> locations) throws IOException;

  /** Points an unpartitioned table at a new location: one call. */
  void relocate(URI location) throws IOException;

  /** Called after the publishing call landed, to drop what the engine's session cached. */
  default void published() {}
}
