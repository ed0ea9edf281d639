package dev.writeonce.core.simulation;

import dev.writeonce.core.committer.ConflictPolicy;
import dev.writeonce.core.committer.MultipartOutputCommitter;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.UploadPart;
import dev.writeonce.core.store.StoreGateway;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.TaskAttemptContext;

/**
 * A committer whose tasks keep their output in memory and upload it at task commit, as the staging
 * committer does from local disk: everything else is the library's own committer lifecycle and
 * engine. The simulation drives it, and unit tests of the committer lifecycle use it over any
 * store.
 */
public final class SimCommitter extends MultipartOutputCommitter {

  /** Each attempt's output, by attempt id, then by path relative to the destination. */
  public static final class LocalFiles {
    public final Map<String, Map<String, byte[]>> byAttempt = new ConcurrentHashMap<>();
  }

  private final LocalFiles files;

  public SimCommitter(Path output, JobContext context, StoreGateway store, LocalFiles files)
      throws IOException {
    super("sim", output, context, ConflictPolicy.directory(), (path, conf) -> store);
    this.files = files;
  }

  @Override
  public Path getWorkPath() {
    return new Path("memory:///" + destination().bucket() + "/" + destination().prefix());
  }

  @Override
  protected void prepareTask(TaskAttemptContext context) {}

  @Override
  protected boolean hasTaskOutput(TaskAttemptContext context) {
    Map<String, byte[]> output = files.byAttempt.get(attemptId(context));
    return output != null && !output.isEmpty();
  }

  @Override
  protected List<PendingUpload> uploadTaskOutput(TaskAttemptContext context) throws IOException {
    Map<String, byte[]> output =
        new TreeMap<>(files.byAttempt.getOrDefault(attemptId(context), Map.of()));
    if (output.isEmpty()) {
      return List.of();
    }
    recordIntent(context, output.keySet().stream().map(destination()::keyOf).toList());
    List<PendingUpload> uploads = new ArrayList<>();
    try {
      for (Map.Entry<String, byte[]> file : output.entrySet()) {
        String key = destination().keyOf(file.getKey());
        String uploadId = store().createUpload(key);
        try {
          UploadPart part = store().uploadPart(key, uploadId, 1, ByteBuffer.wrap(file.getValue()));
          uploads.add(
              new PendingUpload(
                  store().bucket(), key, uploadId, List.of(part), attemptId(context)));
        } catch (IOException e) {
          abortAll(
              List.of(
                  new PendingUpload(
                      store().bucket(),
                      key,
                      uploadId,
                      List.of(new UploadPart(1, "x", 0)),
                      attemptId(context))),
              e);
          throw e;
        }
      }
      return uploads;
    } catch (IOException e) {
      abortAll(uploads, e);
      throw e;
    }
  }

  @Override
  protected void discardTaskOutput(TaskAttemptContext context) {
    files.byAttempt.remove(attemptId(context));
  }

  @Override
  protected void releaseTask(TaskAttemptContext context) {
    files.byAttempt.remove(attemptId(context));
  }
}
