package dev.writeonce.cli;

import dev.writeonce.core.engine.JobInspector;
import dev.writeonce.core.engine.JobInspector.Job;
import dev.writeonce.core.engine.JobInspector.State;
import dev.writeonce.core.model.SuccessData;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
    name = "inspect",
    mixinStandardHelpOptions = true,
    description =
        "Show the jobs of this library under a destination and its _SUCCESS: finished jobs, jobs committed but unfinished (recover finishes them), uncommitted jobs with open uploads.")
final class InspectCommand implements Callable<Integer> {

  @Mixin StoreAccess.Options store;

  @Option(
      names = "--stale-after",
      defaultValue = "1h",
      converter = Durations.class,
      description = "an uncommitted job idle this long counts as abandoned (default 1h)")
  Duration staleAfter;

  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    PrintWriter out = spec.commandLine().getOut();
    try (StoreAccess access = StoreAccess.open(store)) {
      JobInspector.Report report = new JobInspector(access.gateway, access.layout).inspect();
      out.println("destination " + access.destination);
      printSuccess(out, report);
      boolean attention = report.successProblem() != null;
      long now = System.currentTimeMillis();
      if (report.jobs().isEmpty()) {
        out.println("jobs: none with records");
      }
      for (Job job : report.jobs()) {
        Duration idle = Duration.ofMillis(Math.max(0, now - job.lastModifiedMillis()));
        out.printf(
            "job %s: %s, %d files, %d bytes, last record %s (%s ago)%n",
            job.jobId(),
            describe(job, idle),
            job.files(),
            job.bytes(),
            Instant.ofEpochMilli(job.lastModifiedMillis()),
            Durations.format(Duration.ofSeconds(idle.toSeconds())));
        if (job.problem() != null) {
          out.println("  " + job.problem());
        }
        attention |=
            job.state() == State.COMMITTED_UNFINISHED
                || job.state() == State.DAMAGED
                || job.state() == State.UNCOMMITTED && idle.compareTo(staleAfter) >= 0;
      }
      out.println(access.gateway.counters().total() + " requests sent");
      return attention ? Main.ATTENTION : Main.OK;
    }
  }

  private String describe(Job job, Duration idle) {
    return switch (job.state()) {
      case FINISHED ->
          "finished (its job record says so); only its records are left: recover removes them";
      case ABORTED ->
          "aborted before its commit point; only its records are left: recover removes them";
      case COMMITTED_UNFINISHED ->
          "COMMITTED BUT UNFINISHED: run 'writeonce recover' to complete it";
      case UNCOMMITTED ->
          idle.compareTo(staleAfter) >= 0
              ? "uncommitted and idle for longer than "
                  + Durations.format(staleAfter)
                  + ": "
                  + job.uploads().size()
                  + " open uploads; 'writeonce recover' aborts them"
              : "uncommitted (running?): " + job.uploads().size() + " open uploads recorded";
      case DAMAGED -> "DAMAGED records: left untouched";
    };
  }

  private static void printSuccess(PrintWriter out, JobInspector.Report report) {
    if (report.successProblem() != null) {
      out.println("_SUCCESS: unreadable: " + report.successProblem());
      return;
    }
    if (report.success().isEmpty()) {
      out.println("_SUCCESS: none");
      return;
    }
    SuccessData success = report.success().get();
    out.printf(
        "_SUCCESS: job %s by %s at %s: %d files, %d bytes%n",
        success.jobId(),
        success.committer(),
        Instant.ofEpochMilli(success.timestamp()),
        success.metrics().getOrDefault("writeonce.files", (long) success.filenames().size()),
        success.metrics().getOrDefault("writeonce.bytes", 0L));
    Map<String, Long> requests = new TreeMap<>();
    Map<String, Long> millis = new TreeMap<>();
    success
        .metrics()
        .forEach(
            (name, value) -> {
              if (name.startsWith("writeonce.requests.")) {
                requests.put(name.substring("writeonce.requests.".length()), value);
              } else if (name.startsWith("writeonce.stage.") && name.endsWith(".millis")) {
                millis.put(name.substring("writeonce.stage.".length()), value);
              }
            });
    if (!requests.isEmpty()) {
      out.println("  job commit requests: " + requests);
    }
    if (!millis.isEmpty()) {
      out.println("  job commit durations: " + millis);
    }
  }
}
