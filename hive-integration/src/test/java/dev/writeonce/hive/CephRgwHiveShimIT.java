package dev.writeonce.hive;

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

  /** RGW 16.2 refuses signed empty PUTs, and Hive writes directory markers (docs/hive.md). */
  @Override
  protected Configuration storeSettings(Configuration conf) {
    conf.set("fs.s3a.signing-algorithm", "AWS4UnsignedPayloadSignerType");
    return conf;
  }
}
