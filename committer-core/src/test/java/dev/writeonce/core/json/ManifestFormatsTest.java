package dev.writeonce.core.json;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.model.ConflictMode;
import dev.writeonce.core.model.JobManifest;
import dev.writeonce.core.model.TaskManifest;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class ManifestFormatsTest {

  static byte[] golden(String name) throws IOException {
    try (InputStream in = ManifestFormatsTest.class.getResourceAsStream("/golden/" + name)) {
      return in.readAllBytes();
    }
  }

  private static String text(byte[] bytes) {
    return new String(bytes, StandardCharsets.UTF_8);
  }

  @Test
  void goldenJobManifestOfVersion1LoadsAndWritesBackByteForByte() throws Exception {
    byte[] golden = golden("job-manifest-v1.json");
    JobManifest manifest = ManifestFormats.jobManifestFromJson(golden, "golden");

    assertThat(manifest.jobId()).isEqualTo("job_202611220000_0001");
    assertThat(manifest.destination().bucket()).isEqualTo("warehouse");
    assertThat(manifest.conflictMode()).isEqualTo(ConflictMode.REPLACE);
    assertThat(manifest.uploads()).hasSize(2);
    assertThat(manifest.uploads().get(0).parts()).hasSize(2);
    assertThat(manifest.totalBytes()).isEqualTo(5_243_981L);
    assertThat(manifest.deletes())
        .containsExactly("sales/orders/date=2026-11-01/old-00000.parquet");
    assertThat(text(ManifestFormats.toJson(manifest))).isEqualTo(text(golden));
  }

  @Test
  void goldenTaskManifestOfVersion1LoadsAndWritesBackByteForByte() throws Exception {
    byte[] golden = golden("task-manifest-v1.json");
    TaskManifest manifest = ManifestFormats.taskManifestFromJson(golden, "golden");

    assertThat(manifest.taskAttemptId()).isEqualTo("attempt_202611220000_0001_m_000000_0");
    assertThat(manifest.statistics()).containsEntry("writeonce.files", 1L);
    assertThat(text(ManifestFormats.toJson(manifest))).isEqualTo(text(golden));
  }

  @Test
  void goldenChunkedJobManifestOfVersion2AndItsChunkLoadAndWriteBackByteForByte() throws Exception {
    byte[] golden = golden("job-manifest-v2.json");
    JobManifest manifest = ManifestFormats.jobManifestFromJson(golden, "golden");

    assertThat(manifest.isChunked()).isTrue();
    assertThat(manifest.uploads()).isEmpty();
    assertThat(manifest.fileCount()).isEqualTo(2);
    assertThat(manifest.totalBytes()).isEqualTo(5_243_981L);
    assertThat(text(ManifestFormats.toJson(manifest))).isEqualTo(text(golden));

    byte[] chunk = golden("job-manifest-chunk-v1.json");
    var uploads = ManifestFormats.chunkFromJson(chunk, manifest.jobId(), "chunk");
    assertThat(uploads)
        .singleElement()
        .satisfies(u -> assertThat(u.length()).isEqualTo(5_242_880L));
    assertThat(ManifestFormats.chunkToJson(manifest.jobId(), 1, uploads)).isEqualTo(chunk);
    assertThat(
            java.util.HexFormat.of()
                .formatHex(java.security.MessageDigest.getInstance("SHA-256").digest(chunk)))
        .isEqualTo(manifest.chunks().get(0).sha256());
    assertThatThrownBy(() -> ManifestFormats.chunkFromJson(chunk, "job_other", "c.json"))
        .isInstanceOf(FormatException.class)
        .hasMessageContaining("c.json")
        .hasMessageContaining("is a chunk of job " + manifest.jobId());
  }

  @Test
  void aTruncatedManifestIsRefusedNamingTheFile() throws Exception {
    byte[] golden = golden("job-manifest-v1.json");
    byte[] truncated = Arrays.copyOf(golden, golden.length / 2);

    assertThatThrownBy(
            () -> ManifestFormats.jobManifestFromJson(truncated, "s3a://b/t/manifest.json"))
        .isInstanceOf(FormatException.class)
        .hasMessageStartingWith("s3a://b/t/manifest.json: ")
        .hasMessageContaining("not valid JSON");
  }

  @Test
  void aGarbledManifestIsRefusedNamingTheFile() {
    byte[] garbled = "\u0000\u0001 not json at all".getBytes(StandardCharsets.UTF_8);
    assertThatThrownBy(() -> ManifestFormats.jobManifestFromJson(garbled, "m.json"))
        .isInstanceOf(FormatException.class)
        .hasMessageContaining("m.json")
        .hasMessageContaining("not valid JSON");
    assertThatThrownBy(() -> ManifestFormats.jobManifestFromJson("[1,2]".getBytes(), "m.json"))
        .hasMessageContaining("expected a JSON object");
    assertThatThrownBy(() -> ManifestFormats.jobManifestFromJson(new byte[0], "m.json"))
        .hasMessageContaining("empty file");
  }

  @Test
  void anUnknownFormatVersionIsRefusedNamingBothVersions() throws Exception {
    String v3 = text(golden("job-manifest-v1.json")).replace("\"version\" : 1", "\"version\" : 3");
    assertThatThrownBy(() -> ManifestFormats.jobManifestFromJson(v3.getBytes(), "m.json"))
        .isInstanceOf(FormatException.class)
        .hasMessageContaining("m.json")
        .hasMessageContaining("version 3")
        .hasMessageContaining("reads version 1 to 2");
  }

  @Test
  void anotherDocumentIsRefusedAsAJobManifest() throws Exception {
    assertThatThrownBy(
            () -> ManifestFormats.jobManifestFromJson(golden("task-manifest-v1.json"), "t.json"))
        .hasMessageContaining("format is 'writeonce.task-manifest'");
  }

  @Test
  void aKeyOutsideTheDestinationIsRefusedNamingTheKey() throws Exception {
    String outside =
        text(golden("job-manifest-v1.json"))
            .replace("sales/orders/date=2026-11-02/part-00001", "finance/ledger/part-00001");
    assertThatThrownBy(() -> ManifestFormats.jobManifestFromJson(outside.getBytes(), "m.json"))
        .isInstanceOf(FormatException.class)
        .hasMessageContaining("m.json")
        .hasMessageContaining("s3a://warehouse/finance/ledger/part-00001.parquet")
        .hasMessageContaining("outside the destination");
  }

  @Test
  void aPartGapIsRefusedNamingTheUpload() throws Exception {
    String gap = text(golden("job-manifest-v1.json")).replace("\"number\" : 2", "\"number\" : 3");
    assertThatThrownBy(() -> ManifestFormats.jobManifestFromJson(gap.getBytes(), "m.json"))
        .isInstanceOf(FormatException.class)
        .hasMessageContaining("m.json uploads[0]")
        .hasMessageContaining("without gaps");
  }

  @Test
  void aLengthThatDisagreesWithItsPartsIsRefused() throws Exception {
    String wrong =
        text(golden("job-manifest-v1.json")).replace("\"length\" : 77", "\"length\" : 78");
    assertThatThrownBy(() -> ManifestFormats.jobManifestFromJson(wrong.getBytes(), "m.json"))
        .hasMessageContaining("declares length 78");
  }

  @Test
  void aMissingFieldIsRefusedNamingTheField() throws Exception {
    String missing =
        text(golden("task-manifest-v1.json")).replace("\"uploadId\"", "\"uploadIdent\"");
    assertThatThrownBy(() -> ManifestFormats.taskManifestFromJson(missing.getBytes(), "t.json"))
        .hasMessageContaining("t.json uploads[0]: missing field 'uploadId'");
  }

  @Test
  void goldenJobRecordOfVersion1LoadsAndWritesBackByteForByte() throws Exception {
    byte[] golden = golden("job-record-v1-lease.json");
    var record = JobRecordFormat.fromJson(golden, "golden");

    assertThat(record.jobId()).isEqualTo("job_202611220000_0001");
    assertThat(record.state()).isEqualTo(dev.writeonce.core.model.JobRecord.State.RUNNING);
    assertThat(record.destination().prefix()).isEqualTo("sales/orders/");
    assertThat(record.leaseMillis()).isEqualTo(600_000L);
    assertThat(text(JobRecordFormat.toJson(record))).isEqualTo(text(golden));
    assertThat(JobRecordFormat.isAbortFence(golden, "golden")).isFalse();
  }

  @Test
  void aJobRecordWrittenBeforeLeasesLoadsWithTheDefaultLease() throws Exception {
    var record = JobRecordFormat.fromJson(golden("job-record-v1.json"), "golden");

    assertThat(record.leaseMillis()).isEqualTo(600_000L);
    assertThat(record.updatedAtMillis()).isEqualTo(1_795_000_000_000L);
  }

  @Test
  void goldenAbortFenceOfVersion1IsRecognisedAndWrittenByteForByte() throws Exception {
    byte[] golden = golden("abort-fence-v1.json");
    assertThat(JobRecordFormat.isAbortFence(golden, "golden")).isTrue();
    assertThat(text(JobRecordFormat.abortToJson("job_202611220000_0001", 1_795_000_000_000L)))
        .isEqualTo(text(golden));
  }

  @Test
  void anAbortFenceIsToldApartFromAJobManifest() throws Exception {
    assertThat(JobRecordFormat.isAbortFence(JobRecordFormat.abortToJson("job_1", 5), "x")).isTrue();
    assertThat(JobRecordFormat.isAbortFence(golden("job-manifest-v1.json"), "x")).isFalse();
  }

  @Test
  void goldenTaskIntentOfVersion1LoadsAndWritesBackByteForByte() throws Exception {
    byte[] golden = golden("task-intent-v1.json");
    var intent = ManifestFormats.taskIntentFromJson(golden, "golden");

    assertThat(intent.taskAttemptId()).isEqualTo("attempt_202611220000_0001_m_000000_0");
    assertThat(intent.keys()).hasSize(2);
    assertThat(text(ManifestFormats.toJson(intent))).isEqualTo(text(golden));
  }
}
