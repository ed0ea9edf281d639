package dev.writeonce.cli;

import dev.writeonce.teststore.TestStore;
import dev.writeonce.teststore.TestStores;
import org.junit.jupiter.api.Tag;

@Tag("minio")
class MinioCrashRecoveryIT extends AbstractCrashRecoveryIT {
  @Override
  protected TestStore store() {
    return TestStores.minio();
  }
}
