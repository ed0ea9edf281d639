package dev.writeonce.bench;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.writeonce.cli.CommandOutput;
import dev.writeonce.cli.Main;
import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.engine.CommitResult;
import dev.writeonce.core.engine.JobCommitEngine;
import dev.writeonce.core.engine.JobCommitRequest;
import dev.writeonce.core.model.ConflictMode;
import dev.writeonce.core.model.Destination;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
    name = "bench-engine",
    mixinStandardHelpOptions = true,
    description =
        "Commit a synthetic job of many pending uploads through the job-commit engine against a"
            + " simulated store that answers at once, and print the commit's time, its requests"
            + " and the driver's peak heap. Run the JVM with the heap you want to prove, for"
            + " example -Xmx256m.")
final class EngineBenchCommand implements Callable<Integer> {

  @Option(names = "--uploads", defaultValue = "100000", description = "pending uploads (100000)")
  int uploads;

  @Option(names = "--tasks", defaultValue = "1000", description = "task manifests (1000)")
  int tasks;

  @Option(
      names = "--stored",
      description =
          "Leave the task manifests in the store and let the engine read them as it commits (as"
              + " a MapReduce job commit does), instead of handing them over in memory (as Spark's"
              + " commit messages are). The store then keeps its state outside the heap.")
  boolean stored;

  @Mixin CommandOutput.Options format;

  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    CommandOutput output = new CommandOutput(spec, format, "bench-engine");
    if (uploads < 1 || tasks < 1 || tasks > uploads || uploads % tasks != 0) {
      throw new IllegalArgumentException(
          "need 1 <= --tasks <= --uploads, with --uploads a multiple of --tasks");
    }
    Destination destination = Destination.of("s3a://bench/warehouse/events/");
    String jobId = "job_bench_0001";
    CommitterConfig config = CommitterConfig.from(new Configuration(false));
    Path records = Files.createTempDirectory("writeonce-bench-engine");
    SyntheticJobStore store =
        new SyntheticJobStore(destination, jobId, tasks, uploads / tasks, records);
    JobCommitRequest request =
        stored
            ? new JobCommitRequest(
                jobId,
                "bench",
                ConflictMode.APPEND,
                List.of(),
                List.of(),
                null,
                store.taskManifestKeys())
            : new JobCommitRequest(
                jobId, "bench", ConflictMode.APPEND, store.taskManifests(), List.of());
    JobCommitEngine engine = new JobCommitEngine(store, config, destination);
    resetPeaks();
    long start = System.nanoTime();
    CommitResult result;
    try {
      result = engine.commit(request);
    } finally {
      deleteTree(records);
    }
    long millis = (System.nanoTime() - start) / 1_000_000;
    long maxHeap = Runtime.getRuntime().maxMemory();
    long peakHeap = peakHeap();
    output.root().put("uploads", result.files());
    output.root().put("taskManifests", tasks);
    output.root().put("taskManifestsStored", stored);
    output.root().put("commitMillis", millis);
    ObjectNode requests = output.root().putObject("requestsByType");
    result.requests().forEach((type, n) -> requests.put(type.toString(), n));
    output.root().put("peakHeapBytes", peakHeap);
    output.root().put("maxHeapBytes", maxHeap);
    output.root().put("uploadsLeftOpen", store.openUploadCount());
    output.say(
        String.format(
            Locale.ROOT,
            "committed %d uploads from %d task manifests (%s) in %d ms (%.0f completions/s)",
            result.files(),
            tasks,
            stored ? "read from the store" : "in memory",
            millis,
            result.files() * 1000.0 / Math.max(1, millis)));
    output.say(String.format(Locale.ROOT, "requests: %s", result.requests()));
    output.say(
        String.format(
            Locale.ROOT,
            "driver heap: peak %.1f MiB during the commit, limit %.0f MiB (-Xmx)",
            peakHeap / 1048576.0,
            maxHeap / 1048576.0));
    output.say(String.format(Locale.ROOT, "uploads left open: %d", store.openUploadCount()));
    long sent = result.requests().values().stream().mapToLong(Long::longValue).sum();
    return output.finish(store.openUploadCount() == 0 ? Main.OK : Main.FAILED, sent);
  }

  private static void deleteTree(Path root) throws IOException {
    if (root == null) {
      return;
    }
    try (Stream<Path> paths = Files.walk(root)) {
      for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(path);
      }
    }
  }

  private static void resetPeaks() {
    System.gc();
    for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
      if (pool.getType() == MemoryType.HEAP) {
        pool.resetPeakUsage();
      }
    }
  }

  private static long peakHeap() {
    long peak = 0;
    for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
      if (pool.getType() == MemoryType.HEAP) {
        peak += pool.getPeakUsage().getUsed();
      }
    }
    return peak;
  }
}
