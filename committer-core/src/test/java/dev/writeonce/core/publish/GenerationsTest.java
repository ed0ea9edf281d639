package dev.writeonce.core.publish;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.model.Destination;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;

class GenerationsTest {

  private static final Destination ROOT = Destination.of("s3a://bucket/warehouse/events");

  @Test
  void anUnpartitionedTablesGenerationHasTheTableAsItsRootAndAnythingElseIsItsOwnRoot() {
    assertThat(Generations.rootOf("s3a://bucket/warehouse/events/_generations/run-1"))
        .isEqualTo("s3a://bucket/warehouse/events");
    assertThat(Generations.rootOf("s3a://bucket/warehouse/events/_generations/run-1/"))
        .isEqualTo("s3a://bucket/warehouse/events");
    assertThat(Generations.rootOf("s3a://bucket/warehouse/events"))
        .isEqualTo("s3a://bucket/warehouse/events");
    // A partition's generation is never a table's location: it is not taken for one.
    assertThat(Generations.rootOf("s3a://bucket/warehouse/events/_generations/run-1/p=1"))
        .isEqualTo("s3a://bucket/warehouse/events/_generations/run-1/p=1");
  }

  @Test
  void theFragmentOfAnUploadIsThePathBetweenItsRunAndItsFileName() {
    assertThat(
            Generations.fragmentOf(
                ROOT, "run-1", "warehouse/events/_generations/run-1/a=1/b=x/part-00000.parquet"))
        .isEqualTo("a=1/b=x");
    assertThat(
            Generations.fragmentOf(
                ROOT, "run-1", "warehouse/events/_generations/run-1/part-00000.parquet"))
        .isEmpty();
  }

  @Test
  void anUploadOutsideItsRunsGenerationIsRefusedNamingBoth() {
    assertThatThrownBy(
            () ->
                Generations.fragmentOf(
                    ROOT, "run-1", "warehouse/events/_generations/run-2/a=1/part-0.parquet"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("run-2")
        .hasMessageContaining("_generations/run-1/");
  }

  @Test
  void readersSkipEveryPathWithAHiddenSegment() {
    assertThat(Generations.visibleToReaders("part-0.parquet")).isTrue();
    assertThat(Generations.visibleToReaders("a=1/part-0.parquet")).isTrue();
    assertThat(Generations.visibleToReaders("_generations/run-1/part-0.parquet")).isFalse();
    assertThat(Generations.visibleToReaders("a=1/.part-0.parquet.crc")).isFalse();
    assertThat(Generations.visibleToReaders("_SUCCESS")).isFalse();
  }

  @Test
  void theModeIsFilesUnlessSetAndAnUnknownValueNamesTheSettingAndBothValues() {
    Configuration conf = new Configuration(false);
    assertThat(Publication.requested(conf)).isFalse();
    conf.set(Publication.MODE, "metastore");
    assertThat(Publication.requested(conf)).isTrue();
    conf.set(Publication.MODE, "catalog");
    assertThatThrownBy(() -> Publication.requested(conf))
        .hasMessageContaining("writeonce.publish=catalog")
        .hasMessageContaining("'files'")
        .hasMessageContaining("'metastore'");
  }

  @Test
  void aCopyIntoAGenerationNeverReplacesAFileTheStatementWroteThere() {
    // Hive names a statement's files 000000_0 whatever the partition holds: the copies give way.
    Set<String> written = Set.of("000000_0", "000000_0_copy_1", "part-1.gz");
    assertThat(Publication.freeName("000001_0", written)).isEqualTo("000001_0");
    assertThat(Publication.freeName("000000_0", written)).isEqualTo("000000_0_copy_2");
    assertThat(Publication.freeName("part-1.gz", written)).isEqualTo("part-1_copy_1.gz");
    assertThat(Publication.freeName("sub.dir/000000_0", Set.of("sub.dir/000000_0")))
        .isEqualTo("sub.dir/000000_0_copy_1");
  }

  @Test
  void aStatementStagingUnderAnOldGenerationKeepsItsStagingWhenTheGenerationIsRemoved() {
    assertThat(Generations.inStaging("p=0/.hive-staging_hive_1/-ext-10000/000000_0")).isTrue();
    assertThat(Generations.inStaging("p=0/.hive-staging_hive_1/")).isTrue();
    assertThat(Generations.inStaging("p=0/000000_0")).isFalse();
    assertThat(Generations.inStaging("p=0/.000000_0.crc")).isFalse();
    assertThat(Generations.inStaging("empty/")).isFalse();
  }
}
