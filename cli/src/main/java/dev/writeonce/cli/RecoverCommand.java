package dev.writeonce.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.writeonce.core.engine.CommitResult;
import dev.writeonce.core.engine.JobCommitEngine;
import dev.writeonce.core.engine.JobInspector;
import dev.writeonce.core.engine.JobInspector.Job;
import java.io.IOException;
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
        "Roll forward every job under a destination that passed its commit point without finishing (complete its uploads from the job manifest, write _SUCCESS), remove the records of finished and aborted jobs, and abort the uploads recorded by jobs that never reached their commit point, once their driver's lease has lapsed and they have been idle for --min-age. Never touches a live job (its driver renews its lease), a job with damaged records, or anything that is not this library's record or upload.")
final class RecoverCommand implements Callable<Integer> {

  @Mixin StoreAccess.Options store;

  @Mixin CommandOutput.Options format;

  @Option(
      names = "--min-age",
      defaultValue = "1h",
      converter = Durations.class,
      description =
          "abort an uncommitted job only when its newest record is this old (default 1h). A job"
              + " whose driver's lease is fresh is never aborted, whatever this says")
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

  @Option(
      names = "--ignore-lease-of",
      paramLabel = "JOB_ID",
      description =
          "treat this job as abandoned although its lease is fresh (repeatable). Only for a job"
              + " whose driver you know is gone (its process was killed, its host is down): a live"
              + " driver of the job could otherwise still be writing or committing it")
  java.util.Set<String> ignoreLeaseOf = new java.util.HashSet<>();

  @Spec picocli.CommandLine.Model.CommandSpec spec;

  /** What recover did with one job. */
  private enum Recovery {
    LEFT,
    ACTED,
    FAILED
  }

  @Override
  public Integer call() throws Exception {
    CommandOutput output = new CommandOutput(spec, format, "recover");
    try (StoreAccess access = StoreAccess.open(store)) {
      access.requireTrustedStore("recover");
      output.root().put("destination", access.destination.toString());
      output.root().put("dryRun", dryRun);
      JobInspector.Report report = new JobInspector(access.gateway, access.layout).inspect();
      JobCommitEngine engine =
          new JobCommitEngine(access.gateway, access.config, access.destination);
      long now = access.gateway.storeNowMillis(); // leases are judged on the store's clock
      int failures = 0;
      int acted = 0;
      int position = 0;
      for (Job job : report.jobs()) {
        output.progress("recover: jobs", ++position, report.jobs().size());
        ObjectNode node = JobFacts.put(output.entry("jobs"), job, now);
        Recovery outcome;
        try {
          outcome = recover(job, node, engine, output, now);
        } catch (Exception e) {
          node.put("action", "failed");
          output.error("job " + job.jobId() + ": " + Messages.of(e));
          outcome = Recovery.FAILED;
        }
        failures += outcome == Recovery.FAILED ? 1 : 0;
        acted += outcome == Recovery.ACTED ? 1 : 0;
      }
      JobFacts.releaseStaleClaim(access.gateway, access.layout, report, output, !dryRun, now);
      if (acted == 0 && failures == 0) {
        output.say("nothing to recover under " + access.destination);
      }
      long requests = access.gateway.counters().total();
      output.say(requests + " requests sent");
      return output.finish(failures == 0 ? Main.OK : Main.FAILED, requests);
    }
  }

  private Recovery recover(
      Job job, ObjectNode node, JobCommitEngine engine, CommandOutput output, long now)
      throws IOException {
    if (job.isLive(now)) {
      if (!ignoreLeaseOf.contains(job.jobId())) {
        node.put("action", "left-live");
        output.say("leave live job " + job.jobId() + ": " + JobFacts.whyLive(job, now));
        return Recovery.LEFT;
      }
      node.put("leaseIgnored", true);
      output.say(
          "job "
              + job.jobId()
              + ": its lease is fresh but ignored (--ignore-lease-of): its driver is taken"
              + " for dead");
    }
    return switch (job.state()) {
      case COMMITTED_UNFINISHED, FINISHED -> finish(job, node, engine, output);
      case UNCOMMITTED -> abort(job, node, engine, output, now);
      case ABORTED -> {
        node.put("action", dryRun ? "would-remove-records" : "remove-records");
        output.say(
            (dryRun ? "would remove" : "remove") + " the records of aborted job " + job.jobId());
        if (!dryRun) {
          engine.cleanAborted(job.jobId());
        }
        yield Recovery.ACTED;
      }
      case DAMAGED -> {
        node.put("action", "left-damaged");
        output.error(
            "job "
                + job.jobId()
                + " left untouched: "
                + job.problem()
                + ". Inspect the record; nothing of this job was completed or deleted.");
        yield Recovery.FAILED;
      }
    };
  }

  private Recovery finish(Job job, ObjectNode node, JobCommitEngine engine, CommandOutput output)
      throws IOException {
    boolean finished = job.state() == JobInspector.State.FINISHED;
    String what = finished ? "remove the records of finished job " : "finish committed job ";
    node.put("action", (dryRun ? "would-" : "") + (finished ? "remove-records" : "finish"));
    output.say((dryRun ? "would " : "") + what + job.jobId() + " (" + job.files() + " files)");
    if (dryRun) {
      return Recovery.ACTED;
    }
    Optional<CommitResult> result = engine.resume(job.jobId(), acceptLost);
    if (result.isPresent()) {
      CommitResult r = result.get();
      ObjectNode done = node.putObject("result");
      done.put("files", r.files());
      done.put("bytes", r.bytes());
      done.put("completedNow", r.completed());
      done.put("completedEarlier", r.confirmed());
      output.say(
          String.format(
              "  job %s finished: %d files, %d bytes, %d uploads completed now, %d"
                  + " completed earlier",
              r.jobId(), r.files(), r.bytes(), r.completed(), r.confirmed()));
    }
    return Recovery.ACTED;
  }

  private Recovery abort(
      Job job, ObjectNode node, JobCommitEngine engine, CommandOutput output, long now)
      throws IOException {
    Duration idle = Duration.ofMillis(now - job.lastModifiedMillis());
    if (idle.compareTo(minAge) < 0) {
      node.put("action", "left-young");
      output.say(
          "leave uncommitted job "
              + job.jobId()
              + ": its newest record is "
              + Durations.format(Duration.ofSeconds(idle.toSeconds()))
              + " old, younger than --min-age "
              + Durations.format(minAge)
              + " (it may be running)");
      return Recovery.LEFT;
    }
    node.put("action", dryRun ? "would-abort" : "abort");
    output.say(
        (dryRun ? "would abort " : "abort ")
            + job.uploads().size()
            + " uploads of uncommitted job "
            + job.jobId()
            + (job.record() == null
                ? ""
                : ", whose driver's lease lapsed at "
                    + CommandOutput.instant(job.leaseExpiresMillis())));
    if (!dryRun) {
      engine.abort(job.jobId(), List.of());
      output.say("  job " + job.jobId() + " aborted; its records removed");
    }
    return Recovery.ACTED;
  }
}
