package dev.writeonce.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

class EngineBenchCommandTest {

  @Test
  void aSyntheticJobIsCommittedWithOneCompletionPerUploadAndNothingLeftOpen() {
    StringWriter out = new StringWriter();
    int exit =
        Main.run(
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
}
