package dev.writeonce.core.committer;

import dev.writeonce.core.engine.JobLayout;
import dev.writeonce.core.errors.DestinationConflictException;
import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.model.ConflictMode;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.TaskManifest;
import dev.writeonce.core.store.StoreGateway;
import java.io.IOException;
import java.util.List;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a committer applies its conflict mode: to the whole destination (directory committers) or to
 * each partition the job writes (partitioned committer). Checks cost one LIST request per
 * destination or partition, never one per file.
 */
public abstract class ConflictPolicy {

  private static final Logger LOG = LoggerFactory.getLogger(ConflictPolicy.class);

  /** The whole destination is the unit of conflict. */
  public static ConflictPolicy directory() {
    return new ConflictPolicy() {
      @Override
      void checkAtSetup(StoreGateway store, JobLayout layout, ConflictMode mode)
          throws IOException {
        if (mode == ConflictMode.FAIL) {
          requireEmpty(store, layout, layout.destination().prefix());
        }
      }

      @Override
      List<String> replacedPrefixes(
          StoreGateway store, JobLayout layout, ConflictMode mode, List<TaskManifest> tasks)
          throws IOException {
        if (mode == ConflictMode.FAIL) {
          // Again at commit: another job may have written since this one's setup.
          requireEmpty(store, layout, layout.destination().prefix());
        }
        return mode == ConflictMode.REPLACE ? List.of(layout.destination().prefix()) : List.of();
      }
    };
  }

  /** Each partition directory the job writes is the unit of conflict; others stay untouched. */
  public static ConflictPolicy partitioned() {
    return new ConflictPolicy() {
      @Override
      boolean needsUploads(ConflictMode mode) {
        return mode != ConflictMode.APPEND;
      }

      @Override
      void checkAtSetup(StoreGateway store, JobLayout layout, ConflictMode mode) {
        // Partitions are known only when the tasks have written.
      }

      @Override
      List<String> replacedPrefixes(
          StoreGateway store, JobLayout layout, ConflictMode mode, List<TaskManifest> tasks)
          throws IOException {
        if (mode == ConflictMode.APPEND) {
          return List.of();
        }
        Destination destination = layout.destination();
        List<String> partitions = partitionsWritten(destination, tasks);
        boolean topLevelFiles =
            tasks.stream()
                .flatMap(task -> task.uploads().stream())
                .anyMatch(
                    upload -> upload.key().lastIndexOf('/') + 1 == destination.prefix().length());
        if (topLevelFiles) {
          LOG.warn(
              "Files written at the top of {} belong to no partition: conflict mode {} leaves"
                  + " the objects there alone",
              destination,
              mode.id());
        }
        if (mode == ConflictMode.FAIL) {
          for (String partition : partitions) {
            requireEmpty(store, layout, partition);
          }
          return List.of();
        }
        return partitions;
      }
    };
  }

  /**
   * The partition directories (key prefixes ending in '/') the tasks wrote into, the destination's
   * top level excepted.
   */
  public static List<String> partitionsWritten(Destination destination, List<TaskManifest> tasks) {
    TreeSet<String> partitions = new TreeSet<>();
    for (TaskManifest task : tasks) {
      for (PendingUpload upload : task.uploads()) {
        partitions.add(upload.key().substring(0, upload.key().lastIndexOf('/') + 1));
      }
    }
    partitions.remove(destination.prefix());
    return List.copyOf(partitions);
  }

  /**
   * Whether {@link #replacedPrefixes} needs the tasks' uploads in this mode: the job commit then
   * reads every task manifest into memory first, instead of letting the engine read them as it
   * goes.
   */
  boolean needsUploads(ConflictMode mode) {
    return false;
  }

  /** Fails a job whose destination already holds data, in fail mode. */
  abstract void checkAtSetup(StoreGateway store, JobLayout layout, ConflictMode mode)
      throws IOException;

  /** The prefixes whose old objects the job replaces (replace mode); checks fail mode. */
  abstract List<String> replacedPrefixes(
      StoreGateway store, JobLayout layout, ConflictMode mode, List<TaskManifest> tasks)
      throws IOException;

  static void requireEmpty(StoreGateway store, JobLayout layout, String prefix)
      throws StoreException, DestinationConflictException {
    for (String child : store.listChildren(prefix, 10)) {
      // The prefix itself is an empty directory's marker (S3A's mkdirs, consoles): not data.
      if (!child.equals(prefix)
          && !layout.isRecord(child)
          && !child.equals(layout.recordsPrefix())) {
        throw new DestinationConflictException(
            layout.destination().uriOf(prefix)
                + " already holds data (found "
                + layout.destination().uriOf(child)
                + ") and writeonce.conflict-mode is fail: delete it, write elsewhere, or set"
                + " writeonce.conflict-mode to append or replace");
      }
    }
  }
}
