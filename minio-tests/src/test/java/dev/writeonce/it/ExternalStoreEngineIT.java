package dev.writeonce.it;

import dev.writeonce.teststore.TestStore;
import dev.writeonce.teststore.TestStores;
import org.junit.jupiter.api.Tag;

/** Runs with {@code -Dit.stores=external} against the endpoint of {@code WRITEONCE_S3_*}. */
@Tag("external")
class ExternalStoreEngineIT extends AbstractEngineContractIT {
  @Override
  protected TestStore store() {
    return TestStores.external();
  }
}
