package dev.writeonce.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.RequestType;
import dev.writeonce.core.store.S3StoreGateway;
import dev.writeonce.core.store.StoreGateway;
import dev.writeonce.teststore.EachStore;
import dev.writeonce.teststore.TestStore;
import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * How each store serves a flat listing that skips a directory inside it (StartAfter past its last
 * possible key): the rename shim's listing of an output whose {@code _temporary} holds a record per
 * file of the job.
 */
@EachStore
class StoreListingsIT {

  /**
   * More than two pages of 1,000 keys (where a store pages by 1,000), so that skipping them saves
   * one.
   */
  private static final int SKIPPED = 2_100;

  private final TestStore store;
  private FileSystem fs;
  private StoreGateway gateway;

  StoreListingsIT(TestStore store) {
    this.store = store;
  }

  @BeforeEach
  void setUp() throws IOException {
    String bucket = store.newBucket("listings");
    Configuration conf = store.configure(new Configuration());
    fs = FileSystem.newInstance(URI.create("s3a://" + bucket + "/"), conf);
    gateway = S3StoreGateway.forFileSystem(fs);
  }

  @AfterEach
  void tearDown() throws IOException {
    fs.close();
  }

  @Test
  void aFlatListingSkippingATemporaryDirectoryReturnsEveryOtherKeyInFewerPages() throws Exception {
    // Keys on both sides of the skipped directory, and names that sort right next to it.
    List<String> kept =
        List.of(
            "out/_SUCCESS",
            "out/_temporary.txt",
            "out/_temporary0",
            "out/_temporaryz/part-0",
            "out/day=1/part-0",
            "out/day=2/part-0");
    List<String> all = new ArrayList<>(kept);
    for (int i = 0; i < SKIPPED; i++) {
      all.add(String.format("out/_temporary/0/task_%04d/part-%04d", i / 50, i));
    }
    putAll(all);
    gateway.putObject("outside/part-0", new byte[] {1}, false);

    long before = lists();
    assertThat(gateway.listObjectsUpTo("out/", 5_000).orElseThrow()).hasSize(all.size());
    long wholePages = lists() - before;
    List<ObjectInfo> listed =
        gateway.listObjectsUpTo("out/", 5_000, "out/_temporary/").orElseThrow();
    long skippingPages = lists() - before - wholePages;

    assertThat(listed).extracting(ObjectInfo::key).containsExactlyElementsOf(kept);
    System.out.printf(
        "%s: %d keys in %d LISTs; skipping %d of them, %d LISTs%n",
        store.name(), all.size(), wholePages, SKIPPED, skippingPages);
    // At most the page that reaches the directory and the one that starts after it.
    assertThat(skippingPages).isLessThanOrEqualTo(Math.min(2, wholePages));
    assertThat(gateway.listObjectsUpTo("out/", kept.size() - 1, "out/_temporary/"))
        .as("more kept keys than asked for")
        .isEmpty();
  }

  private long lists() {
    return gateway.counters().snapshot().getOrDefault(RequestType.LIST_OBJECTS, 0L);
  }

  private void putAll(List<String> keys) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(16);
    try {
      List<Future<String>> puts = new ArrayList<>();
      for (String key : keys) {
        puts.add(pool.submit(() -> gateway.putObject(key, new byte[] {1}, false)));
      }
      for (Future<String> put : puts) {
        put.get();
      }
    } finally {
      pool.shutdown();
    }
  }
}
