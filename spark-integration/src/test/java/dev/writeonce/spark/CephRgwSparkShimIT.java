package dev.writeonce.spark;

import dev.writeonce.teststore.CephRgw;
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

  /** RGW 16.2 and empty objects: {@link CephRgw#EMPTY_OBJECT_SETTINGS}. */
  @Override
  protected Map<String, String> storeSettings() {
    return CephRgw.EMPTY_OBJECT_SETTINGS;
  }
}
