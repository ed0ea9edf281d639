package dev.writeonce.shim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.upload.OwnCreateFileBuilder;
import dev.writeonce.core.upload.UploadOutputStream;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code createFile} through the shim, without a store: S3A's settings point at a port nothing
 * listens on, and a pending-file writer sends nothing until its first part is full or it closes.
 */
class RenameShimCreateFileTest {

  private static final String ATTEMPT =
      "s3a://bucket/out/_temporary/0/_temporary/attempt_202611220000_0001_m_000000_0/";

  private RenameShimFileSystem fs;

  @BeforeEach
  void start() throws IOException {
    Configuration conf = new Configuration();
    conf.set("fs.s3a.endpoint", "http://127.0.0.1:9");
    conf.set("fs.s3a.endpoint.region", "us-east-1");
    conf.set("fs.s3a.path.style.access", "true");
    conf.set("fs.s3a.access.key", "unused");
    conf.set("fs.s3a.secret.key", "unused");
    conf.set("fs.s3a.bucket.probe", "0");
    // S3A's own builder then writes without checking the path or a local disk: no request either.
    conf.set("fs.s3a.create.performance", "true");
    conf.set("fs.s3a.fast.upload.buffer", "bytebuffer");
    fs = new RenameShimFileSystem();
    fs.initialize(URI.create("s3a://bucket/"), conf);
  }

  @AfterEach
  void stop() throws IOException {
    fs.close();
  }

  /** The writer behind a stream, once it is known to be the shim's; aborting it sends nothing. */
  private static UploadOutputStream pendingWriter(FSDataOutputStream out) throws IOException {
    assertThat(out.getWrappedStream())
        .as("a pending-file writer, not S3A's own")
        .isInstanceOf(UploadOutputStream.class);
    return (UploadOutputStream) out.getWrappedStream();
  }

  @Test
  void createFileUnderATemporaryDirectoryWritesAPendingUploadToThePredictedKey()
      throws IOException {
    FSDataOutputStream out = fs.createFile(new Path(ATTEMPT + "part-m-00000")).build();
    out.write("row\n".getBytes(StandardCharsets.UTF_8));

    UploadOutputStream writer = pendingWriter(out);
    assertThat(writer.finalKey()).isEqualTo("out/part-m-00000");
    writer.abort();
    assertThat(fs.shimStatistics().filesWritten()).isEqualTo(1);
  }

  @Test
  void recursiveAndNonOverwritingBuildsAreShimmedAlike() throws IOException {
    FSDataOutputStream recursive =
        fs.createFile(new Path(ATTEMPT + "a/part-0")).recursive().overwrite(false).build();
    FSDataOutputStream nonRecursive =
        fs.createFile(new Path(ATTEMPT + "a/part-1")).overwrite(true).bufferSize(4096).build();

    assertThat(pendingWriter(recursive).finalKey()).isEqualTo("out/a/part-0");
    assertThat(pendingWriter(nonRecursive).finalKey()).isEqualTo("out/a/part-1");
    pendingWriter(recursive).abort();
    pendingWriter(nonRecursive).abort();
  }

  @Test
  void outsideTemporaryDirectoriesTheBuilderIsS3asOwn() {
    assertThat(fs.createFile(new Path("s3a://bucket/out/part-m-00000")))
        .isNotInstanceOf(OwnCreateFileBuilder.class);
  }
}
