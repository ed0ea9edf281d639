package dev.writeonce.teststore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class TestStoresTest {

  @AfterEach
  void clearSelection() {
    System.clearProperty(TestStores.SELECTED_PROPERTY);
  }

  @Test
  void theSelectionIsReadInFailsafesTagSyntaxInOrderAndWithoutRepeats() {
    System.setProperty(TestStores.SELECTED_PROPERTY, "ceph-rgw | minio,seaweedfs external  minio");

    assertThat(TestStores.selected()).containsExactly("ceph-rgw", "minio", "seaweedfs", "external");
  }

  @Test
  void withoutASelectionTheSuitesRunOnMinio() {
    assertThat(TestStores.selected()).containsExactly("minio");
  }

  @Test
  void anUnknownStoreIsRefusedNamingTheKnownOnesAndTheSetting() {
    System.setProperty(TestStores.SELECTED_PROPERTY, "minio | s3-elsewhere");

    assertThatThrownBy(TestStores::selected)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'s3-elsewhere'")
        .hasMessageContaining("[minio, ceph-rgw, seaweedfs, external]")
        .hasMessageContaining("-Dit.stores");
  }

  @Test
  void aSelectionThatNamesNoStoreIsRefused() {
    System.setProperty(TestStores.SELECTED_PROPERTY, " | ");

    assertThatThrownBy(TestStores::selected).hasMessageContaining("names no store");
  }

  @Test
  void anUnknownStoreAskedForByNameIsRefusedBeforeAnythingStarts() {
    assertThatThrownBy(() -> TestStores.get("nowhere"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'nowhere'");
  }
}
