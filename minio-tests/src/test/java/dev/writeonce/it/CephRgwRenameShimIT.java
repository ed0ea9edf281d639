package dev.writeonce.it;

import dev.writeonce.teststore.TestStore;
import dev.writeonce.teststore.TestStores;
import org.junit.jupiter.api.Tag;

@Tag("ceph-rgw")
class CephRgwRenameShimIT extends AbstractRenameShimIT {
  @Override
  protected TestStore store() {
    return TestStores.cephRgw();
  }
}
