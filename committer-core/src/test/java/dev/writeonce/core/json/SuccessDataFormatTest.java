package dev.writeonce.core.json;

import static dev.writeonce.core.json.ManifestFormatsTest.golden;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.model.SuccessData;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class SuccessDataFormatTest {

  @Test
  void goldenSuccessLoadsAndWritesBackByteForByte() throws Exception {
    byte[] golden = golden("success-v1.json");
    SuccessData success = SuccessDataFormat.fromJson(golden, "golden");

    assertThat(success.jobId()).isEqualTo("job_202611220000_0001");
    assertThat(success.metrics()).containsEntry("writeonce.files", 2L);
    assertThat(success.counters()).containsEntry("writeonce.requests.complete_upload", 2L);
    assertThat(new String(SuccessDataFormat.toJson(success), StandardCharsets.UTF_8))
        .isEqualTo(new String(golden, StandardCharsets.UTF_8));
  }

  @Test
  void hadoopsOwnLoaderReadsOurSuccessMarker() throws Exception {
    var hadoop =
        org.apache.hadoop.fs.s3a.commit.files.SuccessData.serializer()
            .fromJson(new String(golden("success-v1.json"), StandardCharsets.UTF_8));
    hadoop.validate();

    assertThat(hadoop.getJobId()).isEqualTo("job_202611220000_0001");
    assertThat(hadoop.getFilenames()).hasSize(1);
    assertThat(hadoop.getIOStatistics().counters())
        .containsEntry("writeonce.requests.complete_upload", 2L);
  }

  @Test
  void aSuccessMarkerWrittenByHadoopIsRead() throws Exception {
    SuccessData success = SuccessDataFormat.fromJson(golden("hadoop-success.json"), "h.json");
    assertThat(success.committer()).isEqualTo("magic");
    assertThat(success.counters()).containsEntry("committer_commits_completed", 4L);
  }

  @Test
  void aFileThatIsNotASuccessMarkerIsRefused() {
    assertThatThrownBy(
            () ->
                SuccessDataFormat.fromJson("{\"name\":\"other\",\"timestamp\":1}".getBytes(), "x"))
        .isInstanceOf(FormatException.class)
        .hasMessageContaining("not a _SUCCESS marker");
  }
}
