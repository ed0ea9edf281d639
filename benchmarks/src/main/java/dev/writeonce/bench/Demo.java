package dev.writeonce.bench;

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
import dev.writeonce.teststore.LocalMinio;
import dev.writeonce.teststore.S3Api;
import dev.writeonce.teststore.Traffic;
import java.io.PrintStream;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;

/**
 * The end-to-end run: tasks stage files as pending multipart uploads on a local MinIO, the engine
 * commits them through one job manifest, and MinIO's own counters show what each phase cost.
 */
final class Demo {

  private Demo() {}

  static int run(String[] args) throws Exception {
    int files = 1000;
    int tasks = 10;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--files" -> files = positive(args, ++i, "--files");
        case "--tasks" -> tasks = positive(args, ++i, "--tasks");
        default -> throw new IllegalArgumentException("demo: unknown option " + args[i]);
      }
    }
    PrintStream out = System.out;
    out.println("Starting a local MinIO (the first run builds the pinned server, ~3 minutes)...");
    try (LocalMinio minio = LocalMinio.start()) {
      String bucket = minio.newBucket("demo");
      Configuration conf = minio.configure(new Configuration());
      try (FileSystem fs = FileSystem.newInstance(URI.create("s3a://" + bucket + "/"), conf)) {
        StoreGateway gateway = S3StoreGateway.forFileSystem(fs);
        Destination dest = Destination.of("s3a://" + bucket + "/sales/orders/");
        String jobId = "job_demo_0001";

        Traffic start = minio.meter().read();
        List<TaskManifest> manifests = stage(gateway, dest, jobId, files, tasks);
        Traffic staged = minio.meter().read();
        long commitStart = System.nanoTime();
        CommitResult result =
            new JobCommitEngine(gateway, CommitterConfig.defaults(), dest)
                .commit(
                    new JobCommitRequest(jobId, "demo", ConflictMode.APPEND, manifests, List.of()));
        long commitMillis = (System.nanoTime() - commitStart) / 1_000_000;
        Traffic committed = minio.meter().read();

        out.printf(
            "%nCommitted %d files (%d bytes) to %s in %d ms.%n",
            result.files(), result.bytes(), dest, commitMillis);
        out.println("Requests counted by MinIO itself:");
        print(out, staged.minus(start), committed.minus(staged), result.files());
      }
    }
    return 0;
  }

  private static List<TaskManifest> stage(
      StoreGateway gateway, Destination dest, String jobId, int files, int tasks) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(Math.min(16, tasks));
    try {
      List<Future<TaskManifest>> futures = new ArrayList<>();
      for (int t = 0; t < tasks; t++) {
        int task = t;
        int count = files / tasks + (t < files % tasks ? 1 : 0);
        futures.add(pool.submit(() -> stageTask(gateway, dest, jobId, task, count)));
      }
      List<TaskManifest> manifests = new ArrayList<>();
      for (Future<TaskManifest> future : futures) {
        manifests.add(future.get());
      }
      return manifests;
    } finally {
      pool.shutdownNow();
    }
  }

  private static TaskManifest stageTask(
      StoreGateway gateway, Destination dest, String jobId, int task, int count) throws Exception {
    String attempt = String.format("attempt_demo_m_%06d_0", task);
    List<PendingUpload> uploads = new ArrayList<>();
    for (int f = 0; f < count; f++) {
      String key = dest.keyOf(String.format("part-%05d-%05d.csv", task, f));
      byte[] data = ("order," + task + "," + f + "\n").repeat(64).getBytes(StandardCharsets.UTF_8);
      String uploadId = gateway.createUpload(key);
      UploadPart part = gateway.uploadPart(key, uploadId, 1, ByteBuffer.wrap(data));
      uploads.add(new PendingUpload(gateway.bucket(), key, uploadId, List.of(part), attempt));
    }
    return new TaskManifest(jobId, attempt, uploads, Map.of());
  }

  private static void print(PrintStream out, Traffic tasks, Traffic commit, int files) {
    out.printf("  %-28s %12s %12s%n", "request", "task writes", "job commit");
    for (S3Api api : S3Api.values()) {
      if (tasks.requests(api) != 0 || commit.requests(api) != 0) {
        out.printf("  %-28s %12d %12d%n", api, tasks.requests(api), commit.requests(api));
      }
    }
    out.printf("  %-28s %12d %12d%n", "total", tasks.totalRequests(), commit.totalRequests());
    out.printf(
        "  %-28s %12d %12d%n",
        "bytes received by the store", tasks.bytesReceived(), commit.bytesReceived());
    out.printf(
        "  requests per file: %.3f; CopyObject: %d; GetObject during commit: %d%n",
        (tasks.totalRequests() + commit.totalRequests()) / (double) files,
        tasks.requests(S3Api.COPY_OBJECT) + commit.requests(S3Api.COPY_OBJECT),
        commit.requests(S3Api.GET_OBJECT));
  }

  private static int positive(String[] args, int index, String option) {
    if (index >= args.length) {
      throw new IllegalArgumentException("demo: " + option + " needs a number");
    }
    try {
      int value = Integer.parseInt(args[index]);
      if (value < 1) {
        throw new NumberFormatException();
      }
      return value;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("demo: " + option + " must be a positive whole number");
    }
  }
}
