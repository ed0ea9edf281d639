package dev.writeonce.spark.streaming;

import java.io.IOException;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.execution.streaming.checkpointing.CheckpointFileManager;

/**
 * One checkpoint file being written: its bytes stay in this process until {@link #close()}, which
 * stores the whole file in one request, so that no reader ever sees a part of it. {@link #cancel()}
 * drops the bytes, and nothing of the file was ever sent.
 */
final class AtomicCheckpointOutput extends CheckpointFileManager.CancellableFSDataOutputStream {

  private final WriteonceCheckpointFileManager manager;
  private final Path path;
  private final boolean overwrite;
  private final CheckpointBuffer buffer;
  private boolean finished;

  AtomicCheckpointOutput(
      WriteonceCheckpointFileManager manager,
      Path path,
      boolean overwrite,
      CheckpointBuffer buffer) {
    super(buffer);
    this.manager = manager;
    this.path = path;
    this.overwrite = overwrite;
    this.buffer = buffer;
  }

  /**
   * Stores the file. A file that exists already fails a write without overwrite with Hadoop's
   * {@code FileAlreadyExistsException}, as Spark's metadata logs expect of another run of the
   * query; the file is then left as that run wrote it.
   */
  @Override
  public synchronized void close() throws IOException {
    if (finished) {
      return;
    }
    finished = true;
    try {
      flush();
      manager.store(path, buffer, overwrite);
    } finally {
      buffer.discard();
    }
  }

  @Override
  public synchronized void cancel() {
    if (finished) {
      return;
    }
    finished = true;
    buffer.discard();
  }
}
