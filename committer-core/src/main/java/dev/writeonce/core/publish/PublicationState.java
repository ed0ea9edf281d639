package dev.writeonce.core.publish;

import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.json.InsertLockFormat;
import dev.writeonce.core.json.RetireRecordFormat;
import dev.writeonce.core.lease.LeaseLock;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.model.InsertLock;
import dev.writeonce.core.model.RetireRecord;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.PeekedObject;
import dev.writeonce.core.store.StoreGateway;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * What metastore publish mode keeps under a table's root, read from the store alone, for operators:
 * the generations, the retire records and the publication lock. Without the metastore it cannot
 * tell which generations a location names; a generation with no record is either named (live) or
 * left by a statement of the mode's first version that died, which an operator checks against the
 * table's locations.
 *
 * @param generations each run's generation, by run id, with its object count and bytes
 * @param records each retire record by run id; a record this version cannot read is absent and
 *     listed in {@code unreadable}
 * @param lock the publication lock, when one is held or left
 */
public record PublicationState(
    Map<String, Generation> generations,
    Map<String, Record> records,
    List<String> unreadable,
    Optional<Lock> lock,
    long storeNowMillis) {

  /** A run's generation: objects under {@code _generations/<run>/}, and its newest write. */
  public record Generation(String uri, long objects, long bytes, long newestMillis) {}

  /** A retire record as found: its state and contents, and its last write on the store's clock. */
  public record Record(String uri, RetireRecord record, long writtenMillis) {}

  /** The publication lock: its holder as written, and its last renewal on the store's clock. */
  public record Lock(String uri, InsertLock lock, long writtenMillis) {}

  /** Reads the state under a table's root ({@code s3a://bucket/path/to/table}). */
  public static PublicationState read(StoreGateway store, Destination root) throws IOException {
    String generationsPrefix = root.keyOf(Generations.DIR);
    String recordsPrefix = root.keyOf(Generations.RETIRED);
    Map<String, long[]> sizes = new TreeMap<>();
    Map<String, Record> records = new TreeMap<>();
    List<String> unreadable = new ArrayList<>();
    Optional<Lock> lock = Optional.empty();
    for (ObjectInfo object : store.listObjects(generationsPrefix)) {
      String relative = object.key().substring(generationsPrefix.length());
      if (object.key().startsWith(recordsPrefix)) {
        String run = object.key().substring(recordsPrefix.length());
        Optional<PeekedObject> body = store.peekObject(object.key(), 64, any -> true);
        if (body.isEmpty() || body.get().matchingBody().isEmpty()) {
          continue; // removed since listed
        }
        try {
          records.put(
              run,
              new Record(
                  root.uriOf(object.key()),
                  RetireRecordFormat.fromJson(
                      body.get().matchingBody().get(), root.uriOf(object.key())),
                  object.lastModifiedMillis()));
        } catch (FormatException e) {
          unreadable.add(root.uriOf(object.key()) + ": " + e.getMessage());
        }
      } else if (relative.equals(LeaseLock.OBJECT_NAME)) {
        Optional<PeekedObject> body = store.peekObject(object.key(), 64, any -> true);
        if (body.isPresent() && body.get().matchingBody().isPresent()) {
          try {
            lock =
                Optional.of(
                    new Lock(
                        root.uriOf(object.key()),
                        InsertLockFormat.fromJson(
                            body.get().matchingBody().get(), root.uriOf(object.key())),
                        object.lastModifiedMillis()));
          } catch (FormatException e) {
            unreadable.add(root.uriOf(object.key()) + ": " + e.getMessage());
          }
        }
      } else if (relative.indexOf('/') > 0) {
        String run = relative.substring(0, relative.indexOf('/'));
        long[] size = sizes.computeIfAbsent(run, any -> new long[3]);
        size[0]++;
        size[1] += object.size();
        size[2] = Math.max(size[2], object.lastModifiedMillis());
      }
    }
    Map<String, Generation> generations = new TreeMap<>();
    sizes.forEach(
        (run, size) ->
            generations.put(
                run,
                new Generation(
                    root.uriOf(root.keyOf(Generations.runDir(run))), size[0], size[1], size[2])));
    return new PublicationState(generations, records, unreadable, lock, store.storeNowMillis());
  }

  /** The generations that no record names: live ones, or leftovers an operator checks by hand. */
  public List<String> unrecorded() {
    List<String> runs = new ArrayList<>();
    for (String run : generations.keySet()) {
      if (!records.containsKey(run)) {
        runs.add(run);
      }
    }
    return runs;
  }
}
