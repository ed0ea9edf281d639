package dev.writeonce.shim;

import java.io.IOException;
import java.io.OutputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.StreamCapabilities;
import org.apache.hadoop.fs.Syncable;
import org.apache.hadoop.fs.statistics.IOStatistics;
import org.apache.hadoop.fs.statistics.IOStatisticsSource;

/**
 * S3A's stream of a file written outside temporary directories, which tells the shim's cache when
 * the file is in place: an S3A file appears when its stream closes, not when it is created, so its
 * key stays changing until then ({@link KnownKeys#begin}). Everything else is S3A's stream's.
 */
final class HandedOverOutputStream extends OutputStream
    implements StreamCapabilities, Syncable, IOStatisticsSource {

  /** Ends a write: {@code succeeded} when the file is in place. Called at most once per write. */
  @FunctionalInterface
  interface WriteEnd {
    void ended(boolean succeeded);
  }

  private final FSDataOutputStream out;
  private final WriteEnd writeEnd;

  HandedOverOutputStream(FSDataOutputStream out, WriteEnd writeEnd) {
    this.out = out;
    this.writeEnd = writeEnd;
  }

  @Override
  public void write(int b) throws IOException {
    out.write(b);
  }

  @Override
  public void write(byte[] data, int offset, int length) throws IOException {
    out.write(data, offset, length);
  }

  @Override
  public void flush() throws IOException {
    out.flush();
  }

  @Override
  public void close() throws IOException {
    boolean succeeded = false;
    try {
      out.close();
      succeeded = true;
    } finally {
      writeEnd.ended(succeeded);
    }
  }

  @Override
  public boolean hasCapability(String capability) {
    return out.hasCapability(capability);
  }

  @Override
  public void hflush() throws IOException {
    out.hflush();
  }

  @Override
  public void hsync() throws IOException {
    out.hsync();
  }

  @Override
  public IOStatistics getIOStatistics() {
    return out.getIOStatistics();
  }

  @Override
  public String toString() {
    return out.toString();
  }
}
