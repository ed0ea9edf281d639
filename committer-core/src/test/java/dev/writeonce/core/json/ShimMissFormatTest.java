package dev.writeonce.core.json;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.model.ShimMiss;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ShimMissFormatTest {

  @Test
  void goldenShimMissOfVersion1WithoutAPartCountLoadsWithTheCountUnknown() throws Exception {
    ShimMiss miss =
        ShimMissFormat.fromJson(ManifestFormatsTest.golden("shim-miss-v1.json"), "golden");

    assertThat(miss.parts()).isZero();
    assertThat(miss.etag()).contains("3858f62230ac3c915f300c664312c63f-2");
  }

  @Test
  void goldenShimMissOfVersion1LoadsAndWritesBackByteForByte() throws Exception {
    byte[] golden = ManifestFormatsTest.golden("shim-miss-v1-parts.json");
    ShimMiss miss = ShimMissFormat.fromJson(golden, "golden");

    assertThat(miss.predictedKey()).isEqualTo("sales/part-00000");
    assertThat(miss.targetKey()).isEqualTo("sales/day=2026-11-22/part-00000");
    assertThat(miss.length()).isEqualTo(5_243_981L);
    assertThat(miss.etag()).contains("3858f62230ac3c915f300c664312c63f-2");
    assertThat(miss.parts()).isEqualTo(2);
    assertThat(new String(ShimMissFormat.toJson(miss), StandardCharsets.UTF_8))
        .isEqualTo(new String(golden, StandardCharsets.UTF_8));
  }

  @Test
  void aMissWithoutAPredictableEtagRoundTripsWithout() throws Exception {
    ShimMiss miss =
        new ShimMiss("b", "t/_temporary/x", "t/x", "t/y", "u-1", 3, Optional.empty(), 1, 7);

    ShimMiss read = ShimMissFormat.fromJson(ShimMissFormat.toJson(miss), "memory");

    assertThat(read).isEqualTo(miss);
    assertThat(new String(ShimMissFormat.toJson(miss), StandardCharsets.UTF_8))
        .doesNotContain("etag");
  }

  @Test
  void aMissNamingTheSameKeyTwiceIsRefusedNamingTheFile() throws Exception {
    String golden =
        new String(ManifestFormatsTest.golden("shim-miss-v1.json"), StandardCharsets.UTF_8);
    byte[] tampered =
        golden
            .replace("sales/day=2026-11-22/part-00000", "sales/part-00000")
            .getBytes(StandardCharsets.UTF_8);

    assertThatThrownBy(() -> ShimMissFormat.fromJson(tampered, "s3a://b/sales/_temporary/m.json"))
        .isInstanceOf(FormatException.class)
        .hasMessageContaining("s3a://b/sales/_temporary/m.json")
        .hasMessageContaining("both predicted and target");
  }
}
