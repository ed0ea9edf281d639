package dev.writeonce.spark;

import dev.writeonce.teststore.TestStore;
import dev.writeonce.teststore.TestStores;
import org.junit.jupiter.api.Tag;

@Tag("ceph-rgw")
class CephRgwSparkShimIT extends AbstractSparkShimIT {
  @Override
  protected TestStore store() {
    return TestStores.cephRgw();
  }
}
