package dev.writeonce.magic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
 * {@code createFile} on a magic path, without a store: S3A's settings point at a port nothing
 * listens on, and a magic writer sends nothing until its first part is full or it closes.
 */
class MagicS3AFileSystemCreateFileTest {

  private static final String ATTEMPT = "s3a://bucket/out/__writeonce_magic-j1/attempt_0/";

  private MagicS3AFileSystem fs;

  /** S3A settings under which initialize and S3A's own create send no request. */
  static Configuration offline() {
    Configuration conf = new Configuration();
    // S3A's own writer buffers in memory, so it needs no local directory either.
    conf.set("fs.s3a.fast.upload.buffer", "bytebuffer");
    conf.set("fs.s3a.endpoint", "http://127.0.0.1:9");
    conf.set("fs.s3a.endpoint.region", "us-east-1");
    conf.set("fs.s3a.path.style.access", "true");
    conf.set("fs.s3a.access.key", "unused");
    conf.set("fs.s3a.secret.key", "unused");
    conf.set("fs.s3a.bucket.probe", "0");
    // S3A's own builder then creates without checking the path, so it too sends nothing.
    conf.set("fs.s3a.create.performance", "true");
    return conf;
  }

  @BeforeEach
  void start() throws IOException {
    fs = new MagicS3AFileSystem();
    fs.initialize(URI.create("s3a://bucket/"), offline());
  }

  @AfterEach
  void stop() throws IOException {
    fs.delete(new Path(ATTEMPT), true);
    fs.close();
  }

  @Test
  void createFileOnAMagicPathStreamsAPendingUpload() throws IOException {
    Path file = new Path(ATTEMPT + "__base/day=1/part-0");

    FSDataOutputStream out = fs.createFile(file).overwrite(true).build();
    out.write("row\n".getBytes(StandardCharsets.UTF_8));

    assertThat(out.getWrappedStream()).isInstanceOf(UploadOutputStream.class);
    assertThat(((UploadOutputStream) out.getWrappedStream()).finalKey())
        .isEqualTo("out/day=1/part-0");
    assertThat(fs.getFileStatus(file).getLen()).as("known to the attempt while open").isEqualTo(4);
  }

  @Test
  void createFileWithRecursiveAndPermissionStillStreamsAPendingUpload() throws IOException {
    Path file = new Path(ATTEMPT + "__base/part-1");

    FSDataOutputStream out =
        fs.createFile(file)
            .recursive()
            .overwrite(false)
            .bufferSize(4096)
            .permission(org.apache.hadoop.fs.permission.FsPermission.getFileDefault())
            .build();

    assertThat(out.getWrappedStream()).isInstanceOf(UploadOutputStream.class);
  }

  @Test
  void appendFileIsRefusedAsS3aRefusesIt() {
    assertThatThrownBy(() -> fs.appendFile(new Path(ATTEMPT + "__base/part-2")).build())
        .isInstanceOf(UnsupportedOperationException.class);
  }
}
