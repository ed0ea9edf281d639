package dev.writeonce.core.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.errors.ErrorKind;
import dev.writeonce.core.errors.StoreException;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.s3.model.S3Exception;

class StoreErrorsTest {

  private static StoreException translate(String operation, int status, String code, String text) {
    S3Exception e =
        (S3Exception)
            S3Exception.builder()
                .statusCode(status)
                .requestId("req-1")
                .awsErrorDetails(
                    AwsErrorDetails.builder().errorCode(code).errorMessage(text).build())
                .build();
    return StoreErrors.translate(operation, "s3a://b/k", e);
  }

  @Test
  void awsNoSuchUploadAndRgwCompletionInProgressBothMeanNoSuchUpload() {
    assertThat(translate("CompleteMultipartUpload", 404, "NoSuchUpload", "").kind())
        .isEqualTo(ErrorKind.NO_SUCH_UPLOAD);
    assertThat(
            translate(
                    "CompleteMultipartUpload",
                    500,
                    "InternalError",
                    "This multipart completion is already in progress")
                .kind())
        .isEqualTo(ErrorKind.NO_SUCH_UPLOAD);
  }

  @Test
  void conditionalCreateLossIsPreconditionFailed() {
    assertThat(translate("PutObject", 412, "PreconditionFailed", "").kind())
        .isEqualTo(ErrorKind.PRECONDITION_FAILED);
  }

  @Test
  void serverErrorsAndThrottlingAreTransientAndBrokenConnectionsToo() {
    assertThat(translate("UploadPart", 503, "SlowDown", "").kind()).isEqualTo(ErrorKind.TRANSIENT);
    assertThat(translate("UploadPart", 500, "InternalError", "").kind())
        .isEqualTo(ErrorKind.TRANSIENT);
    StoreException reset =
        StoreErrors.translate(
            "UploadPart", "s3a://b/k", SdkClientException.create("Connection reset"));
    assertThat(reset.kind()).isEqualTo(ErrorKind.TRANSIENT);
    assertThat(reset.statusCode()).isZero();
  }

  @Test
  void accessDeniedIsFatalAndTheMessageNamesTheSettingsToCheck() {
    StoreException denied = translate("PutObject", 403, "AccessDenied", "Access Denied");
    assertThat(denied.kind()).isEqualTo(ErrorKind.FATAL);
    assertThat(denied.getMessage())
        .contains("PutObject s3a://b/k failed: HTTP 403 AccessDenied")
        .contains("request id req-1")
        .contains("fs.s3a.");
  }

  @Test
  void missingObjectsAreNotFoundButAMissingUploadIsNoSuchUpload() {
    assertThat(translate("HeadObject", 404, "", "").kind()).isEqualTo(ErrorKind.NOT_FOUND);
    assertThat(translate("AbortMultipartUpload", 404, "NoSuchKey", "").kind())
        .isEqualTo(ErrorKind.NO_SUCH_UPLOAD);
  }

  @Test
  void aRefusedConnectionNamesTheEndpointSettingToCheck() {
    StoreException e =
        StoreErrors.translate(
            "PutObject",
            "s3a://b/k",
            SdkClientException.create(
                "Unable to execute HTTP request: Connection refused",
                new java.net.ConnectException("Connection refused")));

    assertThat(e.getMessage())
        .startsWith("PutObject s3a://b/k failed with no usable response")
        .contains("Connection refused")
        .contains("check fs.s3a.endpoint (host and port)");
    assertThat(
            StoreErrors.translate(
                    "UploadPart", "s3a://b/k", SdkClientException.create("Connection reset"))
                .getMessage())
        .doesNotContain("fs.s3a.endpoint");
  }
}
