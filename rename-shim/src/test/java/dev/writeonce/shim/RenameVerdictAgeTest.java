package dev.writeonce.shim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.store.check.StoreTrust;
import dev.writeonce.core.testing.s3.Handling;
import dev.writeonce.core.testing.s3.MemoryS3;
import dev.writeonce.core.testing.s3.MemoryS3ClientFactory;
import dev.writeonce.core.testing.s3.MemoryS3Settings;
import dev.writeonce.core.upload.UploadPool;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hostile review of d37b2f6: the renames' verdict fast path stands on a verdict past its TTL, which
 * no generation change announces: a store that can no longer be checked is written to.
 */
class RenameVerdictAgeTest {

  private static final String PROCESS = "review-rename-verdict";

  private final MemoryS3 store = new MemoryS3();
  private final AtomicBoolean storeBroken = new AtomicBoolean();
  private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
  private final String endpoint =
      MemoryS3ClientFactory.register(
          store,
          request ->
              storeBroken.get()
                      && request.key() != null
                      && request.key().contains("_writeonce/check-")
                  ? Handling.FAIL_UNSENT
                  : Handling.PROCEED);

  @TempDir Path hostDir;

  @AfterEach
  void tearDown() throws Exception {
    for (SimulatedShimFileSystem instance : SimulatedShimFileSystem.unregister(PROCESS)) {
      instance.close();
    }
    MemoryS3ClientFactory.unregister(endpoint);
  }

  @Test
  void aRenameTakesTheVerdictAgainOnceItIsOlderThanItsTtl() throws Exception {
    store.createBucket("b");
    SimulatedShimFileSystem.register(
        PROCESS,
        nanos::get,
        System::currentTimeMillis,
        (owner, threads) -> new UploadPool(owner, threads),
        (kind, keys) -> {});
    Configuration conf = new Configuration(false);
    MemoryS3Settings.apply(conf, endpoint);
    conf.set("fs.s3a.impl", SimulatedShimFileSystem.class.getName());
    conf.set(SimulatedShimFileSystem.PROCESS, PROCESS);
    conf.setBoolean(StoreTrust.CHECK, true);
    conf.set(StoreTrust.CACHE_DIR, hostDir.toString());
    conf.set(StoreTrust.CACHE_TTL, "1s");
    conf.set(ShimConfig.LISTING_WINDOW, "1s");
    org.apache.hadoop.fs.Path out = new org.apache.hadoop.fs.Path("s3a://b/t");
    FileSystem fs = out.getFileSystem(conf);
    org.apache.hadoop.fs.Path attempt =
        new org.apache.hadoop.fs.Path(
            out, "_temporary/0/_temporary/attempt_20261129_0001_m_000000_0");
    for (String name : new String[] {"a.txt", "b.txt", "c.txt"}) {
      try (FSDataOutputStream o = fs.create(new org.apache.hadoop.fs.Path(attempt, name), true)) {
        o.write(name.getBytes(StandardCharsets.UTF_8));
      }
    }
    // The first rename takes the verdict (a check), the second stands on it from memory.
    for (String name : new String[] {"a.txt", "b.txt"}) {
      assertThat(
              fs.rename(
                  new org.apache.hadoop.fs.Path(attempt, name),
                  new org.apache.hadoop.fs.Path(out, name)))
          .isTrue();
    }

    // The verdict's TTL (1 s) passes, and the store can no longer be checked: the next rename
    // takes the verdict again, and fails having moved nothing.
    Thread.sleep(1_500);
    storeBroken.set(true);

    assertThatThrownBy(
            () ->
                fs.rename(
                    new org.apache.hadoop.fs.Path(attempt, "c.txt"),
                    new org.apache.hadoop.fs.Path(out, "c.txt")))
        .isInstanceOf(java.io.IOException.class)
        .hasMessageContaining("wrote nothing");
    assertThat(store.object("b", "t/c.txt")).isEmpty();
  }
}
