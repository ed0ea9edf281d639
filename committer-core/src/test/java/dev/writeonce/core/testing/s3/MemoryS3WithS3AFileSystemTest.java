package dev.writeonce.core.testing.s3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.errors.ErrorKind;
import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.UploadPart;
import dev.writeonce.core.store.KeyProbe;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.S3StoreGateway;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.s3a.S3AFileSystem;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.lib.output.FileOutputCommitter;
import org.apache.hadoop.mapreduce.task.JobContextImpl;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Hadoop's real S3AFileSystem and FileOutputCommitter, and the gateway, over {@link MemoryS3}. */
class MemoryS3WithS3AFileSystemTest {

  private static final String BUCKET = "bucket";
  private static final int MIB = 1024 * 1024;

  private final MemoryS3 store = new MemoryS3();
  private String endpoint;
  private S3AFileSystem fs;

  @BeforeEach
  void start() throws IOException {
    endpoint = MemoryS3ClientFactory.register(store, RequestHook.NONE);
    fs = new S3AFileSystem();
    fs.initialize(URI.create("s3a://" + BUCKET + "/"), MemoryS3Settings.s3aConfiguration(endpoint));
  }

  @AfterEach
  void stop() throws IOException {
    fs.close();
    MemoryS3ClientFactory.unregister(endpoint);
  }

  @Test
  void writesFilesAndReadsThemBackWholeAndFromAnOffset() throws IOException {
    byte[] small = "a small file".getBytes(StandardCharsets.UTF_8);
    byte[] large = randomBytes(6 * MIB + 123);

    write(new Path("/data/small"), small);
    write(new Path("/data/large"), large);

    assertThat(store.getObject(BUCKET, "data/small")).contains(small);
    assertThat(store.getObject(BUCKET, "data/large"))
        .hasValueSatisfying(b -> assertThat(b).isEqualTo(large));
    // One part of 5 MiB and the rest: a multipart upload, completed.
    assertThat(store.object(BUCKET, "data/large").orElseThrow().etag()).endsWith("-2\"");
    assertThat(store.requestCount("UploadPart")).isEqualTo(2);
    assertThat(store.openUploads(BUCKET)).isEmpty();

    assertThat(read(new Path("/data/small"))).isEqualTo(small);
    assertThat(read(new Path("/data/large"))).isEqualTo(large);
    try (FSDataInputStream in = fs.open(new Path("/data/large"))) {
      byte[] middle = new byte[600];
      in.readFully(6 * MIB - 500, middle);
      assertThat(middle).isEqualTo(Arrays.copyOfRange(large, 6 * MIB - 500, 6 * MIB + 100));
    }
  }

  @Test
  void tellsFilesFromDirectoriesAndMissingPaths() throws IOException {
    assertThat(fs.mkdirs(new Path("/empty"))).isTrue();
    write(new Path("/dir/sub/file"), new byte[42]);

    FileStatus file = fs.getFileStatus(new Path("/dir/sub/file"));
    assertThat(file.isFile()).isTrue();
    assertThat(file.getLen()).isEqualTo(42);
    assertThat(file.getModificationTime()).isEqualTo(MemoryS3.START_MILLIS);
    assertThat(fs.getFileStatus(new Path("/dir")).isDirectory()).isTrue();
    assertThat(fs.getFileStatus(new Path("/dir/sub")).isDirectory()).isTrue();
    assertThat(fs.getFileStatus(new Path("/empty")).isDirectory()).isTrue();
    assertThatThrownBy(() -> fs.getFileStatus(new Path("/missing")))
        .isInstanceOf(FileNotFoundException.class);
    assertThatThrownBy(() -> fs.getFileStatus(new Path("/dir/sub/fil")))
        .isInstanceOf(FileNotFoundException.class);
  }

  @Test
  void listsADirectory() throws IOException {
    write(new Path("/list/b"), new byte[1]);
    write(new Path("/list/a"), new byte[2]);
    write(new Path("/list/sub/c"), new byte[3]);
    fs.mkdirs(new Path("/list/empty"));

    List<String> names = new ArrayList<>();
    for (FileStatus status : fs.listStatus(new Path("/list"))) {
      names.add(status.getPath().getName() + (status.isDirectory() ? "/" : ""));
    }

    assertThat(names).containsExactlyInAnyOrder("a", "b", "sub/", "empty/");
    assertThat(fs.listStatus(new Path("/list/sub"))).hasSize(1);
  }

  @Test
  void renamesAFileAndADirectoryByCopying() throws IOException {
    write(new Path("/from/one"), "1".getBytes(StandardCharsets.UTF_8));
    write(new Path("/from/two"), "22".getBytes(StandardCharsets.UTF_8));
    byte[] large = randomBytes(5 * MIB + 1);
    write(new Path("/big"), large);

    assertThat(fs.rename(new Path("/from/one"), new Path("/moved"))).isTrue();
    assertThat(store.requestCount("CopyObject")).isEqualTo(1);

    assertThat(fs.rename(new Path("/from"), new Path("/to"))).isTrue();
    assertThat(store.requestCount("CopyObject")).isEqualTo(2);

    // At the multipart threshold S3A copies through the transfer manager: still one CopyObject.
    assertThat(fs.rename(new Path("/big"), new Path("/renamed-big"))).isTrue();
    assertThat(store.requestCount("CopyObject")).isEqualTo(3);

    assertThat(store.objects(BUCKET, "").keySet())
        .containsExactly("moved", "renamed-big", "to/two");
    assertThat(store.getObject(BUCKET, "renamed-big"))
        .hasValueSatisfying(b -> assertThat(b).isEqualTo(large));
    assertThat(fs.exists(new Path("/from"))).isFalse();
  }

  @Test
  void deletesADirectoryRecursively() throws IOException {
    for (int i = 0; i < 30; i++) {
      write(new Path("/tree/d" + (i % 3) + "/f" + i), new byte[] {(byte) i});
    }
    write(new Path("/kept"), new byte[1]);

    assertThat(fs.delete(new Path("/tree"), true)).isTrue();

    assertThat(store.objects(BUCKET, "tree")).isEmpty();
    assertThat(store.objects(BUCKET, "").keySet()).containsExactly("kept");
    assertThat(fs.exists(new Path("/tree"))).isFalse();
  }

  @Test
  void s3aRetriesAThrottledRequestAndALostAnswer() throws IOException {
    List<String> puts = new ArrayList<>();
    RequestHook flaky =
        request -> {
          if (!request.operation().equals("PutObject")) {
            return Handling.PROCEED;
          }
          puts.add(request.key());
          return switch (puts.size()) {
            case 1 -> Handling.FAIL_UNSENT;
            case 2 -> Handling.LOSE_ANSWER;
            default -> Handling.PROCEED;
          };
        };
    String flakyEndpoint = MemoryS3ClientFactory.register(store, flaky);
    try (S3AFileSystem flakyFs = new S3AFileSystem()) {
      flakyFs.initialize(
          URI.create("s3a://" + BUCKET + "/"), MemoryS3Settings.s3aConfiguration(flakyEndpoint));
      try (FSDataOutputStream out = flakyFs.create(new Path("/retried"), true)) {
        out.write(7);
      }
    } finally {
      MemoryS3ClientFactory.unregister(flakyEndpoint);
    }

    assertThat(puts).containsExactly("retried", "retried", "retried");
    assertThat(store.getObject(BUCKET, "retried")).contains(new byte[] {7});
  }

  @Test
  void fileOutputCommitterCommitsAJobOfTwoTasks() throws Exception {
    JobConf conf = new JobConf(MemoryS3Settings.s3aConfiguration(endpoint));
    conf.setInt(FileOutputCommitter.FILEOUTPUTCOMMITTER_ALGORITHM_VERSION, 1);
    Path output = new Path("s3a://" + BUCKET + "/out");
    JobID jobId = new JobID("memory", 1);
    JobContext job = new JobContextImpl(conf, jobId);
    FileOutputCommitter jobCommitter = new FileOutputCommitter(output, job);
    jobCommitter.setupJob(job);

    for (int task = 0; task < 2; task++) {
      TaskAttemptID attempt = new TaskAttemptID(new TaskID(jobId, TaskType.REDUCE, task), 0);
      TaskAttemptContext context = new TaskAttemptContextImpl(new JobConf(conf), attempt);
      FileOutputCommitter committer = new FileOutputCommitter(output, context);
      committer.setupTask(context);
      Path file = new Path(committer.getWorkPath(), "part-r-0000" + task);
      try (FileSystem taskFs = file.getFileSystem(context.getConfiguration());
          FSDataOutputStream out = taskFs.create(file, false)) {
        out.write(("task " + task).getBytes(StandardCharsets.UTF_8));
      }
      assertThat(committer.needsTaskCommit(context)).isTrue();
      committer.commitTask(context);
    }
    jobCommitter.commitJob(job);

    assertThat(store.objects(BUCKET, "out/").keySet())
        .containsExactly("out/_SUCCESS", "out/part-r-00000", "out/part-r-00001");
    assertThat(store.getObject(BUCKET, "out/part-r-00001"))
        .contains("task 1".getBytes(StandardCharsets.UTF_8));
    // v1 renames twice: task attempt to committed task, committed task to the destination.
    assertThat(store.requestCount("CopyObject")).isEqualTo(4);
  }

  @Test
  void theGatewayRunsOnTheDoubleThroughTheFileSystem() throws Exception {
    S3StoreGateway gateway = S3StoreGateway.forFileSystem(fs);
    byte[] record = "{\"v\":1}".getBytes(StandardCharsets.UTF_8);

    String etag = gateway.putObject("job/manifest", record, true);
    assertThat(etag).isEqualTo(store.object(BUCKET, "job/manifest").orElseThrow().plainEtag());
    assertThatThrownBy(() -> gateway.putObject("job/manifest", record, true))
        .isInstanceOfSatisfying(
            StoreException.class, e -> assertThat(e.is(ErrorKind.PRECONDITION_FAILED)).isTrue());
    assertThat(gateway.peekObject("job/manifest", 1, head -> head[0] == '{'))
        .hasValueSatisfying(peeked -> assertThat(peeked.body()).isEqualTo(record));

    String uploadId = gateway.createUpload("out/part-0");
    UploadPart first =
        gateway.uploadPart("out/part-0", uploadId, 1, ByteBuffer.wrap(randomBytes(5 * MIB)));
    UploadPart second =
        gateway.uploadPart("out/part-0", uploadId, 2, ByteBuffer.wrap(new byte[10]));
    assertThat(gateway.listUploadsUnder("out/")).hasSize(1);
    PendingUpload pending =
        new PendingUpload(BUCKET, "out/part-0", uploadId, List.of(first, second), "attempt_0");
    assertThat(gateway.completeUpload(pending)).isEqualTo(pending.expectedEtag().orElseThrow());
    assertThatThrownBy(() -> gateway.completeUpload(pending))
        .isInstanceOfSatisfying(
            StoreException.class, e -> assertThat(e.is(ErrorKind.NO_SUCH_UPLOAD)).isTrue());

    assertThat(gateway.listObjectsUpTo("", 10).orElseThrow())
        .extracting(ObjectInfo::key)
        .containsExactly("job/manifest", "out/part-0");
    assertThat(gateway.listChildren("", 10)).containsExactly("job/", "out/");
    KeyProbe probe = gateway.probe("out");
    assertThat(probe.directory()).isTrue();
    assertThat(probe.file()).isEmpty();

    gateway.deleteObjects(List.of("job/manifest", "out/part-0", "never-written"));
    assertThat(store.objects(BUCKET, "")).isEmpty();
    assertThat(gateway.storeNowMillis()).isBetween(store.nowMillis(), store.nowMillis() + 60_000);
  }

  private void write(Path path, byte[] bytes) throws IOException {
    try (FSDataOutputStream out = fs.create(path, true)) {
      out.write(bytes);
    }
  }

  private byte[] read(Path path) throws IOException {
    try (FSDataInputStream in = fs.open(path)) {
      return in.readAllBytes();
    }
  }

  private static byte[] randomBytes(int size) {
    byte[] bytes = new byte[size];
    new Random(size).nextBytes(bytes);
    return bytes;
  }
}
