package dev.writeonce.it;

import dev.writeonce.teststore.TestStore;
import dev.writeonce.teststore.TestStores;
import org.junit.jupiter.api.Tag;

@Tag("external")
class ExternalStoreDirectoryCommitterIT extends AbstractCommitterContractIT {
  @Override
  protected TestStore store() {
    return TestStores.external();
  }

  @Override
  protected String committerName() {
    return "directory";
  }
}
