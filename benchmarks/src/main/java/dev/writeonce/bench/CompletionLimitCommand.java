package dev.writeonce.bench;

import dev.writeonce.cli.CommandOutput;
import dev.writeonce.cli.Main;
import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.engine.CommitResult;
import dev.writeonce.core.engine.JobCommitEngine;
import dev.writeonce.core.engine.JobCommitRequest;
import dev.writeonce.core.model.ConflictMode;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.TaskManifest;
import dev.writeonce.core.model.UploadPart;
import dev.writeonce.core.store.S3StoreGateway;
import dev.writeonce.core.store.StoreGateway;
import dev.writeonce.teststore.S3Api;
import dev.writeonce.teststore.TestStore;
import dev.writeonce.teststore.TestStores;
import dev.writeonce.teststore.Traffic;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The store's own limit for a job commit, and how close the engine gets to it: bare
 * CompleteMultipartUpload requests at several parallelisms, then the engine's whole job commit of
 * as many uploads, on the same store, through the same S3A client.
 */
@Command(
    name = "bench-completions",
    mixinStandardHelpOptions = true,
    description =
        "Measure bare CompleteMultipartUpload throughput on a store at several parallelisms, then"
            + " commit as many pending uploads through the job-commit engine, and print the"
            + " engine's job commit as a ratio to the best bare run.")
final class CompletionLimitCommand implements Callable<Integer> {

  @Mixin StoreOption storeOption;

  @Option(names = "--uploads", defaultValue = "10000", description = "uploads per run (10000)")
  int uploads;

  @Option(
      names = "--threads",
      split = ",",
      defaultValue = "8,16,32,64,128",
      description = "parallelisms of the bare runs (8,16,32,64,128)")
  List<Integer> parallelisms;

  @Option(
      names = "--out",
      defaultValue = "docs/benchmarks",
      description = "directory of the report completions-<store>.md")
  Path out;

  @Mixin CommandOutput.Options format;

  @Spec picocli.CommandLine.Model.CommandSpec spec;

  /** One timed run: what it was, at which parallelism, how long, and the store's count. */
  record Run(String what, int threads, long millis, long completions, long requests) {
    Run again() {
      return new Run(what + ", again after the engine", threads, millis, completions, requests);
    }

    double perSecond() {
      return completions * 1000.0 / Math.max(1, millis);
    }
  }

  @Override
  public Integer call() throws Exception {
    CommandOutput output = new CommandOutput(spec, format, "bench-completions");
    if (uploads < 1 || parallelisms.isEmpty() || parallelisms.stream().anyMatch(p -> p < 1)) {
      throw new IllegalArgumentException("need --uploads >= 1 and --threads of at least 1 each");
    }
    TestStore store = TestStores.get(storeOption.name);
    String bucket = store.newBucket("completions");
    Configuration conf = store.configure(new Configuration());
    conf.setInt("fs.s3a.connection.maximum", 2 * parallelisms.stream().max(Integer::compare).get());
    List<Run> runs = new ArrayList<>();
    try (FileSystem fs = FileSystem.newInstance(URI.create("s3a://" + bucket + "/"), conf)) {
      StoreGateway gateway = S3StoreGateway.forFileSystem(fs);
      for (int threads : parallelisms) {
        List<PendingUpload> pending = openUploads(gateway, "bare-" + threads + "/", threads);
        runs.add(bareRun(store, gateway, pending, threads));
        output.say(describe(runs.get(runs.size() - 1)));
      }
      Run best = runs.stream().min((a, b) -> Long.compare(a.millis(), b.millis())).orElseThrow();
      for (int threads : engineParallelisms(best.threads())) {
        List<PendingUpload> pending = openUploads(gateway, "engine-" + threads + "/", threads);
        runs.add(engineRun(store, gateway, bucket, pending, threads));
        output.say(describe(runs.get(runs.size() - 1)));
        // The same bare run again, right after, on the store as the engine left it: a store
        // whose bucket has grown may have slowed, and this separates that from the engine.
        pending = openUploads(gateway, "again-" + threads + "/", threads);
        runs.add(bareRun(store, gateway, pending, threads).again());
        output.say(describe(runs.get(runs.size() - 1)));
      }
      String report = report(store, best, runs);
      Files.createDirectories(out);
      Path file = out.resolve("completions-" + store.name() + ".md");
      Files.writeString(file, report);
      output.say(report);
      output.say("wrote " + file);
      output.root().put("report", file.toString());
      long sent = runs.stream().mapToLong(Run::requests).sum();
      return output.finish(Main.OK, sent);
    }
  }

  /** The engine runs at its default parallelism and at the best bare one. */
  private static List<Integer> engineParallelisms(int best) {
    return best == CommitterConfig.COMMIT_THREADS_DEFAULT
        ? List.of(best)
        : List.of(CommitterConfig.COMMIT_THREADS_DEFAULT, best);
  }

  /** Opens {@code uploads} uploads of one small part each under the prefix (not timed). */
  private List<PendingUpload> openUploads(StoreGateway gateway, String prefix, int threads)
      throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(Math.max(threads, 16));
    try {
      List<Future<PendingUpload>> futures = new ArrayList<>(uploads);
      for (int i = 0; i < uploads; i++) {
        String key = String.format(Locale.ROOT, "%sday=%02d/part-%06d.parquet", prefix, i % 10, i);
        int task = i / 100;
        futures.add(
            pool.submit(
                () -> {
                  byte[] data = ("row of " + key + "\n").getBytes(StandardCharsets.UTF_8);
                  String uploadId = gateway.createUpload(key);
                  UploadPart part = gateway.uploadPart(key, uploadId, 1, ByteBuffer.wrap(data));
                  String attempt = String.format(Locale.ROOT, "attempt_bench_0001_m_%06d_0", task);
                  return new PendingUpload(gateway.bucket(), key, uploadId, List.of(part), attempt);
                }));
      }
      List<PendingUpload> pending = new ArrayList<>(uploads);
      for (Future<PendingUpload> future : futures) {
        pending.add(future.get());
      }
      return pending;
    } finally {
      pool.shutdownNow();
    }
  }

  /** Completes every upload with {@code threads} threads and nothing else. */
  private static Run bareRun(
      TestStore store, StoreGateway gateway, List<PendingUpload> pending, int threads)
      throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      Traffic before = store.meter().read();
      long start = System.nanoTime();
      List<Future<String>> futures = new ArrayList<>(pending.size());
      for (PendingUpload upload : pending) {
        futures.add(pool.submit(() -> gateway.completeUpload(upload)));
      }
      for (Future<String> future : futures) {
        future.get();
      }
      long millis = (System.nanoTime() - start) / 1_000_000;
      Traffic traffic = store.meter().read().minus(before);
      return new Run(
          "bare CompleteMultipartUpload",
          threads,
          millis,
          traffic.requests(S3Api.COMPLETE_MULTIPART_UPLOAD),
          traffic.totalRequests());
    } finally {
      pool.shutdownNow();
    }
  }

  /** The engine's whole job commit of the uploads, 100 to a task manifest. */
  private static Run engineRun(
      TestStore store,
      StoreGateway gateway,
      String bucket,
      List<PendingUpload> pending,
      int threads)
      throws Exception {
    String prefix = pending.get(0).key().substring(0, pending.get(0).key().indexOf('/') + 1);
    Destination destination = Destination.of("s3a://" + bucket + "/" + prefix);
    String jobId = "job_bench_" + threads;
    List<TaskManifest> manifests = new ArrayList<>();
    for (int from = 0; from < pending.size(); from += 100) {
      List<PendingUpload> files = pending.subList(from, Math.min(pending.size(), from + 100));
      manifests.add(new TaskManifest(jobId, files.get(0).taskAttempt(), files, Map.of()));
    }
    Configuration settings = new Configuration(false);
    settings.setInt(CommitterConfig.COMMIT_THREADS, threads);
    JobCommitEngine engine =
        new JobCommitEngine(gateway, CommitterConfig.from(settings), destination);
    Traffic before = store.meter().read();
    long start = System.nanoTime();
    CommitResult result =
        engine.commit(
            new JobCommitRequest(jobId, "bench", ConflictMode.APPEND, manifests, List.of()));
    long millis = (System.nanoTime() - start) / 1_000_000;
    Traffic traffic = store.meter().read().minus(before);
    if (result.files() != pending.size()) {
      throw new IllegalStateException(
          "the engine committed " + result.files() + " of " + pending.size() + " uploads");
    }
    return new Run(
        "engine job commit",
        threads,
        millis,
        traffic.requests(S3Api.COMPLETE_MULTIPART_UPLOAD),
        traffic.totalRequests());
  }

  private static String describe(Run run) {
    return String.format(
        Locale.ROOT,
        "%s, %d threads: %d completions in %.2f s (%.0f/s), %d requests",
        run.what(),
        run.threads(),
        run.completions(),
        run.millis() / 1000.0,
        run.perSecond(),
        run.requests());
  }

  private String report(TestStore store, Run best, List<Run> runs) {
    StringBuilder text = new StringBuilder();
    text.append(
        String.format(
            Locale.ROOT,
            "Store: %s. %d uploads of one part per run, each run on uploads of its own, in"
                + " the order shown; one run each.%n%n",
            store.name(),
            uploads));
    text.append(
        "| run | threads | completions | requests | time s | completions/s | ratio to the best"
            + " bare run |\n");
    text.append("|---|---:|---:|---:|---:|---:|---:|\n");
    for (Run run : runs) {
      text.append(
          String.format(
              Locale.ROOT,
              "| %s | %d | %d | %d | %.2f | %.0f | %.2f |%n",
              run.what(),
              run.threads(),
              run.completions(),
              run.requests(),
              run.millis() / 1000.0,
              run.perSecond(),
              run.millis() / (double) Math.max(1, best.millis())));
    }
    return text.toString();
  }
}
