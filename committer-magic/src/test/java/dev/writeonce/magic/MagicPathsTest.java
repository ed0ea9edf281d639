package dev.writeonce.magic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class MagicPathsTest {

  @Test
  void aFileUnderAnAttemptsBaseMapsToItsKeyUnderTheDestination() {
    MagicPaths.Target target =
        MagicPaths.parse(
                "warehouse/t/__writeonce_magic-job_1/attempt_1_m_000000_0/__base/day=1/part-0")
            .orElseThrow();
    assertThat(target.finalKey()).isEqualTo("warehouse/t/day=1/part-0");
    assertThat(target.attemptKey())
        .isEqualTo("warehouse/t/__writeonce_magic-job_1/attempt_1_m_000000_0/");
    assertThat(target.isFile()).isTrue();
  }

  @Test
  void directoriesOfTheMagicTreeAreNotFiles() {
    assertThat(MagicPaths.parse("t/__writeonce_magic-job_1").orElseThrow().attemptKey()).isEmpty();
    assertThat(MagicPaths.parse("t/__writeonce_magic-job_1/a_0").orElseThrow().isFile()).isFalse();
    assertThat(MagicPaths.parse("t/__writeonce_magic-job_1/a_0/__base").orElseThrow().isFile())
        .isFalse();
  }

  @Test
  void ordinaryKeysAreNotMagic() {
    assertThat(MagicPaths.parse("t/part-0")).isEmpty();
    assertThat(MagicPaths.parse("t/not__writeonce_magic-x/part-0")).isEmpty();
  }

  @Test
  void aMagicFileOutsideTheBaseIsRefusedRatherThanWrittenSomewhere() {
    assertThatThrownBy(() -> MagicPaths.parse("t/__writeonce_magic-job_1/a_0/elsewhere/part-0"))
        .hasMessageContaining("__base");
  }

  @Test
  void theBaseKeyOfAnAttemptParsesBack() {
    String base = MagicPaths.baseKey("t/", "job_1", "attempt_1_m_000003_1");
    assertThat(MagicPaths.parse(base + "/f").orElseThrow().finalKey()).isEqualTo("t/f");
  }
}
