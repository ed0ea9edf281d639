package dev.writeonce.cli;

import dev.writeonce.teststore.TestStore;
import dev.writeonce.teststore.TestStores;
import org.junit.jupiter.api.Tag;

@Tag("external")
class ExternalStoreStoreFaultIT extends AbstractStoreFaultIT {
  @Override
  protected TestStore store() {
    return TestStores.external();
  }
}
