package dev.writeonce.core.json;

import static dev.writeonce.core.json.ManifestFormatsTest.golden;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.model.CommitStatistics;
import dev.writeonce.core.model.FinishedJob;
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
  void goldenSuccessWithAHistoryLoadsAndWritesBackByteForByte() throws Exception {
    byte[] golden = golden("success-v1-history.json");
    SuccessData success = SuccessDataFormat.fromJson(golden, "golden");

    assertThat(success.jobId()).isEqualTo("job_202611260000_0003");
    assertThat(success.finishedJobs())
        .containsExactly(
            new FinishedJob(
                "job_202611260000_0002", "9b2c4f0e-3a51-4d8e-b7a2-5c1f0e9d2a41", 1764111605000L),
            new FinishedJob("job_202611250000_0001", "", 1764025205000L));
    assertThat(success.diagnostics())
        .doesNotContainKey(CommitStatistics.FINISHED_JOBS)
        .containsEntry(CommitStatistics.RUN_UUID, "0f5e8d7c-1b2a-4c3d-9e8f-7a6b5c4d3e2f");
    assertThat(success.namesFinished("job_202611250000_0001")).isTrue();
    assertThat(SuccessDataFormat.writtenByThisLibrary(success)).isTrue();
    assertThat(new String(SuccessDataFormat.toJson(success), StandardCharsets.UTF_8))
        .isEqualTo(new String(golden, StandardCharsets.UTF_8));
  }

  @Test
  void hadoopsOwnLoaderReadsOurSuccessMarkerWithItsHistory() throws Exception {
    var hadoop =
        org.apache.hadoop.fs.s3a.commit.files.SuccessData.serializer()
            .fromJson(new String(golden("success-v1-history.json"), StandardCharsets.UTF_8));
    hadoop.validate();

    assertThat(hadoop.getJobId()).isEqualTo("job_202611260000_0003");
    assertThat(hadoop.getDiagnostics().get(CommitStatistics.FINISHED_JOBS))
        .startsWith("job_202611260000_0002/");
  }

  @Test
  void aHistoryEntryThatIsNotJobRunAndTimeIsRefusedNamingIt() {
    String marker =
        "{\"name\":\""
            + SuccessDataFormat.HADOOP_NAME
            + "\",\"timestamp\":1,\"jobId\":\"job_2\",\"diagnostics\":{\""
            + CommitStatistics.FINISHED_JOBS
            + "\":\"job_1/run/1 job_0/soon\"}}";

    assertThatThrownBy(() -> SuccessDataFormat.fromJson(marker.getBytes(), "s"))
        .isInstanceOf(FormatException.class)
        .hasMessageContaining("'job_0/soon'");
  }

  @Test
  void aMarkerNamingItsOwnJobInItsHistoryIsRefused() {
    String marker =
        "{\"name\":\""
            + SuccessDataFormat.HADOOP_NAME
            + "\",\"timestamp\":1,\"jobId\":\"job_1\",\"diagnostics\":{\""
            + CommitStatistics.FINISHED_JOBS
            + "\":\"job_1//1\"}}";

    assertThatThrownBy(() -> SuccessDataFormat.fromJson(marker.getBytes(), "s"))
        .isInstanceOf(FormatException.class)
        .hasMessageContaining("cannot be in its history");
  }

  @Test
  void aSuccessMarkerWrittenByHadoopIsRead() throws Exception {
    SuccessData success = SuccessDataFormat.fromJson(golden("hadoop-success.json"), "h.json");
    assertThat(success.committer()).isEqualTo("magic");
    assertThat(SuccessDataFormat.writtenByThisLibrary(success)).isFalse();
    assertThat(success.finishedJobs()).isEmpty();
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
