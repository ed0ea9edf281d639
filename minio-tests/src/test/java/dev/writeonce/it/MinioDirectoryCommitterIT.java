package dev.writeonce.it;

import dev.writeonce.teststore.TestStore;
import dev.writeonce.teststore.TestStores;
import org.junit.jupiter.api.Tag;

@Tag("minio")
class MinioDirectoryCommitterIT extends AbstractCommitterContractIT {
  @Override
  protected TestStore store() {
    return TestStores.minio();
  }

  @Override
  protected String committerName() {
    return "directory";
  }
}
