package dev.writeonce.core.store;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** Reads at most a given number of bytes of a stream: one part's range of a file. */
final class BoundedInputStream extends FilterInputStream {

  private long remaining;

  BoundedInputStream(InputStream in, long limit) {
    super(in);
    this.remaining = limit;
  }

  /** {@code length} bytes of a file from {@code offset}: one part of a staged file. */
  static InputStream ofRange(Path file, long offset, long length) {
    try {
      FileChannel channel = FileChannel.open(file, StandardOpenOption.READ);
      channel.position(offset);
      return new BoundedInputStream(Channels.newInputStream(channel), length);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file + " for upload", e);
    }
  }

  @Override
  public int read() throws IOException {
    if (remaining <= 0) {
      return -1;
    }
    int b = super.read();
    if (b >= 0) {
      remaining--;
    }
    return b;
  }

  @Override
  public int read(byte[] buffer, int offset, int length) throws IOException {
    if (remaining <= 0) {
      return -1;
    }
    int n = super.read(buffer, offset, (int) Math.min(length, remaining));
    if (n > 0) {
      remaining -= n;
    }
    return n;
  }

  @Override
  public long skip(long n) throws IOException {
    long skipped = super.skip(Math.min(n, remaining));
    remaining -= skipped;
    return skipped;
  }

  @Override
  public int available() throws IOException {
    return (int) Math.min(super.available(), remaining);
  }

  @Override
  public boolean markSupported() {
    return false;
  }
}
