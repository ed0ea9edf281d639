package dev.writeonce.cli;

import dev.writeonce.core.engine.CommitResult;
import dev.writeonce.core.engine.JobCommitEngine;
import dev.writeonce.core.engine.JobInspector;
import dev.writeonce.core.engine.JobInspector.Job;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
    name = "recover",
    mixinStandardHelpOptions = true,
    description =
        "Roll forward every job under a destination that passed its commit point without finishing (complete its uploads from the job manifest, write _SUCCESS), remove the records of finished jobs, and abort the uploads recorded by jobs that never reached their commit point and have been idle for --min-age. Damaged records are reported and left untouched.")
final class RecoverCommand implements Callable<Integer> {

  @Mixin StoreAccess.Options store;

  @Option(
      names = "--min-age",
      defaultValue = "1h",
      converter = Durations.class,
      description =
          "abort an uncommitted job only when its newest record is this old, so that running"
              + " jobs are left alone (default 1h)")
  Duration minAge;

  @Option(names = "--dry-run", description = "say what would be done, do nothing")
  boolean dryRun;

  @Option(
      names = "--accept-lost",
      description =
          "finish committed jobs even when some of their uploads are gone (aborted, or expired by"
              + " the store: MinIO after 24 h, a lifecycle rule): every other file is published and"
              + " _SUCCESS lists the lost ones. Without it, recover completes what it can, names the"
              + " lost files and leaves the job committed but unfinished")
  boolean acceptLost;

  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    try (StoreAccess access = StoreAccess.open(store)) {
      JobInspector.Report report = new JobInspector(access.gateway, access.layout).inspect();
      JobCommitEngine engine =
          new JobCommitEngine(access.gateway, access.config, access.destination);
      long now = System.currentTimeMillis();
      int failures = 0;
      int acted = 0;
      for (Job job : report.jobs()) {
        try {
          switch (job.state()) {
            case COMMITTED_UNFINISHED, FINISHED -> {
              String what =
                  job.state() == JobInspector.State.FINISHED
                      ? "remove the records of finished job "
                      : "finish committed job ";
              out.println(
                  (dryRun ? "would " : "") + what + job.jobId() + " (" + job.files() + " files)");
              if (!dryRun) {
                Optional<CommitResult> result = engine.resume(job.jobId(), acceptLost);
                result.ifPresent(
                    r ->
                        out.printf(
                            "  job %s finished: %d files, %d bytes, %d uploads completed now, %d"
                                + " completed earlier%n",
                            r.jobId(), r.files(), r.bytes(), r.completed(), r.confirmed()));
              }
              acted++;
            }
            case UNCOMMITTED -> {
              Duration idle = Duration.ofMillis(now - job.lastModifiedMillis());
              if (idle.compareTo(minAge) < 0) {
                out.println(
                    "leave uncommitted job "
                        + job.jobId()
                        + ": its newest record is "
                        + Durations.format(Duration.ofSeconds(idle.toSeconds()))
                        + " old, younger than --min-age "
                        + Durations.format(minAge)
                        + " (it may be running)");
                continue;
              }
              out.println(
                  (dryRun ? "would abort " : "abort ")
                      + job.uploads().size()
                      + " uploads of uncommitted job "
                      + job.jobId());
              if (!dryRun) {
                engine.abort(job.jobId(), List.of());
                out.println("  job " + job.jobId() + " aborted; its records removed");
              }
              acted++;
            }
            case ABORTED -> {
              out.println(
                  (dryRun ? "would remove" : "remove")
                      + " the records of aborted job "
                      + job.jobId());
              if (!dryRun) {
                engine.cleanAborted(job.jobId());
              }
              acted++;
            }
            case DAMAGED -> {
              failures++;
              err.println(
                  "job "
                      + job.jobId()
                      + " left untouched: "
                      + job.problem()
                      + ". Inspect the record; nothing of this job was completed or deleted.");
            }
          }
        } catch (Exception e) {
          failures++;
          err.println("job " + job.jobId() + ": " + Messages.of(e));
        }
      }
      if (acted == 0 && failures == 0) {
        out.println("nothing to recover under " + access.destination);
      }
      out.println(access.gateway.counters().total() + " requests sent");
      return failures == 0 ? Main.OK : Main.FAILED;
    }
  }
}
