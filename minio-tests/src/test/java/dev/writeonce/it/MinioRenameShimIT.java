package dev.writeonce.it;

import dev.writeonce.teststore.TestStore;
import dev.writeonce.teststore.TestStores;
import org.junit.jupiter.api.Tag;

@Tag("minio")
class MinioRenameShimIT extends AbstractRenameShimIT {
  @Override
  protected TestStore store() {
    return TestStores.minio();
  }
}
