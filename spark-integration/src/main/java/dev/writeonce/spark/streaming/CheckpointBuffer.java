package dev.writeonce.spark.streaming;

import dev.writeonce.core.store.ObjectBody;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The bytes of one checkpoint file while it is written: in memory up to a limit, then in a local
 * file, so that a large state file costs no heap. Nothing reaches the store until the file is
 * closed, and then in one request.
 */
final class CheckpointBuffer extends OutputStream {

  /** Makes the local file a buffer spills to (S3A's buffer directories). */
  interface SpillFiles {
    Path create() throws IOException;
  }

  private final int memoryLimit;
  private final SpillFiles spillFiles;
  private ByteArrayOutputStream memory = new ByteArrayOutputStream();
  private Path spill;
  private OutputStream spillOut;
  private long length;
  private boolean sealed;

  CheckpointBuffer(int memoryLimit, SpillFiles spillFiles) {
    this.memoryLimit = memoryLimit;
    this.spillFiles = spillFiles;
  }

  @Override
  public void write(int b) throws IOException {
    write(new byte[] {(byte) b}, 0, 1);
  }

  @Override
  public void write(byte[] b, int off, int len) throws IOException {
    if (sealed) {
      throw new IOException("the checkpoint file was closed or cancelled: nothing more is written");
    }
    if (spillOut == null && memory.size() + (long) len > memoryLimit) {
      spill = spillFiles.create();
      spillOut = new java.io.BufferedOutputStream(Files.newOutputStream(spill), 1 << 16);
      memory.writeTo(spillOut);
      memory = null;
    }
    if (spillOut != null) {
      spillOut.write(b, off, len);
    } else {
      memory.write(b, off, len);
    }
    length += len;
  }

  /** What was written, for the request that stores it; the buffer takes no more bytes. */
  ObjectBody body() throws IOException {
    sealed = true;
    if (spillOut == null) {
      return ObjectBody.of(memory.toByteArray());
    }
    spillOut.close();
    return new ObjectBody.File(spill, length);
  }

  /** Drops the bytes; a spill file is deleted. Writes fail from now on. */
  void discard() {
    sealed = true;
    memory = null;
    try {
      if (spillOut != null) {
        spillOut.close();
      }
    } catch (IOException ignored) {
      // the file is deleted next
    }
    try {
      if (spill != null) {
        Files.deleteIfExists(spill);
      }
    } catch (IOException ignored) {
      // a temporary file of this process, in a directory S3A's buffers use too
    }
  }
}
