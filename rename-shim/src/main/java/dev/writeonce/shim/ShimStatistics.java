package dev.writeonce.shim;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/** What the shim did, counted per filesystem instance; the names appear in its logs. */
public final class ShimStatistics {

  final AtomicLong filesWritten = new AtomicLong();
  final AtomicLong recordsWritten = new AtomicLong();
  final AtomicLong recordsMoved = new AtomicLong();
  final AtomicLong recordsMovedInView = new AtomicLong();
  final AtomicLong uploadsCompleted = new AtomicLong();
  final AtomicLong uploadsAborted = new AtomicLong();
  final AtomicLong misses = new AtomicLong();
  final AtomicLong missesRefused = new AtomicLong();
  final AtomicLong plainRenames = new AtomicLong();
  final AtomicLong pendingReadsRefused = new AtomicLong();
  final AtomicLong destinationChecksSkipped = new AtomicLong();
  final AtomicLong destinationListings = new AtomicLong();
  final AtomicLong destinationChecksFromListing = new AtomicLong();
  final AtomicLong destinationDirectoriesFromListing = new AtomicLong();
  final AtomicLong completionsQueued = new AtomicLong();
  final AtomicLong barriers = new AtomicLong();
  final AtomicLong directoriesOfQueued = new AtomicLong();
  final AtomicLong barrierWaitNanos = new AtomicLong();

  /** Calls of each kind, and the time spent in them by their callers. */
  private final Map<Operation.Kind, AtomicLong> calls =
      new java.util.EnumMap<>(Operation.Kind.class);

  private final Map<Operation.Kind, AtomicLong> callNanos =
      new java.util.EnumMap<>(Operation.Kind.class);

  public ShimStatistics() {
    for (Operation.Kind kind : Operation.Kind.values()) {
      calls.put(kind, new AtomicLong());
      callNanos.put(kind, new AtomicLong());
    }
  }

  void called(Operation.Kind kind, long nanos) {
    calls.get(kind).incrementAndGet();
    callNanos.get(kind).addAndGet(nanos);
  }

  /** Files written as pending uploads. */
  public long filesWritten() {
    return filesWritten.get();
  }

  /** Pending-file records written: one per file, two for files of more than one part. */
  public long recordsWritten() {
    return recordsWritten.get();
  }

  /** Records moved by renames between temporary locations (no data moved). */
  public long recordsMoved() {
    return recordsMoved.get();
  }

  /**
   * Files a job commit's merge moved into a temporary output in this JVM's view only, their records
   * left where they were (Spark's dynamic partition overwrite).
   */
  public long recordsMovedInView() {
    return recordsMovedInView.get();
  }

  /** Uploads completed by a rename into their predicted final location. */
  public long uploadsCompleted() {
    return uploadsCompleted.get();
  }

  /** Uploads aborted because their pending file or its directory was deleted. */
  public long uploadsAborted() {
    return uploadsAborted.get();
  }

  /** Renames the rules did not predict: completed, then copied server-side. */
  public long misses() {
    return misses.get();
  }

  /** Renames the rules did not predict, refused because of {@code writeonce.shim.on-miss=fail}. */
  public long missesRefused() {
    return missesRefused.get();
  }

  /** Ordinary objects under temporary directories renamed the S3A way (COPY + DELETE). */
  public long plainRenames() {
    return plainRenames.get();
  }

  /** Reads of pending files refused. */
  public long pendingReadsRefused() {
    return pendingReadsRefused.get();
  }

  /**
   * Renames whose destination was not checked again because S3A had just found it absent for the
   * same thread.
   */
  public long destinationChecksSkipped() {
    return destinationChecksSkipped.get();
  }

  /** Destination directories listed because a temporary directory moving there was listed. */
  public long destinationListings() {
    return destinationListings.get();
  }

  /** Existence checks of destination files answered "absent" by such a listing. */
  public long destinationChecksFromListing() {
    return destinationChecksFromListing.get();
  }

  /** Statuses of destination directories built from such a listing, without a request. */
  public long destinationDirectoriesFromListing() {
    return destinationDirectoriesFromListing.get();
  }

  /** Completions that renames into place queued instead of waiting for. */
  public long completionsQueued() {
    return completionsQueued.get();
  }

  /** Calls that waited for queued completions before they went on. */
  public long barriers() {
    return barriers.get();
  }

  /** Statuses of directories above queued destinations, answered without waiting or a request. */
  public long directoriesOfQueued() {
    return directoriesOfQueued.get();
  }

  public Map<String, Long> asMap() {
    Map<String, Long> map = new LinkedHashMap<>();
    map.put("files_written", filesWritten());
    map.put("records_written", recordsWritten());
    map.put("records_moved", recordsMoved());
    map.put("records_moved_in_view", recordsMovedInView());
    map.put("uploads_completed", uploadsCompleted());
    map.put("uploads_aborted", uploadsAborted());
    map.put("misses", misses());
    map.put("misses_refused", missesRefused());
    map.put("plain_renames", plainRenames());
    map.put("pending_reads_refused", pendingReadsRefused());
    map.put("destination_checks_skipped", destinationChecksSkipped());
    map.put("destination_listings", destinationListings());
    map.put("destination_checks_from_listing", destinationChecksFromListing());
    map.put("destination_directories_from_listing", destinationDirectoriesFromListing());
    map.put("completions_queued", completionsQueued());
    map.put("barriers", barriers());
    map.put("directories_of_queued", directoriesOfQueued());
    map.put("barrier_wait_millis", barrierWaitNanos.get() / 1_000_000);
    for (Operation.Kind kind : Operation.Kind.values()) {
      String name = kind.name().toLowerCase(java.util.Locale.ROOT);
      map.put(name + "_calls", calls.get(kind).get());
      map.put(name + "_millis", callNanos.get(kind).get() / 1_000_000);
    }
    return map;
  }

  @Override
  public String toString() {
    return asMap().toString();
  }
}
