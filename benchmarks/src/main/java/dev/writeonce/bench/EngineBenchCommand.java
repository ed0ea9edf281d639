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
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.TaskManifest;
import dev.writeonce.core.model.UploadPart;
import dev.writeonce.core.testing.SimulatedStore;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
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

  @Mixin CommandOutput.Options format;

  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    CommandOutput output = new CommandOutput(spec, format, "bench-engine");
    if (uploads < 1 || tasks < 1 || tasks > uploads) {
      throw new IllegalArgumentException("need 1 <= --tasks <= --uploads");
    }
    SimulatedStore store = new SimulatedStore("bench");
    Destination destination = Destination.of("s3a://bench/warehouse/events/");
    String jobId = "job_bench_0001";
    List<TaskManifest> manifests = syntheticJob(store, destination, jobId);
    CommitterConfig config = CommitterConfig.from(new Configuration(false));
    JobCommitEngine engine = new JobCommitEngine(store, config, destination);
    resetPeaks();
    long start = System.nanoTime();
    CommitResult result =
        engine.commit(
            new JobCommitRequest(jobId, "bench", ConflictMode.APPEND, manifests, List.of()));
    long millis = (System.nanoTime() - start) / 1_000_000;
    long maxHeap = Runtime.getRuntime().maxMemory();
    long peakHeap = peakHeap();
    output.root().put("uploads", result.files());
    output.root().put("taskManifests", tasks);
    output.root().put("commitMillis", millis);
    ObjectNode requests = output.root().putObject("requestsByType");
    result.requests().forEach((type, n) -> requests.put(type.toString(), n));
    output.root().put("peakHeapBytes", peakHeap);
    output.root().put("maxHeapBytes", maxHeap);
    output.root().put("uploadsLeftOpen", store.openUploadCount());
    output.say(
        String.format(
            Locale.ROOT,
            "committed %d uploads from %d task manifests in %d ms (%.0f completions/s)",
            result.files(),
            tasks,
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

  /** The synthetic job: --uploads pending uploads of one part, spread over --tasks manifests. */
  private List<TaskManifest> syntheticJob(
      SimulatedStore store, Destination destination, String jobId) {
    List<TaskManifest> manifests = new ArrayList<>(tasks);
    int perTask = uploads / tasks;
    int made = 0;
    for (int task = 0; task < tasks; task++) {
      int count = task == tasks - 1 ? uploads - made : perTask;
      String attempt = String.format(Locale.ROOT, "attempt_bench_0001_m_%06d_0", task);
      List<PendingUpload> files = new ArrayList<>(count);
      for (int i = 0; i < count; i++, made++) {
        String key =
            destination.prefix()
                + String.format(Locale.ROOT, "day=%02d/part-%06d-%05d.parquet", task % 31, task, i);
        String uploadId = "upload-" + made;
        store.open(uploadId);
        files.add(
            new PendingUpload(
                "bench",
                key,
                uploadId,
                List.of(new UploadPart(1, String.format(Locale.ROOT, "%032x", made), 1 << 20)),
                attempt));
      }
      manifests.add(new TaskManifest(jobId, attempt, files, Map.of()));
    }
    return manifests;
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
