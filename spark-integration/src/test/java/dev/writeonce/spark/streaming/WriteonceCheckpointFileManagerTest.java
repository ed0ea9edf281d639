package dev.writeonce.spark.streaming;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.store.check.StoreTrust;
import dev.writeonce.core.testing.s3.Handling;
import dev.writeonce.core.testing.s3.MemoryS3;
import dev.writeonce.core.testing.s3.MemoryS3ClientFactory;
import dev.writeonce.core.testing.s3.MemoryS3Settings;
import dev.writeonce.core.testing.s3.RequestHook;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileAlreadyExistsException;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.execution.streaming.checkpointing.CheckpointFileManager.CancellableFSDataOutputStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * The checkpoint file manager through Hadoop's real S3AFileSystem over the in-memory S3: what each
 * call sends, what a reader can see, and which of two runs wins a batch.
 */
class WriteonceCheckpointFileManagerTest {

  private static final String BUCKET = "bucket";
  private static final Path LOG = new Path("s3a://bucket/checkpoints/q1/offsets");

  private final MemoryS3 store = new MemoryS3();
  private volatile RequestHook hook = RequestHook.NONE;
  private String endpoint;
  private Configuration conf;

  @BeforeEach
  void start() {
    endpoint = MemoryS3ClientFactory.register(store, request -> hook.before(request));
    conf = MemoryS3Settings.s3aConfiguration(endpoint);
  }

  @AfterEach
  void stop() {
    MemoryS3ClientFactory.unregister(endpoint);
  }

  private WriteonceCheckpointFileManager manager() throws IOException {
    return new WriteonceCheckpointFileManager(LOG, conf);
  }

  private static void write(CancellableFSDataOutputStream out, String text) throws IOException {
    out.write(text.getBytes(StandardCharsets.UTF_8));
  }

  /** Another run of the query writes the batch first, through its own manager. */
  private void theirRunWrites(String name, String text) throws IOException {
    CancellableFSDataOutputStream theirs = manager().createAtomic(new Path(LOG, name), false);
    write(theirs, text);
    theirs.close();
  }

  private String content(String key) {
    return new String(store.getObject(BUCKET, key).orElseThrow(), StandardCharsets.UTF_8);
  }

  @Test
  void aFileIsStoredWholeByOnePutWhenClosedAndNotBefore() throws IOException {
    WriteonceCheckpointFileManager manager = manager();
    long before = store.requestCounts().values().stream().mapToLong(Long::longValue).sum();
    CancellableFSDataOutputStream out = manager.createAtomic(new Path(LOG, "0"), false);
    write(out, "v1\n{\"batchWatermarkMs\":0}\n");

    assertThat(store.keys(BUCKET)).isEmpty();
    assertThat(store.requestCounts().values().stream().mapToLong(Long::longValue).sum())
        .isEqualTo(before);

    out.close();
    out.close(); // a second close sends nothing

    assertThat(content("checkpoints/q1/offsets/0")).isEqualTo("v1\n{\"batchWatermarkMs\":0}\n");
    assertThat(store.requestCount("PutObject")).isEqualTo(1);
    assertThat(store.requestCount("CopyObject")).isZero();
    assertThat(store.requestCount("DeleteObjects") + store.requestCount("DeleteObject")).isZero();
  }

  @Test
  void ofTwoRunsWritingOneBatchExactlyOneSucceedsEvenWithTheSameBytes() throws IOException {
    WriteonceCheckpointFileManager first = manager();
    WriteonceCheckpointFileManager second = manager();
    CancellableFSDataOutputStream mine = first.createAtomic(new Path(LOG, "5"), false);
    CancellableFSDataOutputStream theirs = second.createAtomic(new Path(LOG, "5"), false);
    write(mine, "v1\nsame\n");
    write(theirs, "v1\nsame\n");
    theirs.close();
    String winner =
        store.object(BUCKET, "checkpoints/q1/offsets/5").orElseThrow().metadata().toString();

    assertThatThrownBy(mine::close)
        .isInstanceOf(FileAlreadyExistsException.class)
        .hasMessageContaining("batch 5 of the log at s3a://bucket/checkpoints/q1/offsets")
        .hasMessageContaining("another run of this streaming query")
        .hasMessageContaining("stop one of them");
    mine.cancel(); // as Spark's log does after a failed close: nothing more is sent

    assertThat(store.requestCount("PutObject")).isEqualTo(2);
    assertThat(winner).contains(WriteonceCheckpointFileManager.WRITER);
    assertThat(store.object(BUCKET, "checkpoints/q1/offsets/5").orElseThrow().metadata().toString())
        .isEqualTo(winner);
  }

  @Test
  void aWriteWhoseAnswerWasLostIsTakenAsStoredOnceItsObjectIsFoundItsOwn() throws IOException {
    WriteonceCheckpointFileManager manager = manager();
    AtomicInteger puts = new AtomicInteger();
    hook =
        request ->
            request.operation().equals("PutObject") && puts.getAndIncrement() == 0
                ? Handling.LOSE_ANSWER
                : Handling.PROCEED;
    CancellableFSDataOutputStream out = manager.createAtomic(new Path(LOG, "7"), false);
    write(out, "v1\nseven\n");

    out.close();

    assertThat(content("checkpoints/q1/offsets/7")).isEqualTo("v1\nseven\n");
  }

  @Test
  void aLostAnswerWithAnotherRunsObjectThereIsAConflictNamingTheBatch() throws IOException {
    WriteonceCheckpointFileManager manager = manager();
    theirRunWrites("8", "v1\neight\n");
    hook =
        request ->
            request.operation().equals("PutObject") ? Handling.LOSE_ANSWER : Handling.PROCEED;
    CancellableFSDataOutputStream mine = manager.createAtomic(new Path(LOG, "8"), false);
    write(mine, "v1\neight\n");

    // The lost answer hides the store's 412; the object found is another writer's.
    assertThatThrownBy(mine::close)
        .isInstanceOf(FileAlreadyExistsException.class)
        .hasMessageContaining("batch 8 of the log");
    assertThat(content("checkpoints/q1/offsets/8")).isEqualTo("v1\neight\n");
  }

  @Test
  void aRefusedWriteWhoseOwnerCannotBeReadIsStillReportedAsTheBatchWrittenByAnother()
      throws IOException {
    for (Handling head : List.of(Handling.FAIL_UNSENT, Handling.LOSE_ANSWER)) {
      String batch = head == Handling.FAIL_UNSENT ? "5" : "6";
      theirRunWrites(batch, "v1\ntheirs\n");
      WriteonceCheckpointFileManager mine = manager();
      hook = request -> request.operation().equals("HeadObject") ? head : Handling.PROCEED;
      CancellableFSDataOutputStream out = mine.createAtomic(new Path(LOG, batch), false);
      write(out, "v1\nmine\n");

      assertThatThrownBy(out::close)
          .as("HEAD %s", head)
          .isInstanceOf(FileAlreadyExistsException.class)
          .hasMessageContaining("batch " + batch + " of the log")
          .hasMessageContaining("could not be read")
          .cause()
          .hasMessageContaining("412");
      out.cancel();
      hook = RequestHook.NONE;
      assertThat(content("checkpoints/q1/offsets/" + batch)).isEqualTo("v1\ntheirs\n");
    }
  }

  @Test
  void aConditionalWriteThatMetAnotherInFlightIsAskedAgainAndLosesToIt() throws IOException {
    WriteonceCheckpointFileManager mine = manager();
    AtomicInteger puts = new AtomicInteger();
    hook =
        request -> {
          if (request.operation().equals("PutObject") && puts.getAndIncrement() == 0) {
            // AWS answers 409 while another conditional write of the key is in flight; it lands.
            store.putObject(
                BUCKET,
                "checkpoints/q1/offsets/9",
                "v1\ntheirs\n".getBytes(StandardCharsets.UTF_8));
            throw (S3Exception)
                S3Exception.builder()
                    .statusCode(409)
                    .awsErrorDetails(
                        AwsErrorDetails.builder()
                            .errorCode("ConditionalRequestConflict")
                            .serviceName("S3")
                            .build())
                    .message("ConditionalRequestConflict")
                    .build();
          }
          return Handling.PROCEED;
        };
    CancellableFSDataOutputStream out = mine.createAtomic(new Path(LOG, "9"), false);
    write(out, "v1\nmine\n");

    assertThatThrownBy(out::close)
        .isInstanceOf(FileAlreadyExistsException.class)
        .hasMessageContaining("batch 9 of the log");
    assertThat(puts.get()).as("the write, then once again").isEqualTo(2);
    assertThat(content("checkpoints/q1/offsets/9")).isEqualTo("v1\ntheirs\n");
  }

  @Test
  void aWriteAfterCloseOrCancelFailsAsOnAClosedStream() throws IOException {
    WriteonceCheckpointFileManager manager = manager();
    CancellableFSDataOutputStream closed = manager.createAtomic(new Path(LOG, "0"), false);
    write(closed, "zero");
    closed.close();
    CancellableFSDataOutputStream cancelled = manager.createAtomic(new Path(LOG, "1"), true);
    write(cancelled, "one");
    cancelled.cancel();

    assertThatThrownBy(() -> write(closed, "more"))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("closed or cancelled");
    assertThatThrownBy(() -> cancelled.write(1)).isInstanceOf(IOException.class);
    assertThat(content("checkpoints/q1/offsets/0")).isEqualTo("zero");
    assertThat(store.keys(BUCKET)).containsExactly("checkpoints/q1/offsets/0");
  }

  @Test
  void theStoreVerdictIsTakenAgainOnceItsAgeRunsOut(@TempDir java.nio.file.Path hostDir)
      throws Exception {
    AtomicBoolean broken = new AtomicBoolean();
    hook =
        request ->
            broken.get() && request.key() != null && request.key().contains("_writeonce/check-")
                ? Handling.FAIL_UNSENT
                : Handling.PROCEED;
    conf.setBoolean(StoreTrust.CHECK, true);
    conf.set(StoreTrust.CACHE_DIR, hostDir.toString());
    conf.set(StoreTrust.CACHE_TTL, "1s");
    WriteonceCheckpointFileManager manager = manager();
    for (String batch : List.of("0", "1")) {
      CancellableFSDataOutputStream out = manager.createAtomic(new Path(LOG, batch), false);
      write(out, batch);
      out.close();
    }

    Thread.sleep(1_500);
    broken.set(true); // the store can no longer be checked: no verdict is left to stand on
    CancellableFSDataOutputStream third = manager.createAtomic(new Path(LOG, "2"), false);
    write(third, "two");

    assertThatThrownBy(third::close)
        .isInstanceOf(IOException.class)
        .hasMessageContaining("nothing");
    assertThat(store.object(BUCKET, "checkpoints/q1/offsets/2")).isEmpty();
  }

  @Test
  void aCancelledFileLeavesNothingAndSendsNothing() throws IOException {
    WriteonceCheckpointFileManager manager = manager();
    CancellableFSDataOutputStream out = manager.createAtomic(new Path(LOG, "1"), false);
    write(out, "partial");

    out.cancel();
    out.close();

    assertThat(store.keys(BUCKET)).isEmpty();
    assertThat(store.requestCounts()).isEmpty();
    assertThat(store.openUploads(BUCKET)).isEmpty();
  }

  @Test
  void aLargeStateFileGoesFromALocalFileInOnePutThatOverwrites() throws IOException {
    WriteonceCheckpointFileManager manager =
        new WriteonceCheckpointFileManager(new Path("s3a://bucket/checkpoints/q1/state"), conf);
    Path delta = new Path("s3a://bucket/checkpoints/q1/state/0/3/2.delta");
    byte[] large = new byte[WriteonceCheckpointFileManager.MEMORY_LIMIT + 123];
    Arrays.fill(large, (byte) 7);
    for (int run = 0; run < 2; run++) {
      CancellableFSDataOutputStream out = manager.createAtomic(delta, true);
      out.write(large);
      out.close();
    }

    assertThat(store.getObject(BUCKET, "checkpoints/q1/state/0/3/2.delta").orElseThrow())
        .isEqualTo(large);
    assertThat(store.requestCount("PutObject")).isEqualTo(2);
    assertThat(store.requestCount("CreateMultipartUpload")).isZero();
    try (InputStream in = manager.open(delta)) {
      assertThat(in.readAllBytes()).isEqualTo(large);
    }
  }

  @Test
  void existsListOpenAndDeleteAnswerAsAFileSystemWouldWithoutDirectories() throws IOException {
    WriteonceCheckpointFileManager manager = manager();
    manager.mkdirs(LOG);
    assertThat(store.requestCounts()).isEmpty();
    assertThat(manager.exists(LOG)).isFalse();
    assertThat(manager.list(LOG)).isEmpty();
    for (String name : new String[] {"0", "1", "2.compact", "sub/x"}) {
      CancellableFSDataOutputStream out = manager.createAtomic(new Path(LOG, name), false);
      write(out, name);
      out.close();
    }

    assertThat(manager.exists(LOG)).isTrue();
    assertThat(manager.exists(new Path(LOG, "1"))).isTrue();
    assertThat(manager.exists(new Path(LOG, "3"))).isFalse();
    assertThat(manager.exists(new Path(LOG, "sub"))).isTrue();
    FileStatus[] listed = manager.list(LOG, path -> !path.getName().endsWith(".compact"));
    assertThat(Arrays.stream(listed).map(s -> s.getPath().getName() + (s.isFile() ? "" : "/")))
        .containsExactlyInAnyOrder("0", "1", "sub/");
    assertThat(Arrays.stream(listed).filter(FileStatus::isFile).mapToLong(FileStatus::getLen))
        .containsExactly(1L, 1L);
    assertThat(listed[0].getPath().toString()).startsWith("s3a://bucket/checkpoints/q1/offsets/");
    try (InputStream in = manager.open(new Path(LOG, "2.compact"))) {
      assertThat(new String(in.readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("2.compact");
    }
    assertThatThrownBy(() -> manager.open(new Path(LOG, "9")))
        .isInstanceOf(FileNotFoundException.class)
        .hasMessageContaining("s3a://bucket/checkpoints/q1/offsets/9");

    manager.delete(new Path(LOG, "0"));
    manager.delete(new Path(LOG, "sub"));
    manager.delete(new Path(LOG, "absent"));

    assertThat(store.keys(BUCKET))
        .containsExactly("checkpoints/q1/offsets/1", "checkpoints/q1/offsets/2.compact");
    assertThat(manager.createCheckpointDirectory().toString())
        .isEqualTo("s3a://bucket/checkpoints/q1/offsets");
    assertThat(manager.isLocal()).isFalse();
  }

  @Test
  void aCheckpointOffS3IsKeptBySparksOwnManager(
      @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws IOException {
    Path local = new Path(dir.toUri().toString(), "offsets");
    WriteonceCheckpointFileManager manager =
        new WriteonceCheckpointFileManager(local, new Configuration());
    manager.mkdirs(local);
    CancellableFSDataOutputStream out = manager.createAtomic(new Path(local, "0"), false);
    write(out, "zero");
    out.close();

    assertThat(manager.exists(new Path(local, "0"))).isTrue();
    assertThat(manager.isLocal()).isTrue();
    assertThat(store.requestCounts()).isEmpty();
  }

  @Test
  void aNameWithAColonIsListedAsS3aListsIt() throws IOException {
    store.putObject(BUCKET, "checkpoints/q1/offsets/0", new byte[] {1});
    store.putObject(BUCKET, "checkpoints/q1/offsets/a:b", new byte[] {1});

    FileStatus[] listed = manager().list(LOG);

    assertThat(Arrays.stream(listed).map(s -> s.getPath().toString()))
        .containsExactlyInAnyOrder(
            "s3a://bucket/checkpoints/q1/offsets/0", "s3a://bucket/checkpoints/q1/offsets/a:b");
  }

  @Test
  void deletingAFileLeavesADirectoryOfTheSameNameAsS3aDoes() throws IOException {
    for (String key : List.of("5", "5/x", "5/y/z", "6/x", "6/y/z")) {
      store.putObject(BUCKET, "checkpoints/q1/offsets/" + key, new byte[] {1});
    }
    WriteonceCheckpointFileManager manager = manager();

    manager.delete(new Path(LOG, "5"));
    manager.delete(new Path(LOG, "6"));

    assertThat(store.keys(BUCKET))
        .containsExactly("checkpoints/q1/offsets/5/x", "checkpoints/q1/offsets/5/y/z");
  }

  @Test
  void aFileLargerThanTheMemoryLimitIsReadAsAStream() throws IOException {
    byte[] large = new byte[WriteonceCheckpointFileManager.MEMORY_LIMIT * 2 + 5];
    new java.util.Random(7).nextBytes(large);
    store.putObject(BUCKET, "checkpoints/q1/offsets/snapshot", large);

    try (InputStream in = manager().open(new Path(LOG, "snapshot"))) {
      assertThat(in.readAllBytes()).isEqualTo(large);
    }
    try (InputStream in = manager().open(new Path(LOG, "snapshot"))) {
      assertThat(in).isNotInstanceOf(CheckpointInput.class);
    }
  }
}
