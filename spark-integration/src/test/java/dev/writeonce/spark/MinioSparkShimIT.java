package dev.writeonce.spark;

import dev.writeonce.teststore.TestStore;
import dev.writeonce.teststore.TestStores;
import org.junit.jupiter.api.Tag;

@Tag("minio")
class MinioSparkShimIT extends AbstractSparkShimIT {
  @Override
  protected TestStore store() {
    return TestStores.minio();
  }
}
