package dev.writeonce.it;

import dev.writeonce.teststore.TestStore;

/** The committer contract for the staging directory committer. */
class DirectoryCommitterIT extends AbstractCommitterContractIT {

  DirectoryCommitterIT(TestStore store) {
    super(store);
  }

  @Override
  protected String committerName() {
    return "directory";
  }
}
