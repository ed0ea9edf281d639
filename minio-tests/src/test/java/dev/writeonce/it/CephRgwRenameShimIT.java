package dev.writeonce.it;

import dev.writeonce.teststore.CephRgw;
import dev.writeonce.teststore.TestStore;
import dev.writeonce.teststore.TestStores;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Tag;

@Tag("ceph-rgw")
class CephRgwRenameShimIT extends AbstractRenameShimIT {
  @Override
  protected TestStore store() {
    return TestStores.cephRgw();
  }

  /** RGW 16.2 and FileOutputCommitter's empty objects: {@link CephRgw#EMPTY_OBJECT_SETTINGS}. */
  @Override
  protected Configuration storeSettings(Configuration conf) {
    CephRgw.EMPTY_OBJECT_SETTINGS.forEach(conf::set);
    return conf;
  }
}
