package dev.writeonce.core.json;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.model.LoadPlan;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class LoadPlanFormatTest {

  private static final LoadPlan PLAN =
      new LoadPlan(
          Map.of(
              "-ext-10002",
              new LoadPlan.Load(
                  LoadPlan.Mode.REPLACE, Optional.of("s3a://warehouse/sales.db/orders_by_day")),
              "-ext-10000",
              new LoadPlan.Load(LoadPlan.Mode.KEEP, Optional.empty())));

  @Test
  void goldenLoadPlanOfVersion1LoadsAndWritesBackByteForByte() throws Exception {
    byte[] golden = ManifestFormatsTest.golden("load-plan-v1.json");

    assertThat(LoadPlanFormat.fromBytes(golden, "golden")).isEqualTo(PLAN);
    assertThat(new String(LoadPlanFormat.toJson(PLAN), StandardCharsets.UTF_8))
        .isEqualTo(new String(golden, StandardCharsets.UTF_8));
  }

  @Test
  void aPlanInThePropertiesTextOfEarlierReleasesIsStillRead() throws Exception {
    byte[] earlier =
        ("# writeonce load plan v1\n"
                + "-ext-10000.mode=keep\n"
                + "-ext-10002.mode=replace\n"
                + "-ext-10002.target=s3a\\://warehouse/sales.db/orders_by_day\n")
            .getBytes(StandardCharsets.UTF_8);

    assertThat(LoadPlanFormat.fromBytes(earlier, "earlier")).isEqualTo(PLAN);
  }

  @Test
  void anUnknownModeIsRefusedNamingThePlanInEitherForm() throws Exception {
    String json =
        new String(ManifestFormatsTest.golden("load-plan-v1.json"), StandardCharsets.UTF_8)
            .replace("\"keep\"", "\"sideways\"");

    assertThatThrownBy(
            () ->
                LoadPlanFormat.fromBytes(
                    json.getBytes(StandardCharsets.UTF_8), "s3a://b/t/.hive-staging_1/plan"))
        .isInstanceOf(FormatException.class)
        .hasMessageContaining("s3a://b/t/.hive-staging_1/plan")
        .hasMessageContaining("sideways");
    assertThatThrownBy(
            () -> LoadPlanFormat.fromBytes("-ext-1.mode=sideways\n".getBytes(), "old-plan"))
        .isInstanceOf(FormatException.class)
        .hasMessageContaining("old-plan")
        .hasMessageContaining("keep or replace");
  }
}
