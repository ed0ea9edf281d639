package dev.writeonce.it;

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

  /**
   * RGW 16.2 refuses an empty PUT whose payload is signed (XAmzContentSHA256Mismatch), and
   * FileOutputCommitter needs empty objects: directory markers and _SUCCESS. Unsigned payloads are
   * the documented setting for such clusters (docs/rename-shim.md).
   */
  @Override
  protected Configuration storeSettings(Configuration conf) {
    conf.set("fs.s3a.signing-algorithm", "AWS4UnsignedPayloadSignerType");
    return conf;
  }
}
