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

  private final int memoryLimit;
  private ByteArrayOutputStream memory = new ByteArrayOutputStream();
  private Path spill;
  private OutputStream spillOut;
  private long length;

  CheckpointBuffer(int memoryLimit) {
    this.memoryLimit = memoryLimit;
  }

  @Override
  public void write(int b) throws IOException {
    write(new byte[] {(byte) b}, 0, 1);
  }

  @Override
  public void write(byte[] b, int off, int len) throws IOException {
    if (spillOut == null && memory.size() + (long) len > memoryLimit) {
      spill = Files.createTempFile("writeonce-checkpoint-", ".tmp");
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

  long length() {
    return length;
  }

  /** What was written, for the request that stores it; the buffer takes no more bytes. */
  ObjectBody body() throws IOException {
    if (spillOut == null) {
      return ObjectBody.of(memory.toByteArray());
    }
    spillOut.close();
    return new ObjectBody.File(spill, length);
  }

  /** The local file the bytes were spilled to, or null while they are in memory. */
  Path spilledTo() {
    return spill;
  }

  /** Drops the bytes; a spill file is deleted. */
  void discard() {
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
      // a temporary file of this process; the JVM's temp directory is cleaned by the host
    }
  }
}
