package dev.writeonce.core.engine;

import dev.writeonce.core.model.Destination;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.StoreException;
import dev.writeonce.core.store.StoreGateway;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Replace mode in two halves: before the commit point, list what the job replaces and record it in
 * the manifest; after it, delete exactly what was recorded. Objects the job writes itself, and this
 * library's records, are never listed for deletion.
 */
final class ReplaceStage {

  private ReplaceStage() {}

  static List<String> resolve(
      StoreGateway store, JobLayout layout, List<String> prefixes, Set<String> writtenKeys)
      throws StoreException {
    Destination destination = layout.destination();
    Set<String> deletes = new TreeSet<>();
    for (String prefix : prefixes) {
      if (!prefix.startsWith(destination.prefix())) {
        throw new IllegalArgumentException(
            "replace prefix " + destination.uriOf(prefix) + " lies outside " + destination);
      }
      for (ObjectInfo object : store.listObjects(prefix)) {
        String key = object.key();
        if (destination.contains(key) && !layout.isRecord(key) && !writtenKeys.contains(key)) {
          deletes.add(key);
        }
      }
    }
    return new ArrayList<>(deletes);
  }
}
