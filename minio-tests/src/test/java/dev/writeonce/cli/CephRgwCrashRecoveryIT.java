package dev.writeonce.cli;

import dev.writeonce.teststore.TestStore;
import dev.writeonce.teststore.TestStores;
import org.junit.jupiter.api.Tag;

@Tag("ceph-rgw")
class CephRgwCrashRecoveryIT extends AbstractCrashRecoveryIT {
  @Override
  protected TestStore store() {
    return TestStores.cephRgw();
  }
}
