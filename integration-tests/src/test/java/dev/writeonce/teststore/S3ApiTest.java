package dev.writeonce.teststore;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class S3ApiTest {

  @Test
  void operationsAreToldApartByMethodPathQueryAndCopySource() {
    assertThat(S3Api.classify("PUT", "/b/k", false)).isEqualTo(S3Api.PUT_OBJECT);
    assertThat(S3Api.classify("PUT", "/b/k?x-id=PutObject", false)).isEqualTo(S3Api.PUT_OBJECT);
    assertThat(S3Api.classify("PUT", "/b/k", true)).isEqualTo(S3Api.COPY_OBJECT);
    assertThat(S3Api.classify("PUT", "/b/k?partNumber=2&uploadId=u", false))
        .isEqualTo(S3Api.UPLOAD_PART);
    assertThat(S3Api.classify("PUT", "/b/k?partNumber=2&uploadId=u", true)).isEqualTo(S3Api.OTHER);
    assertThat(S3Api.classify("PUT", "/b/k?tagging", false)).isEqualTo(S3Api.OTHER);
    assertThat(S3Api.classify("PUT", "/b/k?renameObject", false)).isEqualTo(S3Api.OTHER);
    assertThat(S3Api.classify("POST", "/b/k?uploads", false))
        .isEqualTo(S3Api.CREATE_MULTIPART_UPLOAD);
    assertThat(S3Api.classify("POST", "/b/k?uploadId=u", false))
        .isEqualTo(S3Api.COMPLETE_MULTIPART_UPLOAD);
    assertThat(S3Api.classify("DELETE", "/b/k?uploadId=u", false))
        .isEqualTo(S3Api.ABORT_MULTIPART_UPLOAD);
    assertThat(S3Api.classify("DELETE", "/b/dir/k", false)).isEqualTo(S3Api.DELETE_OBJECT);
    assertThat(S3Api.classify("POST", "/b?delete", false)).isEqualTo(S3Api.DELETE_OBJECTS);
    assertThat(S3Api.classify("GET", "/b/k?uploadId=u&max-parts=10", false))
        .isEqualTo(S3Api.LIST_PARTS);
    assertThat(S3Api.classify("GET", "/b?uploads&prefix=p", false))
        .isEqualTo(S3Api.LIST_MULTIPART_UPLOADS);
    assertThat(S3Api.classify("GET", "/b/k?versionId=v&partNumber=1", false))
        .isEqualTo(S3Api.GET_OBJECT);
    assertThat(S3Api.classify("GET", "/b/dir/", false)).isEqualTo(S3Api.GET_OBJECT);
    assertThat(S3Api.classify("HEAD", "/b/k", false)).isEqualTo(S3Api.HEAD_OBJECT);
    assertThat(S3Api.classify("GET", "/b?list-type=2&prefix=a%2F&delimiter=%2F", false))
        .isEqualTo(S3Api.LIST_OBJECTS);
    assertThat(S3Api.classify("GET", "/b/", false)).isEqualTo(S3Api.LIST_OBJECTS);
    assertThat(S3Api.classify("GET", "/b?location", false)).isEqualTo(S3Api.OTHER);
    assertThat(S3Api.classify("HEAD", "/b", false)).isEqualTo(S3Api.OTHER);
    assertThat(S3Api.classify("PUT", "/b", false)).isEqualTo(S3Api.OTHER);
    assertThat(S3Api.classify("GET", "/", false)).isEqualTo(S3Api.OTHER);
  }

  @Test
  void theRelaysRequestPredicatesAreTheClassifiersOperations() {
    assertThat(request("PUT", "/b/k", Map.of()).isPutObject()).isTrue();
    assertThat(request("PUT", "/b/k", Map.of("x-amz-copy-source", "/b/j")).isPutObject()).isFalse();
    assertThat(request("PUT", "/b/k?partNumber=1&uploadId=u", Map.of()).isPutObject()).isFalse();
    assertThat(request("PUT", "/b/k?partNumber=1&uploadId=u", Map.of()).isUploadPart()).isTrue();
    assertThat(request("POST", "/b/k?uploadId=u", Map.of()).isCompleteUpload()).isTrue();
    assertThat(request("POST", "/b/k?uploads", Map.of()).isCompleteUpload()).isFalse();
    assertThat(request("GET", "/b?list-type=2", Map.of()).operation())
        .isEqualTo(S3Api.LIST_OBJECTS);
  }

  private static StoreRelay.Request request(
      String method, String target, Map<String, String> headers) {
    return new StoreRelay.Request(method, target, headers);
  }
}
