package dev.writeonce.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.writeonce.core.engine.JobInspector;
import dev.writeonce.core.engine.JobInspector.Job;
import dev.writeonce.core.engine.JobInspector.State;
import dev.writeonce.core.engine.JobRecords;
import dev.writeonce.core.model.CommitStatistics;
import dev.writeonce.core.model.DestinationClaim;
import dev.writeonce.core.model.SuccessData;
import dev.writeonce.core.publish.PublicationState;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
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

  @Mixin CommandOutput.Options format;

  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    CommandOutput output = new CommandOutput(spec, format, "inspect");
    try (StoreAccess access = StoreAccess.open(store)) {
      JobInspector.Report report = new JobInspector(access.gateway, access.layout).inspect();
      output.root().put("destination", access.destination.toString());
      output.say("destination " + access.destination);
      printSuccess(output, report);
      boolean attention = report.successProblem() != null;
      long now = access.gateway.storeNowMillis(); // leases are judged on the store's clock
      if (report.jobs().isEmpty()) {
        output.say("jobs: none with records");
      }
      output.list("jobs");
      for (Job job : report.jobs()) {
        Duration idle = Duration.ofMillis(Math.max(0, now - job.lastModifiedMillis()));
        boolean needsAttention =
            job.state() == State.COMMITTED_UNFINISHED && !job.isLive(now)
                || job.state() == State.DAMAGED
                || job.state() == State.UNCOMMITTED
                    && !job.isLive(now)
                    && idle.compareTo(staleAfter) >= 0;
        JobFacts.put(output.entry("jobs"), job, now).put("needsAttention", needsAttention);
        output.say(
            String.format(
                "job %s: %s, %d files, %d bytes, last record %s (%s ago)",
                job.jobId(),
                describe(job, idle, now),
                job.files(),
                job.bytes(),
                Instant.ofEpochMilli(job.lastModifiedMillis()),
                Durations.format(Duration.ofSeconds(idle.toSeconds()))));
        if (job.problem() != null) {
          output.say("  " + job.problem());
        }
        attention |= needsAttention;
      }
      Optional<DestinationClaim> claim =
          new JobRecords(access.gateway, access.layout).loadFailModeClaim();
      if (claim.isPresent()) {
        DestinationClaim c = claim.get();
        JobFacts.putClaim(output, access.layout, c);
        output.say(
            "fail-mode claim: held by job "
                + c.jobId()
                + " on "
                + c.host()
                + (c.expiresAtMillis() > 0
                    ? ", expires " + CommandOutput.instant(c.expiresAtMillis())
                    : "")
                + "; later fail-mode jobs are refused while it stands (recover removes it once"
                + " its job is no longer live)");
      }
      attention |= printPublication(output, access, now);
      long requests = access.gateway.counters().total();
      output.say(requests + " requests sent");
      return output.finish(attention ? Main.ATTENTION : Main.OK, requests);
    }
  }

  private String describe(Job job, Duration idle, long now) {
    if (job.isLive(now)) {
      return (job.state() == State.COMMITTED_UNFINISHED
              ? "committed, being finished by its driver"
              : "running")
          + " (live: "
          + JobFacts.whyLive(job, now)
          + "): "
          + job.uploads().size()
          + " uploads recorded";
    }
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

  /**
   * Metastore publish mode's state under the destination, when it is a table's root: generations,
   * retire records and the publication lock. True when something needs an operator.
   */
  private static boolean printPublication(CommandOutput out, StoreAccess access, long now)
      throws java.io.IOException {
    PublicationState state = PublicationState.read(access.gateway, access.destination);
    if (state.generations().isEmpty() && state.records().isEmpty() && state.lock().isEmpty()) {
      return false;
    }
    ObjectNode node = out.root().putObject("publication");
    out.say("metastore publish mode: " + state.generations().size() + " generations");
    boolean attention = !state.unreadable().isEmpty();
    com.fasterxml.jackson.databind.node.ArrayNode records = node.putArray("records");
    com.fasterxml.jackson.databind.node.ArrayNode generations = node.putArray("generations");
    if (state.lock().isPresent()) {
      PublicationState.Lock lock = state.lock().get();
      long age = Math.max(0, now - lock.writtenMillis());
      boolean lapsed = age >= lock.lock().leaseMillis();
      ObjectNode l = node.putObject("lock");
      l.put("uri", lock.uri());
      l.put("holder", lock.lock().holder());
      l.put("host", lock.lock().host());
      l.put("renewedAt", CommandOutput.instant(lock.writtenMillis()));
      l.put("lapsed", lapsed);
      out.say(
          "  publication lock: held by "
              + lock.lock().holder()
              + " on "
              + lock.lock().host()
              + ", renewed "
              + Durations.format(Duration.ofSeconds(age / 1000))
              + " ago"
              + (lapsed
                  ? " (LAPSED: its holder is gone; the next statement takes it over)"
                  : " (live)"));
    }
    for (Map.Entry<String, PublicationState.Record> entry : state.records().entrySet()) {
      PublicationState.Record found = entry.getValue();
      long age = Math.max(0, now - found.writtenMillis());
      ObjectNode r = records.addObject();
      r.put("run", entry.getKey());
      r.put("state", found.record().state().name().toLowerCase(java.util.Locale.ROOT));
      r.put("own", found.record().own().size());
      r.put("superseded", found.record().superseded().size());
      r.put("writtenAt", CommandOutput.instant(found.writtenMillis()));
      out.say(
          String.format(
              "  record %s: %s, %d own objects, %d superseded, written %s ago",
              entry.getKey(),
              found.record().state().name().toLowerCase(java.util.Locale.ROOT),
              found.record().own().size(),
              found.record().superseded().size(),
              Durations.format(Duration.ofSeconds(age / 1000))));
    }
    for (Map.Entry<String, PublicationState.Generation> entry : state.generations().entrySet()) {
      PublicationState.Generation generation = entry.getValue();
      boolean recorded = state.records().containsKey(entry.getKey());
      ObjectNode g = generations.addObject();
      g.put("run", entry.getKey());
      g.put("uri", generation.uri());
      g.put("objects", generation.objects());
      g.put("bytes", generation.bytes());
      g.put("recorded", recorded);
      out.say(
          String.format(
              "  generation %s: %d objects, %d bytes, last written %s%s",
              entry.getKey(),
              generation.objects(),
              generation.bytes(),
              Instant.ofEpochMilli(generation.newestMillis()),
              recorded
                  ? ""
                  : "; no record: a partition (or the table) should name it; if none does, it is"
                      + " left by a statement that died, see docs/operations.md"));
    }
    for (String problem : state.unreadable()) {
      out.error("unreadable: " + problem);
    }
    return attention;
  }

  private static void printSuccess(CommandOutput out, JobInspector.Report report) {
    if (report.successProblem() != null) {
      out.root().put("successProblem", report.successProblem());
      out.say("_SUCCESS: unreadable: " + report.successProblem());
      return;
    }
    if (report.success().isEmpty()) {
      out.root().putNull("success");
      out.say("_SUCCESS: none");
      return;
    }
    SuccessData success = report.success().get();
    long files =
        success.metrics().getOrDefault(CommitStatistics.FILES, (long) success.filenames().size());
    long bytes = success.metrics().getOrDefault(CommitStatistics.BYTES, 0L);
    ObjectNode node = out.root().putObject("success");
    node.put("jobId", success.jobId());
    node.put("committer", success.committer());
    node.put("at", CommandOutput.instant(success.timestamp()));
    node.put("files", files);
    node.put("bytes", bytes);
    out.say(
        String.format(
            "_SUCCESS: job %s by %s at %s: %d files, %d bytes",
            success.jobId(),
            success.committer(),
            Instant.ofEpochMilli(success.timestamp()),
            files,
            bytes));
    Map<String, Long> requests = new TreeMap<>();
    Map<String, Long> millis = new TreeMap<>();
    success
        .metrics()
        .forEach(
            (name, value) -> {
              if (name.startsWith(CommitStatistics.REQUESTS_PREFIX)) {
                requests.put(name.substring(CommitStatistics.REQUESTS_PREFIX.length()), value);
              } else if (name.startsWith(CommitStatistics.STAGE_PREFIX)
                  && name.endsWith(CommitStatistics.STAGE_SUFFIX)) {
                millis.put(name.substring(CommitStatistics.STAGE_PREFIX.length()), value);
              }
            });
    if (!requests.isEmpty()) {
      out.say("  job commit requests: " + requests);
    }
    if (!millis.isEmpty()) {
      out.say("  job commit durations: " + millis);
    }
  }
}
