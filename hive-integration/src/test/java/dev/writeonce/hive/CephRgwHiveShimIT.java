package dev.writeonce.hive;

import dev.writeonce.teststore.CephRgw;
import dev.writeonce.teststore.TestStore;
import dev.writeonce.teststore.TestStores;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Tag;

@Tag("ceph-rgw")
class CephRgwHiveShimIT extends AbstractHiveShimIT {
  @Override
  protected TestStore store() {
    return TestStores.cephRgw();
  }

  /** RGW 16.2 and Hive's directory markers: {@link CephRgw#EMPTY_OBJECT_SETTINGS}. */
  @Override
  protected Configuration storeSettings(Configuration conf) {
    CephRgw.EMPTY_OBJECT_SETTINGS.forEach(conf::set);
    return conf;
  }
}
