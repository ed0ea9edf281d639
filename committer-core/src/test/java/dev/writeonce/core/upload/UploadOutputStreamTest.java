package dev.writeonce.core.upload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.errors.ErrorKind;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.store.RequestType;
import dev.writeonce.core.testing.FaultInjectingStore;
import dev.writeonce.core.testing.InMemoryStore;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class UploadOutputStreamTest {

  private static final int PART = 5 << 20;

  private final InMemoryStore memory = new InMemoryStore("bucket");
  private final FaultInjectingStore store = new FaultInjectingStore(memory);
  private final ExecutorService pool = Executors.newFixedThreadPool(4);
  private final Owner attempt = new Owner();

  /** The owner of the writers: what closed, under its name, and what is still open. */
  private static final class Owner implements UploadOutputStream.Listener {
    final Map<String, PendingUpload> closed = new ConcurrentSkipListMap<>();
    final Set<UploadOutputStream> open = ConcurrentHashMap.newKeySet();

    @Override
    public void closed(UploadOutputStream stream, PendingUpload upload) {
      closed.put(stream.name(), upload);
    }

    @Override
    public void finished(UploadOutputStream stream) {
      open.remove(stream);
    }
  }

  @AfterEach
  void tearDown() {
    pool.shutdownNow();
  }

  private UploadOutputStream open(String relative, int buffers) {
    UploadOutputStream out =
        new UploadOutputStream(
            store,
            "s3a://bucket/t/.../" + relative,
            "t/" + relative,
            relative,
            "a_0",
            PART,
            buffers,
            pool,
            attempt);
    attempt.open.add(out);
    return out;
  }

  @Test
  void partsGoUpWhileWritingAndCloseLeavesTheUploadPending() throws Exception {
    UploadOutputStream out = open("big", 2);
    byte[] block = new byte[1 << 20];
    for (int mib = 0; mib < 23; mib++) {
      Arrays.fill(block, (byte) mib);
      out.write(block);
    }
    // Two buffers: the fifth part can only be filled once the third has been sent; the fourth may
    // still be waiting for a thread.
    assertThat(store.calls(RequestType.UPLOAD_PART))
        .as("parts sent before close")
        .isGreaterThanOrEqualTo(3);
    out.close();

    PendingUpload upload = attempt.closed.get("big");
    assertThat(upload.key()).isEqualTo("t/big");
    assertThat(upload.parts()).hasSize(5);
    assertThat(upload.length()).isEqualTo(23L << 20);
    assertThat(memory.keys()).as("nothing completed").isEmpty();
    assertThat(out.peakBufferedBytes()).isLessThanOrEqualTo(2L * PART);
    assertThat(attempt.open).isEmpty();
  }

  @Test
  void aSmallFileIsOneUploadOfOnePartAtClose() throws Exception {
    UploadOutputStream out = open("small", 2);
    out.write("hello".getBytes());
    assertThat(store.calls(RequestType.CREATE_UPLOAD)).isZero();
    out.close();

    assertThat(store.calls(RequestType.CREATE_UPLOAD)).isEqualTo(1);
    assertThat(store.calls(RequestType.UPLOAD_PART)).isEqualTo(1);
    assertThat(attempt.closed.get("small").length()).isEqualTo(5);
    assertThat(out.peakBufferedBytes()).isLessThan(1 << 20);
  }

  @Test
  void anEmptyFileIsOneEmptyPart() throws Exception {
    open("empty", 1).close();
    assertThat(attempt.closed.get("empty").parts()).hasSize(1);
    assertThat(attempt.closed.get("empty").length()).isZero();
  }

  @Test
  void aFailedPartAbortsTheUploadAndTheErrorNamesThePath() throws Exception {
    store.failFrom(RequestType.UPLOAD_PART, 2, ErrorKind.TRANSIENT);
    UploadOutputStream out = open("broken", 2);
    byte[] block = new byte[1 << 20];

    assertThatThrownBy(
            () -> {
              for (int i = 0; i < 30; i++) {
                out.write(block);
              }
              out.close();
            })
        .hasMessageContaining("s3a://bucket/t/.../broken")
        .hasMessageContaining("injected");
    assertThat(memory.openUploadIds()).isEmpty();
    assertThat(attempt.closed).isEmpty();
    assertThat(attempt.open).isEmpty();
  }

  @Test
  void abortOfAnOpenWriterAbortsItsUpload() throws Exception {
    UploadOutputStream out = open("aborted", 2);
    out.write(new byte[PART + 10]);
    out.abort();
    assertThat(memory.openUploadIds()).isEmpty();
    assertThatThrownBy(() -> out.write(1)).hasMessageContaining("closed");
  }
}
