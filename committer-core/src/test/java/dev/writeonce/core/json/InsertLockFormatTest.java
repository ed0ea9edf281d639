package dev.writeonce.core.json;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.model.InsertLock;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class InsertLockFormatTest {

  @Test
  void goldenInsertLockOfVersion1LoadsAndWritesBackByteForByte() throws Exception {
    byte[] golden = ManifestFormatsTest.golden("insert-lock-v1.json");
    InsertLock lock = InsertLockFormat.fromJson(golden, "golden");

    assertThat(lock.holder()).startsWith("hive_20261123191500_");
    assertThat(lock.destination()).isEqualTo("s3a://warehouse/sales.db/orders");
    assertThat(lock.leaseMillis()).isEqualTo(600_000L);
    assertThat(new String(InsertLockFormat.toJson(lock), StandardCharsets.UTF_8))
        .isEqualTo(new String(golden, StandardCharsets.UTF_8));
  }

  @Test
  void aLockWithoutALeaseIsRefusedNamingTheObject() throws Exception {
    String golden =
        new String(ManifestFormatsTest.golden("insert-lock-v1.json"), StandardCharsets.UTF_8);
    byte[] tampered =
        golden
            .replace("\"leaseMillis\" : 600000", "\"leaseMillis\" : 0")
            .getBytes(StandardCharsets.UTF_8);

    assertThatThrownBy(
            () -> InsertLockFormat.fromJson(tampered, "s3a://warehouse/t/_writeonce-insert-lock"))
        .isInstanceOf(FormatException.class)
        .hasMessageContaining("s3a://warehouse/t/_writeonce-insert-lock")
        .hasMessageContaining("lease of 0 ms");
  }
}
