package dev.writeonce.spark;

import dev.writeonce.teststore.TestStore;
import dev.writeonce.teststore.TestStores;
import java.util.Map;
import org.junit.jupiter.api.Tag;

@Tag("ceph-rgw")
class CephRgwSparkShimIT extends AbstractSparkShimIT {
  @Override
  protected TestStore store() {
    return TestStores.cephRgw();
  }

  /** RGW 16.2 refuses empty PUTs with signed payloads: see CephRgwRenameShimIT. */
  @Override
  protected Map<String, String> storeSettings() {
    return Map.of("fs.s3a.signing-algorithm", "AWS4UnsignedPayloadSignerType");
  }
}
