package dev.writeonce.core.store.check;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.errors.UntrustedStoreException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;

class StoreTrustTest {

  private static StoreReport report(Capability broken, Verdict verdict) {
    List<StoreReport.Finding> findings = new ArrayList<>();
    for (Capability capability : Capability.values()) {
      findings.add(
          new StoreReport.Finding(
              capability,
              capability == broken ? verdict : Verdict.HONOURED,
              capability == broken ? "answered 200 and overwrote the object" : "answered 412"));
    }
    return new StoreReport("http://store:9000", "b", "Store/1", 0, 60, findings);
  }

  @Test
  void aRequiredCapabilityIgnoredIsRefusedNamingItTheAnswerAndTheOverride() {
    StoreReport report = report(Capability.PUT_IF_NONE_MATCH, Verdict.IGNORED);

    assertThatThrownBy(() -> StoreTrust.refuseBroken(report, Set.of(), "job j on s3a://b/t/"))
        .isInstanceOf(UntrustedStoreException.class)
        .hasMessageContaining("job j on s3a://b/t/: refused, nothing written")
        .hasMessageContaining("put-if-none-match")
        .hasMessageContaining("answered 200 and overwrote the object")
        .hasMessageContaining("writeonce.store.check.trust=put-if-none-match");
  }

  @Test
  void aRequiredCapabilityTheUserTrustsIsNotRefused() throws Exception {
    StoreReport report = report(Capability.PUT_IF_MATCH, Verdict.REFUSED);
    Configuration conf = new Configuration(false);
    conf.set(StoreTrust.TRUST, " put-if-match ");

    StoreTrust.refuseBroken(report, StoreTrust.trusted(conf), "job");

    assertThat(report.brokenGuarantees(Set.of())).hasSize(1);
  }

  @Test
  void aCapabilityWithAFallbackIsNeverRefusedAndIsListedAsAFallback() throws Exception {
    StoreReport report = report(Capability.DELETE_IF_MATCH, Verdict.IGNORED);

    StoreTrust.refuseBroken(report, Set.of(), "job");

    assertThat(report.fallbacks())
        .extracting(StoreReport.Finding::capability)
        .containsExactly(Capability.DELETE_IF_MATCH);
  }

  @Test
  void anUnknownCapabilityInTheTrustSettingIsAnErrorThatListsTheKnownOnes() {
    Configuration conf = new Configuration(false);
    conf.set(StoreTrust.TRUST, "put-if-nothing");

    assertThatThrownBy(() -> StoreTrust.trusted(conf))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("put-if-nothing")
        .hasMessageContaining("put-if-none-match");
  }

  @Test
  void everyCapabilityHasAUniqueIdThatNamesItBack() {
    for (Capability capability : Capability.values()) {
      assertThat(Capability.of(capability.id())).isSameAs(capability);
    }
  }
}
