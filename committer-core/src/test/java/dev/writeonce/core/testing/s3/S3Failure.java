package dev.writeonce.core.testing.s3;

/**
 * An S3 error answer as the store decides it; the client turns it into the SDK's exception, with
 * the request id and headers of the request that failed.
 */
final class S3Failure extends RuntimeException {

  private static final long serialVersionUID = 1L;

  final int status;
  final String code;

  S3Failure(int status, String code, String message) {
    super(message, null, false, false);
    this.status = status;
    this.code = code;
  }

  static S3Failure noSuchKey() {
    return new S3Failure(404, "NoSuchKey", "The specified key does not exist.");
  }

  static S3Failure noSuchUpload() {
    return new S3Failure(
        404,
        "NoSuchUpload",
        "The specified upload does not exist. The upload ID may be invalid, or the upload may have"
            + " been aborted or completed.");
  }

  static S3Failure preconditionFailed() {
    return new S3Failure(
        412, "PreconditionFailed", "At least one of the pre-conditions you specified did not hold");
  }

  static S3Failure notModified() {
    return new S3Failure(304, "NotModified", "Not Modified");
  }

  static S3Failure invalidRequest(String message) {
    return new S3Failure(400, "InvalidRequest", message);
  }

  static S3Failure invalidArgument(String message) {
    return new S3Failure(400, "InvalidArgument", message);
  }

  static S3Failure malformedXml() {
    return new S3Failure(
        400,
        "MalformedXML",
        "The XML you provided was not well-formed or did not validate against our published"
            + " schema");
  }
}
