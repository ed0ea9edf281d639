package dev.writeonce.cli;

import dev.writeonce.core.engine.JobCommitEngine;
import dev.writeonce.core.engine.JobInspector;
import dev.writeonce.core.engine.JobInspector.Job;
import dev.writeonce.core.json.FormatException;
import dev.writeonce.core.json.PendingFileFormat;
import dev.writeonce.core.model.PendingFile;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.OpenUpload;
import dev.writeonce.core.store.PeekedObject;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
    name = "purge",
    mixinStandardHelpOptions = true,
    description =
        "Abort open uploads left under a destination by jobs of this library, found from their records: uncommitted jobs' task manifests, and the rename shim's pending-file records in the destination's temporary directories (_temporary, .spark-staging-*, .hive-staging*). Committed jobs are never touched (recover finishes them). A dry run unless --yes.")
final class PurgeCommand implements Callable<Integer> {

  private static final Pattern TEMPORARY_DIR =
      Pattern.compile("(_temporary|\\.spark-staging-[^/]+|\\.hive-staging[^/]*)/");

  /** The shim's records are small; anything larger is data, never read. */
  private static final long MAX_RECORD_BYTES = 4L << 20;

  @Mixin StoreAccess.Options store;

  @Option(
      names = "--older-than",
      required = true,
      converter = Durations.class,
      description = "only what was last written at least this long ago, for example 2d")
  Duration olderThan;

  @Option(names = "--yes", description = "act; without it, only say what would be done")
  boolean yes;

  @Option(
      names = "--list-uploads",
      description =
          "also abort uploads found by ListMultipartUploads under the destination, by age. Only"
              + " for stores that honour the prefix (AWS S3, Ceph RGW; not MinIO). Aborts uploads"
              + " of any writer, not only this library's.")
  boolean listUploads;

  @Spec picocli.CommandLine.Model.CommandSpec spec;

  private PrintWriter out;
  private long cutoff;
  private int aborted;

  @Override
  public Integer call() throws Exception {
    out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    cutoff = System.currentTimeMillis() - olderThan.toMillis();
    int failures = 0;
    try (StoreAccess access = StoreAccess.open(store)) {
      JobInspector.Report report = new JobInspector(access.gateway, access.layout).inspect();
      JobCommitEngine engine =
          new JobCommitEngine(access.gateway, access.config, access.destination);
      // Uploads a committed job's manifest names are its data: never aborted here, whatever the
      // arguments. Recover finishes such jobs.
      java.util.Set<String> committedUploads = new java.util.HashSet<>();
      report
          .in(JobInspector.State.COMMITTED_UNFINISHED)
          .forEach(job -> job.uploads().forEach(u -> committedUploads.add(u.uploadId())));
      for (Job job : report.jobs()) {
        switch (job.state()) {
          case UNCOMMITTED -> {
            if (job.lastModifiedMillis() > cutoff) {
              continue;
            }
            say("abort " + job.uploads().size() + " uploads of uncommitted job " + job.jobId());
            if (yes) {
              try {
                engine.abort(job.jobId(), List.of());
                aborted += job.uploads().size();
              } catch (Exception e) {
                failures++;
                err.println("job " + job.jobId() + ": " + Messages.of(e));
              }
            }
          }
          case COMMITTED_UNFINISHED ->
              out.println(
                  "job "
                      + job.jobId()
                      + " is committed: not purged; 'writeonce recover' finishes it");
          case DAMAGED -> {
            failures++;
            err.println("job " + job.jobId() + " left untouched: " + job.problem());
          }
          case ABORTED -> {
            if (job.lastModifiedMillis() <= cutoff) {
              say("remove the records of aborted job " + job.jobId());
              if (yes) {
                engine.cleanAborted(job.jobId());
              }
            }
          }
          case FINISHED -> {}
        }
      }
      failures += purgeShimRecords(access, err);
      if (listUploads) {
        purgeListedUploads(access, committedUploads);
      }
      out.println(
          (yes ? "aborted " + aborted : "dry run: nothing done; --yes would act")
              + "; "
              + access.gateway.counters().total()
              + " requests sent");
      return failures == 0 ? Main.OK : Main.FAILED;
    }
  }

  private void say(String action) {
    out.println((yes ? "" : "would ") + action);
  }

  /** The shim's pending-file records in the destination's top-level temporary directories. */
  private int purgeShimRecords(StoreAccess access, PrintWriter err) throws Exception {
    int failures = 0;
    String prefix = access.destination.prefix();
    for (String child : access.gateway.listChildren(prefix, 1000)) {
      if (!child.endsWith("/")
          || !TEMPORARY_DIR.matcher(child.substring(prefix.length())).matches()) {
        continue;
      }
      List<String> records = new ArrayList<>();
      for (ObjectInfo object : access.gateway.listObjects(child)) {
        if (object.key().endsWith("/")
            || object.size() > MAX_RECORD_BYTES
            || object.lastModifiedMillis() > cutoff) {
          continue;
        }
        Optional<PeekedObject> peeked =
            access.gateway.peekObject(
                object.key(), PendingFileFormat.HEAD_BYTES, PendingFileFormat::isRecord);
        if (peeked.isEmpty() || peeked.get().body() == null) {
          continue;
        }
        String uri = access.destination.uriOf(object.key());
        PendingFile file;
        try {
          file = PendingFileFormat.fromJson(peeked.get().body(), uri);
        } catch (FormatException e) {
          failures++;
          err.println("left untouched: " + e.getMessage());
          continue;
        }
        if (!file.bucket().equals(access.destination.bucket()) || !file.key().startsWith(prefix)) {
          failures++;
          err.println(
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
        say("abort the upload to " + access.destination.uriOf(file.key()) + " recorded at " + uri);
        if (yes) {
          access.gateway.abortUpload(file.key(), file.uploadId());
          records.add(object.key());
          aborted++;
        }
      }
      if (!records.isEmpty()) {
        access.gateway.deleteObjects(records);
      }
    }
    return failures;
  }

  private void purgeListedUploads(StoreAccess access, java.util.Set<String> committedUploads)
      throws Exception {
    List<OpenUpload> uploads = access.gateway.listUploadsUnder(access.destination.prefix());
    for (OpenUpload upload : uploads) {
      if (upload.initiatedMillis() > cutoff) {
        continue;
      }
      if (committedUploads.contains(upload.uploadId())) {
        out.println(
            "keep listed upload to "
                + access.destination.uriOf(upload.key())
                + ": a committed job's manifest names it; 'writeonce recover' completes it");
        continue;
      }
      say("abort listed upload to " + access.destination.uriOf(upload.key()));
      if (yes) {
        access.gateway.abortUpload(upload.key(), upload.uploadId());
        aborted++;
      }
    }
  }
}
