package dev.writeonce.it;

import dev.writeonce.teststore.TestStore;
import dev.writeonce.teststore.TestStores;
import org.junit.jupiter.api.Tag;

@Tag("external")
class ExternalStoreMagicCommitterIT extends AbstractMagicCommitterIT {
  @Override
  protected TestStore store() {
    return TestStores.external();
  }
}
