package dev.writeonce.core.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class RecordsTest {

  @Test
  void multipartEtagIsTheMd5OfThePartMd5sWithTheCount() {
    // md5("a") and md5("b"); the expected value is what S3 gives an object uploaded as those parts.
    List<UploadPart> parts =
        List.of(
            new UploadPart(1, "0cc175b9c0f1b6a831c399e269772661", 1),
            new UploadPart(2, "\"92eb5ffee6ae2fec3ad71c777531578f\"", 1));
    assertThat(Etags.multipartEtag(parts)).hasValue("96e024ba2074fe77e8e965ba43a704be-2");
  }

  @Test
  void aNonMd5PartEtagMakesTheObjectEtagUnpredictable() {
    assertThat(Etags.multipartEtag(List.of(new UploadPart(1, "kms-etag", 1)))).isEmpty();
  }

  @Test
  void destinationsParseAndContainOnlyKeysBelowThem() {
    Destination dest = Destination.of("s3a://bucket/a/b");
    assertThat(dest.prefix()).isEqualTo("a/b/");
    assertThat(dest.contains("a/b/part-0")).isTrue();
    assertThat(dest.contains("a/b/")).isFalse();
    assertThat(dest.contains("a/bc/part-0")).isFalse();
    assertThat(dest.contains("a/b//part-0")).isFalse();
    assertThat(Destination.of("s3a://bucket").prefix()).isEmpty();
    assertThatThrownBy(() -> Destination.of("hdfs://nn/a"))
        .hasMessageContaining("not an s3a:// URI");
  }

  @Test
  void partsMustBeNumberedWithoutGaps() {
    UploadPart second = new UploadPart(2, "0cc175b9c0f1b6a831c399e269772661", 1);
    assertThatThrownBy(() -> new PendingUpload("b", "k", "u", List.of(second), "a"))
        .hasMessageContaining("without gaps");
  }
}
