package dev.writeonce.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.teststore.S3Api;
import dev.writeonce.teststore.Traffic;
import java.awt.image.BufferedImage;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BenchReportTest {

  @TempDir Path dir;

  private static SparkWrites.WriteCost outcome(
      String name, int files, long requests, long copies, double jobCommitSeconds) {
    SparkWrites.Variant variant = SparkWrites.variants(List.of(name)).get(0);
    Traffic traffic =
        new Traffic(
            Map.of(S3Api.PUT_OBJECT, requests - copies, S3Api.COPY_OBJECT, copies),
            files * 1000L,
            0);
    return new SparkWrites.WriteCost(
        variant,
        files,
        files * 1000L,
        traffic,
        (long) 5e9,
        new TimedCommitProtocol.Timings((long) 1e9, (long) (jobCommitSeconds * 1e9)));
  }

  @Test
  void theTargetsAreJudgedFromTheMeasuredFigures() {
    List<BenchCommand.Row> rows =
        List.of(
            new BenchCommand.Row(1000, outcome(SparkWrites.WRITEONCE_MAGIC, 1000, 3007, 0, 1.0)),
            new BenchCommand.Row(10000, outcome(SparkWrites.WRITEONCE_MAGIC, 10000, 30007, 0, 2.0)),
            new BenchCommand.Row(10000, outcome(SparkWrites.HADOOP_MAGIC, 10000, 116000, 0, 5.0)),
            new BenchCommand.Row(
                1000, outcome(SparkWrites.WRITEONCE_DIRECTORY, 1000, 3100, 0, 1.0)));

    String report =
        BenchReport.markdown(
            rows,
            List.of(),
            List.of(),
            "machine",
            "versions",
            "a store",
            "bench",
            (b, e) -> b + "." + e);

    assertThat(report)
        .contains("writeonce magic committer: CopyObject in every write: 0.")
        .contains("requests per file at 1,000 files: 3.007 (target at most 3.05: met)")
        .contains("requests per file at 1,000 files: 3.100 (target at most 3.05: not met)")
        .contains("2.00 s against 5.00 s, a ratio of 0.40 (target at most 0.5: met)")
        .contains("![requests per file](bench-requests-per-file.png)");
  }

  @Test
  void aRunOnAnotherStoreNamesItsOwnFilesAndComparesTheSortWithThePublishedCephFigure() {
    List<SparkWrites.WriteCost> sorts =
        List.of(
            outcome(SparkWrites.FOC_V1, 20, 100, 40, 2.0),
            outcome(SparkWrites.WRITEONCE_DIRECTORY, 20, 60, 0, 0.1));

    String report =
        BenchReport.markdown(
            List.of(),
            List.of(),
            sorts,
            "machine",
            "versions",
            "a local Ceph RGW",
            "bench --store ceph-rgw",
            (b, e) -> b + "-ceph-rgw." + e);

    assertThat(report)
        .contains("- Store: a local Ceph RGW;")
        .contains("Data: `bench-files-ceph-rgw.csv`")
        .contains("Data: `bench-terasort-ceph-rgw.csv`")
        .contains("![job commit time](bench-job-commit-ceph-rgw.png)")
        .contains("TeraSort 1.5x faster end to end")
        .doesNotContain("bench-files.csv");
  }

  @Test
  void aChartIsAPngWithEverySeriesDrawn() throws Exception {
    Path file = dir.resolve("chart.png");
    new Charts("title", "files", "requests per file")
        .add("a", 100, 23.5)
        .add("a", 1000, 24)
        .add("b", 100, 3.07)
        .add("b", 10000, 3.0)
        .writePng(file);

    BufferedImage image = ImageIO.read(file.toFile());
    assertThat(image.getWidth()).isEqualTo(960);
    assertThat(image.getHeight()).isEqualTo(540);
    boolean red = false;
    boolean orange = false;
    for (int x = 0; x < image.getWidth(); x++) {
      for (int y = 0; y < image.getHeight(); y++) {
        int rgb = image.getRGB(x, y) & 0xffffff;
        red |= rgb == 0xd62728;
        orange |= rgb == 0xff7f0e;
      }
    }
    assertThat(red).as("first series drawn").isTrue();
    assertThat(orange).as("second series drawn").isTrue();
  }
}
