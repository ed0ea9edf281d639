package dev.writeonce.hive;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class HivePublicationTest {

  @Test
  void aFileInAUnionAllSubdirectoryIsPublishedWithItsPartition() {
    // Hive on Tez writes each branch of a UNION ALL into a subdirectory of the partition.
    assertThat(HivePublication.partitionOf("p=1/HIVE_UNION_SUBDIR_1", 1)).contains("p=1");
    assertThat(HivePublication.partitionOf("a=1/b=x/HIVE_UNION_SUBDIR_2", 2)).contains("a=1/b=x");
    assertThat(HivePublication.partitionOf("p=1", 1)).contains("p=1");
  }

  @Test
  void aFileAboveThePartitionsOrInAHiddenDirectoryNamesNoPartition() {
    assertThat(HivePublication.partitionOf("", 1)).isEmpty();
    assertThat(HivePublication.partitionOf("a=1", 2)).isEmpty();
    assertThat(HivePublication.partitionOf("_temporary/0", 1)).isEmpty();
    assertThat(HivePublication.partitionOf(".hive-staging_x/-ext-10000", 1)).isEmpty();
    assertThat(HivePublication.partitionOf("_empty/p=1", 1)).isEmpty();
  }
}
