package dev.writeonce.core.upload;

import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.UploadPart;
import dev.writeonce.core.store.StoreGateway;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Streams a file as a multipart upload to its final key while the task writes: each full part goes
 * up in the background, at most {@code buffers} parts are held at once (the one being filled
 * included), and close uploads the last part and records the pending upload without completing it.
 * Any failure aborts the upload and is reported, with the path, by the next write or close.
 */
public final class UploadOutputStream extends OutputStream {

  private static final int FIRST_BUFFER = 64 * 1024;

  /** What the owner of a writer learns of it. */
  public interface Listener {

    /**
     * The upload started before close, because the file fills more than one part. Throwing aborts
     * the upload and fails the write.
     */
    default void uploadStarted(UploadOutputStream out, String uploadId) throws IOException {}

    /**
     * The writer closed with every part uploaded. Throwing aborts the upload and fails the close.
     */
    void closed(UploadOutputStream out, PendingUpload upload) throws IOException;

    /** The writer is done: closed, failed or aborted. */
    void finished(UploadOutputStream out);
  }

  private final StoreGateway store;
  private final String path;
  private final String finalKey;
  private final String name;
  private final String attemptId;
  private final int partSize;
  private final Semaphore buffers;
  private final ExecutorService pool;
  private final Listener listener;
  private final List<Future<UploadPart>> parts = new ArrayList<>();
  private final AtomicReference<Throwable> failure = new AtomicReference<>();
  private final AtomicLong held = new AtomicLong();
  private final AtomicLong peakHeld = new AtomicLong();
  private byte[] current;
  private int filled;
  private long length;
  private String uploadId;
  private boolean closing;
  private boolean closed;

  /**
   * @param store where the parts go
   * @param path the path the caller writes, for messages
   * @param finalKey the key the upload will create
   * @param name the name the owner knows the file by
   * @param attemptId the task attempt writing, recorded with the upload
   * @param partSize bytes per part, the last part excepted
   * @param buffers the most part buffers held at once
   * @param pool runs part uploads
   * @param listener told when the upload starts, when the writer closes and when it is done
   */
  public UploadOutputStream(
      StoreGateway store,
      String path,
      String finalKey,
      String name,
      String attemptId,
      long partSize,
      int buffers,
      ExecutorService pool,
      Listener listener) {
    this.store = store;
    this.path = path;
    this.finalKey = finalKey;
    this.name = name;
    this.attemptId = attemptId;
    this.partSize = Math.toIntExact(partSize);
    this.buffers = new Semaphore(buffers);
    this.pool = pool;
    this.listener = listener;
  }

  /** The most bytes of part buffers this writer held at once. */
  public long peakBufferedBytes() {
    return peakHeld.get();
  }

  /** Bytes written so far. */
  public synchronized long length() {
    return length;
  }

  /** The name the owner knows the file by. */
  public String name() {
    return name;
  }

  /** The key the upload will create. */
  public String finalKey() {
    return finalKey;
  }

  @Override
  public void write(int b) throws IOException {
    write(new byte[] {(byte) b}, 0, 1);
  }

  @Override
  public synchronized void write(byte[] data, int offset, int count) throws IOException {
    checkWritable();
    while (count > 0) {
      if (current == null || filled == current.length && current.length < partSize) {
        grow(count);
      }
      int n = Math.min(count, current.length - filled);
      System.arraycopy(data, offset, current, filled, n);
      filled += n;
      offset += n;
      count -= n;
      length += n;
      if (filled == partSize) {
        submit(current, filled);
        current = null;
        filled = 0;
      }
    }
  }

  /** Buffers start small so that small files cost little memory, and grow up to a part. */
  private void grow(int wanted) throws IOException {
    if (current == null) {
      acquireBuffer();
      current = new byte[Math.min(partSize, Math.max(FIRST_BUFFER, wanted))];
      hold(current.length);
      return;
    }
    int size = (int) Math.min(partSize, Math.max(2L * current.length, (long) filled + wanted));
    hold(size - current.length);
    current = Arrays.copyOf(current, size);
  }

  private void acquireBuffer() throws IOException {
    try {
      buffers.acquire();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted writing " + path);
    }
  }

  private void hold(long bytes) {
    long now = held.addAndGet(bytes);
    peakHeld.accumulateAndGet(now, Math::max);
  }

  private void submit(byte[] buffer, int size) throws IOException {
    if (uploadId == null) {
      uploadId = store.createUpload(finalKey);
      if (!closing) {
        listener.uploadStarted(this, uploadId);
      }
    }
    int number = parts.size() + 1;
    String id = uploadId;
    parts.add(
        pool.submit(
            () -> {
              try {
                return store.uploadPart(finalKey, id, number, ByteBuffer.wrap(buffer, 0, size));
              } catch (IOException | RuntimeException e) {
                failure.compareAndSet(null, e);
                throw e;
              } finally {
                held.addAndGet(-buffer.length);
                buffers.release();
              }
            }));
  }

  private void checkWritable() throws IOException {
    if (closed) {
      throw new IOException(path + " is closed");
    }
    Throwable failed = failure.get();
    if (failed != null) {
      abortQuietly(failed);
      throw new IOException("writing " + path + " failed: " + failed.getMessage(), failed);
    }
  }

  @Override
  public synchronized void close() throws IOException {
    if (closed) {
      return;
    }
    try {
      checkWritable();
      closing = true;
      if (current != null || parts.isEmpty()) {
        byte[] last = current == null ? new byte[0] : current;
        if (current == null) {
          acquireBuffer();
        }
        submit(last, filled);
        current = null;
      }
      List<UploadPart> uploaded = new ArrayList<>(parts.size());
      for (Future<UploadPart> part : parts) {
        uploaded.add(part.get());
      }
      listener.closed(
          this, new PendingUpload(store.bucket(), finalKey, uploadId, uploaded, attemptId));
      closed = true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      abortQuietly(e);
      throw new InterruptedIOException("interrupted closing " + path);
    } catch (ExecutionException e) {
      abortQuietly(e.getCause());
      throw new IOException(
          "writing " + path + " failed: " + e.getCause().getMessage(), e.getCause());
    } catch (IOException | RuntimeException e) {
      abortQuietly(e);
      throw e;
    } finally {
      closed = true;
      listener.finished(this);
    }
  }

  /** Stops the writer and aborts its upload: for task abort. */
  public synchronized void abort() throws IOException {
    closed = true;
    listener.finished(this);
    parts.forEach(part -> part.cancel(true));
    if (uploadId != null) {
      store.abortUpload(finalKey, uploadId);
    }
  }

  private void abortQuietly(Throwable cause) {
    try {
      abort();
    } catch (IOException e) {
      cause.addSuppressed(e);
    }
  }
}
