package dev.writeonce.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

class EngineBenchCommandTest {

  @Test
  void aSyntheticJobIsCommittedWithOneCompletionPerUploadAndNothingLeftOpen() {
    StringWriter out = new StringWriter();
    int exit =
        BenchMain.run(
            new PrintWriter(out, true),
            new PrintWriter(out, true),
            "bench-engine",
            "--uploads=1000",
            "--tasks=10");

    assertThat(exit).as(out.toString()).isZero();
    assertThat(out.toString())
        .contains("committed 1000 uploads from 10 task manifests")
        .contains("COMPLETE_UPLOAD=1000")
        .contains("PUT_OBJECT=3")
        .contains("uploads left open: 0");
  }

  @Test
  void withJsonTheOutputIsOneDocumentWithTheSameExitCode() throws Exception {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int exit =
        BenchMain.run(
            new PrintWriter(out, true),
            new PrintWriter(err, true),
            "bench-engine",
            "--uploads=100",
            "--tasks=2",
            "--json");

    assertThat(exit).as(err.toString()).isZero();
    var report = new com.fasterxml.jackson.databind.ObjectMapper().readTree(out.toString());
    assertThat(report.get("command").asText()).isEqualTo("bench-engine");
    assertThat(report.get("uploads").asInt()).isEqualTo(100);
    assertThat(report.get("requestsByType").get("COMPLETE_UPLOAD").asInt()).isEqualTo(100);
    assertThat(report.get("uploadsLeftOpen").asInt()).isZero();
    assertThat(report.get("exitCode").asInt()).isZero();
  }
}
