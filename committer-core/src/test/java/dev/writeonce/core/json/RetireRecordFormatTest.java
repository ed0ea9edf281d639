package dev.writeonce.core.json;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.model.RetireRecord;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class RetireRecordFormatTest {

  @Test
  void goldenRetireRecordOfVersion1LoadsAndWritesBackByteForByte() throws Exception {
    byte[] golden = ManifestFormatsTest.golden("retire-record-v1.json");
    RetireRecord record = RetireRecordFormat.fromJson(golden, "golden");

    assertThat(record.table()).isEqualTo("sales.orders");
    assertThat(record.state()).isEqualTo(RetireRecord.State.PENDING);
    assertThat(record.own()).hasSize(1);
    assertThat(record.superseded()).hasSize(2);
    assertThat(record.superseded().get(1).etag()).isEqualTo("e4d909c290d0fb1ca068ffaddf22cbd0-2");
    assertThat(RetireRecordFormat.isJson(golden)).isTrue();
    assertThat(new String(RetireRecordFormat.toJson(record), StandardCharsets.UTF_8))
        .isEqualTo(new String(golden, StandardCharsets.UTF_8));
  }

  @Test
  void goldenClaimOfVersion1LoadsAndWritesBackByteForByte() throws Exception {
    byte[] golden = ManifestFormatsTest.golden("retire-record-v1-claimed.json");
    RetireRecord record = RetireRecordFormat.fromJson(golden, "golden");

    assertThat(record.state()).isEqualTo(RetireRecord.State.CLAIMED);
    assertThat(record.leaseMillis()).isEqualTo(600_000L);
    assertThat(record.renewal()).isEqualTo(3L);
    assertThat(record.graceMillis()).isEqualTo(3_600_000L);
    assertThat(record.own()).isEmpty();
    assertThat(new String(RetireRecordFormat.toJson(record), StandardCharsets.UTF_8))
        .isEqualTo(new String(golden, StandardCharsets.UTF_8));
  }

  @Test
  void everyStateRoundTrips() throws Exception {
    for (RetireRecord.State state : RetireRecord.State.values()) {
      boolean claim = state == RetireRecord.State.CLAIMED;
      RetireRecord record =
          new RetireRecord(
              "run-1",
              "db.t",
              state,
              List.of(new RetireRecord.RetiredObject("t/_generations/run-1/p=1/part-0", "abc")),
              List.of(new RetireRecord.RetiredObject("t/_generations/run-0/p=1/part-0", "def")),
              claim ? 600_000 : 0,
              claim ? 7 : 0,
              3_600_000);
      assertThat(RetireRecordFormat.fromJson(RetireRecordFormat.toJson(record), "round trip"))
          .isEqualTo(record);
    }
  }

  @Test
  void anUnknownStateOrAnObjectWithoutItsEtagIsRefusedNamingTheRecord() throws Exception {
    String golden =
        new String(ManifestFormatsTest.golden("retire-record-v1.json"), StandardCharsets.UTF_8);
    String where = "s3a://bucket/t/_generations/_retired/run-1";
    assertThatThrownBy(
            () ->
                RetireRecordFormat.fromJson(
                    golden.replace("\"pending\"", "\"gone\"").getBytes(StandardCharsets.UTF_8),
                    where))
        .isInstanceOf(FormatException.class)
        .hasMessageContaining(where)
        .hasMessageContaining("unknown state 'gone'");
    assertThatThrownBy(
            () ->
                RetireRecordFormat.fromJson(
                    golden
                        .replace("\"etag\" : \"9e107d9d372bb6826bd81d3542a419d6\"", "\"size\" : 1")
                        .getBytes(StandardCharsets.UTF_8),
                    where))
        .isInstanceOf(FormatException.class)
        .hasMessageContaining(where)
        .hasMessageContaining("etag");
  }

  @Test
  void aFirstVersionTextRecordIsReadAsTheLocationsItNames() {
    byte[] text =
        "# pending: names the generation of a statement before its call\nt/_generations/run-1/\n"
            .getBytes(StandardCharsets.UTF_8);

    assertThat(RetireRecordFormat.isJson(text)).isFalse();
    assertThat(RetireRecordFormat.legacyLocations(text)).containsExactly("t/_generations/run-1/");
  }
}
