package dev.writeonce.core.upload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.util.EnumSet;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CreateFlag;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.util.Progressable;
import org.junit.jupiter.api.Test;

class OwnCreateFileBuilderTest {

  /** What build() called on the filesystem, with the options it passed. */
  record Call(
      String method,
      boolean overwrite,
      FsPermission permission,
      int bufferSize,
      short replication,
      long blockSize,
      Progressable progress) {}

  /** A filesystem that records its create calls and writes nowhere. */
  static final class RecordingFileSystem extends FileSystem {
    Call last;

    RecordingFileSystem() {
      setConf(new Configuration(false));
    }

    private FSDataOutputStream record(Call call) {
      last = call;
      return new FSDataOutputStream(OutputStream.nullOutputStream(), null);
    }

    @Override
    public FSDataOutputStream create(
        Path path,
        FsPermission permission,
        boolean overwrite,
        int bufferSize,
        short replication,
        long blockSize,
        Progressable progress) {
      return record(
          new Call("create", overwrite, permission, bufferSize, replication, blockSize, progress));
    }

    @Override
    public FSDataOutputStream createNonRecursive(
        Path path,
        FsPermission permission,
        EnumSet<CreateFlag> flags,
        int bufferSize,
        short replication,
        long blockSize,
        Progressable progress) {
      return record(
          new Call(
              "createNonRecursive",
              flags.contains(CreateFlag.OVERWRITE),
              permission,
              bufferSize,
              replication,
              blockSize,
              progress));
    }

    @Override
    public FSDataOutputStream append(Path path, int bufferSize, Progressable progress) {
      return record(new Call("append", false, null, bufferSize, (short) 0, 0, progress));
    }

    @Override
    public URI getUri() {
      return URI.create("s3a://bucket/");
    }

    @Override
    public FSDataInputStream open(Path path, int bufferSize) {
      throw new UnsupportedOperationException();
    }

    @Override
    public boolean rename(Path src, Path dst) {
      throw new UnsupportedOperationException();
    }

    @Override
    public boolean delete(Path path, boolean recursive) {
      throw new UnsupportedOperationException();
    }

    @Override
    public FileStatus[] listStatus(Path path) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void setWorkingDirectory(Path dir) {}

    @Override
    public Path getWorkingDirectory() {
      return new Path("s3a://bucket/");
    }

    @Override
    public boolean mkdirs(Path path, FsPermission permission) {
      throw new UnsupportedOperationException();
    }

    @Override
    public FileStatus getFileStatus(Path path) {
      throw new UnsupportedOperationException();
    }
  }

  private final RecordingFileSystem fs = new RecordingFileSystem();
  private final Path path = new Path("s3a://bucket/out/_temporary/0/part-0");

  private OwnCreateFileBuilder builder() {
    return new OwnCreateFileBuilder(fs, path, "the test writer");
  }

  @Test
  void aRecursiveBuildCallsCreateWithEveryOptionTheCallerSet() throws IOException {
    FsPermission permission = new FsPermission((short) 0640);
    Progressable progress = () -> {};

    builder()
        .recursive()
        .permission(permission)
        .bufferSize(12_345)
        .replication((short) 2)
        .blockSize(7L << 20)
        .progress(progress)
        .build()
        .close();

    assertThat(fs.last)
        .isEqualTo(new Call("create", true, permission, 12_345, (short) 2, 7L << 20, progress));
  }

  @Test
  void aBuildWithoutRecursiveCallsCreateNonRecursiveAndKeepsOverwriteFalse() throws IOException {
    builder().overwrite(false).build().close();

    assertThat(fs.last.method()).isEqualTo("createNonRecursive");
    assertThat(fs.last.overwrite()).isFalse();
  }

  @Test
  void itOverwritesByDefaultAsS3aBuilderDoes() throws IOException {
    builder().recursive().build().close();

    assertThat(fs.last.method()).isEqualTo("create");
    assertThat(fs.last.overwrite()).isTrue();
  }

  @Test
  void appendGoesToAppendAndNeverBecomesAnOverwrite() throws IOException {
    builder().append().build().close();

    assertThat(fs.last.method()).isEqualTo("append");
  }

  @Test
  void aMandatoryOptionTheWriterCannotHonourIsRefusedNamingThePath() {
    assertThatThrownBy(() -> builder().must("fs.option.create.conditional.overwrite", true).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("fs.option.create.conditional.overwrite")
        .hasMessageContaining(path.toString())
        .hasMessageContaining("the test writer");
    assertThat(fs.last).as("nothing created").isNull();
  }

  @Test
  void honouredMandatoryOptionsAndUnknownOptionalOnesAreAccepted() throws IOException {
    builder()
        .must("fs.s3a.create.performance", true)
        .opt("fs.s3a.create.header.x-team", "lake")
        .build()
        .close();

    assertThat(fs.last.method()).isEqualTo("createNonRecursive");
  }
}
