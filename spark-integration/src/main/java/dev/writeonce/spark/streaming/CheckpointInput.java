package dev.writeonce.spark.streaming;

import java.io.EOFException;
import java.io.IOException;
import org.apache.hadoop.fs.FSInputStream;

/** A checkpoint file read whole by one GET, seekable as Hadoop's readers expect. */
final class CheckpointInput extends FSInputStream {

  private final byte[] data;
  private int position;

  CheckpointInput(byte[] data) {
    this.data = data;
  }

  @Override
  public void seek(long pos) throws IOException {
    if (pos < 0 || pos > data.length) {
      throw new EOFException("seek to " + pos + " in a file of " + data.length + " bytes");
    }
    position = (int) pos;
  }

  @Override
  public long getPos() {
    return position;
  }

  @Override
  public boolean seekToNewSource(long targetPos) {
    return false;
  }

  @Override
  public int read() {
    return position < data.length ? data[position++] & 0xff : -1;
  }

  @Override
  public int read(byte[] b, int off, int len) {
    if (len == 0) {
      return 0;
    }
    if (position >= data.length) {
      return -1;
    }
    int n = Math.min(len, data.length - position);
    System.arraycopy(data, position, b, off, n);
    position += n;
    return n;
  }

  @Override
  public int available() {
    return data.length - position;
  }
}
