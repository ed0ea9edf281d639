package dev.writeonce.core.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.testing.s3.Handling;
import dev.writeonce.core.testing.s3.MemoryS3;
import dev.writeonce.core.testing.s3.MemoryS3Client;
import dev.writeonce.core.testing.s3.RequestHook;
import dev.writeonce.core.testing.s3.StoreRequest;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The gateway reads listings by the S3 API's contract: a page may hold fewer entries than asked
 * (none, even) while the listing goes on, and only {@code IsTruncated} tells.
 */
class S3StoreGatewayPagesTest {

  private final MemoryS3 store = new MemoryS3();
  private final S3StoreGateway gateway =
      S3StoreGateway.forClient(
          new MemoryS3Client(
              store,
              new RequestHook() {
                @Override
                public Handling before(StoreRequest request) {
                  return Handling.PROCEED;
                }

                @Override
                public int pageSize(StoreRequest request, int requested) {
                  return 1; // every page as short as it can be while the listing goes on
                }
              }),
          "b");

  private void put(String key) {
    store.putObject("b", key, "x".getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void theChildrenOfADirectoryAreListedWholeAcrossShortTruncatedPages() throws Exception {
    put("t/.hive-staging_1/-ext-10000/f");
    put("t/000000_0");
    put("t/000001_0");
    put("t/p=1/a");

    assertThat(gateway.listChildren("t/", 1000))
        .containsExactlyInAnyOrder("t/.hive-staging_1/", "t/000000_0", "t/000001_0", "t/p=1/");
    assertThat(gateway.listChildren("t/", 2)).hasSize(2);
  }

  @Test
  void aProbeFindsAFileAndADirectoryBeyondShortPagesOfKeysSharingTheName() throws Exception {
    put("t/part-0");
    put("t/part-0-1");
    put("t/part-0.crc");
    put("t/part-0/inside");

    KeyProbe probe = gateway.probe("t/part-0");

    assertThat(probe.file()).isPresent();
    assertThat(probe.directory()).isTrue();
    assertThat(gateway.probe("t/part-1").exists()).isFalse();
  }

  @Test
  void aFlatListingSkippingADirectoryKeepsEveryOtherKeyAcrossShortPages() throws Exception {
    put("out/_temporary/0/a");
    put("out/_temporary/0/b");
    put("out/p=1/c");
    put("out/part-0");

    List<ObjectInfo> listed = gateway.listObjectsUpTo("out/", 100, "out/_temporary/").orElseThrow();

    assertThat(listed).extracting(ObjectInfo::key).containsExactly("out/p=1/c", "out/part-0");
  }
}
