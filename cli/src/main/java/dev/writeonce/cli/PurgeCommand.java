package dev.writeonce.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.engine.JobCommitEngine;
import dev.writeonce.core.engine.JobInspector;
import dev.writeonce.core.engine.JobInspector.Job;
import dev.writeonce.core.engine.JobLayout;
import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.json.InsertLockFormat;
import dev.writeonce.core.json.PendingFileFormat;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.model.InsertLock;
import dev.writeonce.core.model.PendingFile;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.OpenUpload;
import dev.writeonce.core.store.PeekedObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
    name = "purge",
    mixinStandardHelpOptions = true,
    description =
        "Abort what jobs of this library left open under a prefix, found from the library's own records at any depth below it: the uploads of uncommitted jobs whose driver's lease has lapsed (from their task manifests and intents), the records of aborted jobs, and the uploads named by the rename shim's pending-file records in temporary directories (_temporary, .spark-staging-*, .hive-staging*). Never touches a live job, a committed job or any upload its manifest names (recover finishes those), a finished job's output, or any object that is not a record of this library. A dry run unless --yes.")
final class PurgeCommand implements Callable<Integer> {

  private static final Pattern TEMPORARY_DIR =
      Pattern.compile("(^|/)(_temporary|\\.spark-staging-[^/]+|\\.hive-staging[^/]*)/");

  /** A key of this library's records: what precedes it is a destination. */
  private static final Pattern RECORDS =
      Pattern.compile(
          "(^|/)" + Pattern.quote(JobLayout.RECORDS_DIR) + "(jobs/|fail-mode\\.claim$)");

  /** The shim's records are small; anything larger is data, never read. */
  private static final long MAX_RECORD_BYTES = 4L << 20;

  /**
   * The markers that earlier versions left for each finished job, kept for the fence retention, at
   * any depth below the prefix. This version leaves none: {@code _SUCCESS} names the finished jobs.
   */
  private static final Pattern FINISHED_MARKER =
      Pattern.compile("(^|/)" + Pattern.quote(JobLayout.RECORDS_DIR) + "finished/[^/]+\\.json$");

  @Mixin StoreAccess.Options store;

  @Mixin CommandOutput.Options format;

  @Option(
      names = "--older-than",
      required = true,
      converter = Durations.class,
      description =
          "only what was last written at least this long ago, for example 2d. A job whose"
              + " driver's lease is fresh is never touched, whatever this says")
  Duration olderThan;

  @Option(names = "--yes", description = "act; without it, only say what would be done")
  boolean yes;

  @Option(
      names = "--list-uploads",
      description =
          "also abort uploads found by ListMultipartUploads under the prefix, by age, including"
              + " those of other writers. Never those a committed job's manifest names, nor any"
              + " under a destination with a live job. Stores that list uploads by exact key only"
              + " (MinIO) list none: there, purge finds uploads from records alone")
  boolean listUploads;

  @Spec picocli.CommandLine.Model.CommandSpec spec;

  private CommandOutput output;
  private long cutoff;
  private int aborted;
  private int failures;

  @Override
  public Integer call() throws Exception {
    output = new CommandOutput(spec, format, "purge");
    try (StoreAccess access = StoreAccess.open(store)) {
      access.requireTrustedStore("purge");
      output.root().put("destination", access.destination.toString());
      output.root().put("dryRun", !yes);
      output.root().put("olderThanSeconds", olderThan.toSeconds());
      String prefix = access.destination.prefix();
      List<ObjectInfo> everything = access.gateway.listObjects(prefix);
      // Ages and leases are judged on the store's clock, against the times the store assigned;
      // read after the listing, whose times sharpen it.
      long now = access.gateway.storeNowMillis();
      cutoff = now - olderThan.toMillis();
      output.progress("purge: objects listed under " + access.destination, everything.size(), -1);

      Set<String> roots = new TreeSet<>();
      List<ObjectInfo> shimRecords = new ArrayList<>();
      Map<String, ObjectInfo> insertLocks = new HashMap<>();
      List<ObjectInfo> expiredMarkers = new ArrayList<>();
      // An earlier version's marker tells a restarted driver of that version that its job
      // finished: it goes only after the fence retention, whatever --older-than says.
      long markerCutoff = Math.min(cutoff, now - access.config.fenceRetentionMillis());
      for (ObjectInfo object : everything) {
        Matcher records = RECORDS.matcher(object.key());
        String name = object.key().substring(object.key().lastIndexOf('/') + 1);
        if (FINISHED_MARKER.matcher(object.key()).find()) {
          if (object.lastModifiedMillis() <= markerCutoff) {
            expiredMarkers.add(object);
          }
        } else if (name.equals(InsertLockFormat.OBJECT_NAME)) {
          insertLocks.put(object.key().substring(0, object.key().length() - name.length()), object);
        } else if (records.find()) {
          roots.add(object.key().substring(0, records.start() + records.group(1).length()));
        } else if (TEMPORARY_DIR.matcher(object.key()).find()
            && !object.key().endsWith("/")
            && object.size() <= MAX_RECORD_BYTES
            && object.lastModifiedMillis() <= cutoff) {
          shimRecords.add(object);
        }
      }

      // Uploads a committed job's manifest names are its data, and a live job's destination is
      // its own: neither is aborted here, whatever the arguments.
      Set<String> committedUploads = new HashSet<>();
      List<String> liveDestinations = new ArrayList<>();
      for (String root : roots) {
        purgeJobsUnder(access, root, now, committedUploads, liveDestinations);
      }
      purgeShimRecords(access, shimRecords, insertLocks, now);
      purgeFinishedMarkers(access, expiredMarkers);
      if (listUploads) {
        purgeListedUploads(access, committedUploads, liveDestinations);
      }
      output.root().put("aborted", aborted);
      long requests = access.gateway.counters().total();
      output.say(
          (yes ? "aborted " + aborted + " uploads" : "dry run: nothing done; --yes would act")
              + "; "
              + requests
              + " requests sent");
      return output.finish(failures == 0 ? Main.OK : Main.FAILED, requests);
    }
  }

  private void say(String action) {
    output.say((yes ? "" : "would ") + action);
  }

  /** The jobs whose records lie under one destination below the prefix. */
  private void purgeJobsUnder(
      StoreAccess access,
      String root,
      long now,
      Set<String> committedUploads,
      List<String> liveDestinations)
      throws Exception {
    Destination destination = new Destination(access.destination.bucket(), root);
    output.list("destinations").add(destination.toString());
    JobLayout layout = new JobLayout(destination);
    JobInspector.Report report = new JobInspector(access.gateway, layout).inspect();
    JobCommitEngine engine = new JobCommitEngine(access.gateway, access.config, destination);
    for (Job job : report.jobs()) {
      ObjectNode node = JobFacts.put(output.entry("jobs"), job, now);
      node.put("destination", destination.toString());
      String name =
          "job "
              + job.jobId()
              + (destination.equals(access.destination) ? "" : " under " + destination);
      if (job.state() == JobInspector.State.COMMITTED_UNFINISHED) {
        job.uploads().forEach(upload -> committedUploads.add(upload.uploadId()));
      }
      if (job.isLive(now)) {
        liveDestinations.add(destination.prefix());
        node.put("action", "left-live");
        output.say("leave live " + name + ": " + JobFacts.whyLive(job, now));
        continue;
      }
      purgeJob(job, node, name, destination, engine);
    }
    JobFacts.releaseStaleClaim(access.gateway, layout, report, output, yes, now);
  }

  /**
   * Removes the finished-job markers of earlier versions that are older than the fence retention,
   * each only while it is the object listed (If-Match): a marker written again meanwhile stays.
   */
  private void purgeFinishedMarkers(StoreAccess access, List<ObjectInfo> markers) throws Exception {
    output.root().put("finishedMarkers", markers.size());
    if (markers.isEmpty()) {
      return;
    }
    say(
        "remove "
            + markers.size()
            + " finished-job markers of earlier versions, older than the fence retention ("
            + CommitterConfig.FENCE_RETENTION
            + ")");
    if (!yes) {
      return;
    }
    int done = 0;
    for (ObjectInfo marker : markers) {
      access.gateway.deleteObjectIfMatch(marker.key(), marker.etag());
      output.progress("purge: finished-job markers removed", ++done, markers.size());
    }
  }

  /** What purge does with one job that is not live, by its state. */
  private void purgeJob(
      Job job, ObjectNode node, String name, Destination destination, JobCommitEngine engine)
      throws Exception {
    switch (job.state()) {
      case UNCOMMITTED -> {
        if (job.lastModifiedMillis() > cutoff) {
          node.put("action", "left-young");
          return;
        }
        node.put("action", yes ? "abort" : "would-abort");
        say("abort " + job.uploads().size() + " uploads of uncommitted " + name);
        if (yes) {
          try {
            engine.abort(job.jobId(), List.of());
            aborted += job.uploads().size();
          } catch (Exception e) {
            failures++;
            node.put("action", "failed");
            output.error(name + ": " + Messages.of(e));
          }
        }
      }
      case COMMITTED_UNFINISHED -> {
        node.put("action", "left-committed");
        output.say(
            name
                + " is committed: not purged; 'writeonce recover "
                + destination
                + "' finishes it");
      }
      case DAMAGED -> {
        failures++;
        node.put("action", "left-damaged");
        output.error(name + " left untouched: " + job.problem());
      }
      case ABORTED -> {
        if (job.lastModifiedMillis() <= cutoff) {
          node.put("action", yes ? "remove-records" : "would-remove-records");
          say("remove the records of aborted " + name);
          if (yes) {
            engine.cleanAborted(job.jobId());
          }
        } else {
          node.put("action", "left-young");
        }
      }
      case FINISHED -> node.put("action", "left-finished");
    }
  }

  /**
   * The shim's pending-file records in temporary directories at any depth below the prefix. A
   * record of a table whose insert lock is live belongs, or may belong, to the statement holding
   * it: it is left, whatever its age. Other statements take no lock, so for them the age alone
   * decides: --older-than must exceed the longest statement.
   */
  private void purgeShimRecords(
      StoreAccess access,
      List<ObjectInfo> candidates,
      Map<String, ObjectInfo> insertLocks,
      long now)
      throws Exception {
    String prefix = access.destination.prefix();
    List<String> removable = new ArrayList<>();
    Map<String, Boolean> liveLocks = new HashMap<>();
    int examined = 0;
    for (ObjectInfo object : candidates) {
      output.progress("purge: temporary files examined", ++examined, candidates.size());
      Matcher temporary = TEMPORARY_DIR.matcher(object.key());
      String table =
          temporary.find()
              ? object.key().substring(0, temporary.start() + temporary.group(1).length())
              : "";
      ObjectInfo lock = insertLocks.get(table);
      if (lock != null
          && liveLocks.computeIfAbsent(table, t -> insertLockIsLive(access, lock, now))) {
        String uri = access.destination.uriOf(object.key());
        output.entry("shimRecords").put("record", uri).put("action", "left-locked");
        say(
            "keep "
                + uri
                + ": its table's insert lock "
                + access.destination.uriOf(lock.key())
                + " is held by a live statement");
        continue;
      }
      Optional<PeekedObject> peeked =
          access.gateway.peekObject(
              object.key(), PendingFileFormat.HEAD_BYTES, PendingFileFormat::isRecord);
      if (peeked.isEmpty() || peeked.get().body() == null) {
        continue;
      }
      String uri = access.destination.uriOf(object.key());
      ObjectNode node = output.entry("shimRecords").put("record", uri);
      PendingFile file;
      try {
        file = PendingFileFormat.fromJson(peeked.get().body(), uri);
      } catch (FormatException e) {
        failures++;
        node.put("action", "left-damaged");
        output.error("left untouched: " + e.getMessage());
        continue;
      }
      node.put("upload", access.destination.uriOf(file.key()));
      if (!file.bucket().equals(access.destination.bucket()) || !file.key().startsWith(prefix)) {
        failures++;
        node.put("action", "left-outside");
        output.error(
            "left untouched: "
                + uri
                + " names an upload to s3a://"
                + file.bucket()
                + "/"
                + file.key()
                + ", outside "
                + access.destination);
        continue;
      }
      node.put("action", yes ? "abort" : "would-abort");
      say("abort the upload to " + access.destination.uriOf(file.key()) + " recorded at " + uri);
      if (yes) {
        access.gateway.abortUpload(file.key(), file.uploadId());
        removable.add(object.key());
        aborted++;
      }
    }
    if (!removable.isEmpty()) {
      access.gateway.deleteObjects(removable);
    }
  }

  /**
   * Whether an insert lock's lease still runs, judged on the store's clock against the time the
   * store gave its last renewal. A lock that cannot be read counts as live: nothing is aborted on a
   * guess.
   */
  private boolean insertLockIsLive(StoreAccess access, ObjectInfo lock, long now) {
    try {
      Optional<PeekedObject> read = access.gateway.peekObject(lock.key(), 4_096, head -> true);
      if (read.isEmpty()) {
        return false;
      }
      if (read.get().body() == null) {
        return true;
      }
      InsertLock held =
          InsertLockFormat.fromJson(read.get().body(), access.destination.uriOf(lock.key()));
      return read.get().info().lastModifiedMillis() + held.leaseMillis() > now;
    } catch (Exception e) {
      output.error(
          "cannot read the insert lock "
              + access.destination.uriOf(lock.key())
              + " ("
              + e.getMessage()
              + "): its table's temporary files are left");
      return true;
    }
  }

  private void purgeListedUploads(
      StoreAccess access, Set<String> committedUploads, List<String> liveDestinations)
      throws Exception {
    List<OpenUpload> uploads = access.gateway.listUploadsUnder(access.destination.prefix());
    output.root().put("uploadsListed", uploads.size());
    if (uploads.isEmpty()) {
      output.say(
          "the store listed no open upload under "
              + access.destination
              + " (MinIO lists uploads by exact key only: there, uploads are found from records"
              + " alone)");
    }
    int examined = 0;
    for (OpenUpload upload : uploads) {
      output.progress("purge: listed uploads examined", ++examined, uploads.size());
      if (upload.initiatedMillis() > cutoff) {
        continue;
      }
      String uri = access.destination.uriOf(upload.key());
      ObjectNode node = output.entry("listedUploads").put("upload", uri);
      if (committedUploads.contains(upload.uploadId())) {
        node.put("action", "left-committed");
        output.say(
            "keep listed upload to "
                + uri
                + ": a committed job's manifest names it; 'writeonce recover' completes it");
        continue;
      }
      Optional<String> live =
          liveDestinations.stream().filter(p -> upload.key().startsWith(p)).findFirst();
      if (live.isPresent()) {
        node.put("action", "left-live");
        output.say("keep listed upload to " + uri + ": a live job writes under its destination");
        continue;
      }
      node.put("action", yes ? "abort" : "would-abort");
      say("abort listed upload to " + uri);
      if (yes) {
        access.gateway.abortUpload(upload.key(), upload.uploadId());
        aborted++;
      }
    }
  }
}
