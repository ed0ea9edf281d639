package dev.writeonce.core.json;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.model.PendingFile;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class PendingFileFormatTest {

  @Test
  void goldenPendingFileOfVersion1LoadsAndWritesBackByteForByte() throws Exception {
    byte[] golden = ManifestFormatsTest.golden("pending-file-v1.json");
    PendingFile file = PendingFileFormat.fromJson(golden, "golden");

    assertThat(file.closed()).isTrue();
    assertThat(file.key()).isEqualTo("sales/orders/part-00000-7f3c.snappy.parquet");
    assertThat(file.length()).isEqualTo(5_243_981L);
    assertThat(file.upload().parts()).hasSize(2);
    assertThat(new String(PendingFileFormat.toJson(file), StandardCharsets.UTF_8))
        .isEqualTo(new String(golden, StandardCharsets.UTF_8));
  }

  @Test
  void aRecordIsRecognisedFromItsFirstBytesAndOrdinaryDataIsNot() throws Exception {
    byte[] record =
        PendingFileFormat.toJson(PendingFile.writing("b", "t/part-0", "u-1", "attempt_1", 7L));

    assertThat(PendingFileFormat.isRecord(Arrays.copyOf(record, PendingFileFormat.HEAD_BYTES)))
        .isTrue();
    assertThat(PendingFileFormat.isRecord("PAR1\u0000\u0001".getBytes(StandardCharsets.UTF_8)))
        .isFalse();
    assertThat(PendingFileFormat.isRecord("{\"name\":\"a json data file\"}".getBytes())).isFalse();
    assertThat(PendingFileFormat.isRecord(new byte[0])).isFalse();
  }

  @Test
  void aRecordOfAWriterStillOpenRoundTripsWithoutParts() throws Exception {
    PendingFile writing = PendingFile.writing("b", "t/part-0", "u-1", "attempt_1", 7L);

    PendingFile read = PendingFileFormat.fromJson(PendingFileFormat.toJson(writing), "memory");

    assertThat(read).isEqualTo(writing);
    assertThat(read.length()).isZero();
    assertThatThrownBy(read::upload).hasMessageContaining("s3a://b/t/part-0");
  }

  @Test
  void aRecordWhoseLengthDisagreesWithItsPartsIsRefusedNamingTheFile() throws Exception {
    String golden =
        new String(ManifestFormatsTest.golden("pending-file-v1.json"), StandardCharsets.UTF_8);
    byte[] tampered =
        golden.replace("\"length\" : 5243981", "\"length\" : 17").getBytes(StandardCharsets.UTF_8);

    assertThatThrownBy(() -> PendingFileFormat.fromJson(tampered, "s3a://b/t/_temporary/x"))
        .isInstanceOf(FormatException.class)
        .hasMessageContaining("s3a://b/t/_temporary/x")
        .hasMessageContaining("5243981");
  }
}
