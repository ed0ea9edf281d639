package dev.writeonce.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.model.Destination;
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
    assertThat(MetastorePublication.requested(conf)).isFalse();
    conf.set(MetastorePublication.MODE, "metastore");
    assertThat(MetastorePublication.requested(conf)).isTrue();
    conf.set(MetastorePublication.MODE, "catalog");
    assertThatThrownBy(() -> MetastorePublication.requested(conf))
        .hasMessageContaining("writeonce.publish=catalog")
        .hasMessageContaining("'files'")
        .hasMessageContaining("'metastore'");
  }
}
