package dev.writeonce.staging;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.StreamCapabilities;
import org.apache.hadoop.fs.Syncable;
import org.apache.hadoop.fs.permission.FsPermission;

/**
 * The local filesystem under the staging committers' work paths when {@code
 * writeonce.staging.work-path.scheme} is {@value #SCHEME} (by default they are on {@code file:}).
 * Task output keeps its exact names whatever the JVM's locale: Java maps characters that the
 * locale's charset cannot encode to '?' in local file names (LANG unset or C, as in many YARN
 * containers and slim images), so {@code p=日本} and {@code p=中国} would become one directory {@code
 * p=??}. Here every name segment is stored with anything but printable ASCII percent-encoded
 * (UTF-8), and the committer decodes it back into the object key.
 *
 * <p>It tells {@link UploadsOnClose} when a writer closes a file, so that the file can be uploaded
 * before its task commits, and when a file changes afterwards.
 *
 * <p>The committer names this class in the task's configuration ({@code
 * fs.writeonce-staging.impl}), so it is found wherever the engine loaded the jar from; engines
 * reach it only through the work path the committer hands them.
 */
public final class StagingLocalFileSystem extends RawLocalFileSystem {

  /** The scheme of staging work paths. */
  public static final String SCHEME = "writeonce-staging";

  private static final URI ROOT = URI.create(SCHEME + ":///");

  @Override
  public String getScheme() {
    return SCHEME;
  }

  @Override
  public URI getUri() {
    return ROOT;
  }

  /** The work path, in this filesystem, of a directory given by its real (decoded) name. */
  static Path pathOf(String absoluteDirectory) {
    return new Path(SCHEME, null, absoluteDirectory);
  }

  @Override
  public File pathToFile(Path path) {
    checkPath(path);
    if (!path.isAbsolute()) {
      path = new Path(getWorkingDirectory(), path);
    }
    return new File(localPath(path.toUri().getPath()));
  }

  /** Every create and append comes here: the stream tells {@link UploadsOnClose} when it closes. */
  @Override
  protected OutputStream createOutputStreamWithMode(
      Path path, boolean append, FsPermission permission) throws IOException {
    java.nio.file.Path local = pathToFile(path).toPath();
    UploadsOnClose.changing(local);
    return new ClosingStream(super.createOutputStreamWithMode(path, append, permission), local);
  }

  @Override
  public boolean rename(Path src, Path dst) throws IOException {
    UploadsOnClose.changing(pathToFile(src).toPath());
    UploadsOnClose.changing(pathToFile(dst).toPath());
    return super.rename(src, dst);
  }

  @Override
  public boolean delete(Path path, boolean recursive) throws IOException {
    UploadsOnClose.changing(pathToFile(path).toPath());
    return super.delete(path, recursive);
  }

  @Override
  public boolean truncate(Path path, long newLength) throws IOException {
    UploadsOnClose.changing(pathToFile(path).toPath());
    return super.truncate(path, newLength);
  }

  /** A local output stream that reports its file once it is closed with all its bytes. */
  private static final class ClosingStream extends FilterOutputStream
      implements Syncable, StreamCapabilities {
    private final java.nio.file.Path file;
    private boolean closed;

    ClosingStream(OutputStream out, java.nio.file.Path file) {
      super(out);
      this.file = file;
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      out.write(b, off, len);
    }

    @Override
    public void close() throws IOException {
      if (closed) {
        return;
      }
      closed = true;
      out.close();
      UploadsOnClose.closed(file);
    }

    @Override
    public void hflush() throws IOException {
      if (out instanceof Syncable syncable) {
        syncable.hflush();
      } else {
        out.flush();
      }
    }

    @Override
    public void hsync() throws IOException {
      if (out instanceof Syncable syncable) {
        syncable.hsync();
      } else {
        out.flush();
      }
    }

    @Override
    public boolean hasCapability(String capability) {
      return out instanceof StreamCapabilities capabilities
          && capabilities.hasCapability(capability);
    }
  }

  /** The local file name of an absolute path: every segment encoded. */
  static String localPath(String absolutePath) {
    StringBuilder local = new StringBuilder(absolutePath.length());
    for (String segment : absolutePath.split("/")) {
      if (!segment.isEmpty()) {
        local.append('/').append(encode(segment));
      }
    }
    return local.length() == 0 ? "/" : local.toString();
  }

  /** Percent-encodes every byte of a name segment that is not printable ASCII, and '%'. */
  static String encode(String segment) {
    StringBuilder out = new StringBuilder(segment.length());
    for (byte b : segment.getBytes(StandardCharsets.UTF_8)) {
      int c = b & 0xff;
      if (c > 0x20 && c < 0x7f && c != '%') {
        out.append((char) c);
      } else {
        out.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)));
        out.append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
      }
    }
    return out.toString();
  }

  /** The name a segment stored by {@link #encode} stands for. */
  static String decode(String stored) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(stored.length());
    for (int i = 0; i < stored.length(); i++) {
      char c = stored.charAt(i);
      if (c == '%' && i + 2 < stored.length()) {
        bytes.write(Integer.parseInt(stored.substring(i + 1, i + 3), 16));
        i += 2;
      } else {
        bytes.write(c);
      }
    }
    return bytes.toString(StandardCharsets.UTF_8);
  }
}
