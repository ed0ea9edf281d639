package dev.writeonce.hive;

import dev.writeonce.teststore.TestStore;
import dev.writeonce.teststore.TestStores;
import org.junit.jupiter.api.Tag;

@Tag("external")
class ExternalStoreHiveShimIT extends AbstractHiveShimIT {
  @Override
  protected TestStore store() {
    return TestStores.external();
  }
}
