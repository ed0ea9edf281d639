package dev.writeonce.core.store;

import dev.writeonce.core.errors.ErrorKind;
import dev.writeonce.core.errors.StoreException;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.exception.SdkException;

/**
 * The one place where SDK failures are classified. The SDK client (configured by S3A's {@code
 * fs.s3a.retry.*} and {@code fs.s3a.attempts.maximum}) has already retried what it retries; the
 * gateway never retries again, so a failure that reaches here is final for that request.
 */
final class StoreErrors {

  /** Ceph RGW's answer to completing an upload it no longer knows (AWS says NoSuchUpload). */
  static final String RGW_COMPLETION_IN_PROGRESS = "multipart completion is already in progress";

  private StoreErrors() {}

  static StoreException translate(String operation, String uri, SdkException e) {
    if (e instanceof AwsServiceException service) {
      int status = service.statusCode();
      AwsErrorDetails details = service.awsErrorDetails();
      String code = details == null ? "" : nullToEmpty(details.errorCode());
      String text = details == null ? "" : nullToEmpty(details.errorMessage());
      ErrorKind kind = classify(operation, status, code, text);
      String message =
          operation
              + " "
              + uri
              + " failed: HTTP "
              + status
              + (code.isEmpty() ? "" : " " + code)
              + (text.isEmpty() ? "" : " (" + text + ")")
              + requestId(service)
              + hint(kind, status);
      return new StoreException(kind, status, message, e);
    }
    String reason = e instanceof SdkClientException ? "no usable response" : "SDK failure";
    return new StoreException(
        ErrorKind.TRANSIENT,
        0,
        operation + " " + uri + " failed with " + reason + ": " + e.getMessage() + unreachable(e),
        e);
  }

  /**
   * What to check when no connection to the store was made at all: the SDK's own message says only
   * "Connection refused" or names a host, not the setting that chose it.
   */
  static String unreachable(Throwable e) {
    for (Throwable cause = e; cause != null; cause = cause.getCause()) {
      if (cause instanceof java.net.ConnectException
          || cause instanceof java.net.UnknownHostException
          || cause instanceof java.net.NoRouteToHostException
          || cause instanceof javax.net.ssl.SSLException) {
        return "; the store could not be reached at the configured endpoint: check fs.s3a.endpoint"
            + " (host and port), fs.s3a.connection.ssl.enabled (https or http) and, for MinIO or"
            + " Ceph RGW, fs.s3a.path.style.access=true";
      }
      if (cause.getCause() == cause) {
        break;
      }
    }
    return "";
  }

  static ErrorKind classify(String operation, int status, String code, String message) {
    if ("NoSuchUpload".equals(code)) {
      return ErrorKind.NO_SUCH_UPLOAD;
    }
    if (status == 500 && message.contains(RGW_COMPLETION_IN_PROGRESS)) {
      return ErrorKind.NO_SUCH_UPLOAD;
    }
    if (status == 412 || "PreconditionFailed".equals(code)) {
      return ErrorKind.PRECONDITION_FAILED;
    }
    if ("NoSuchBucket".equals(code)) {
      return ErrorKind.FATAL;
    }
    if (status == 404) {
      // Some stores answer NoSuchKey for an upload that is gone.
      return operation.contains("Upload") ? ErrorKind.NO_SUCH_UPLOAD : ErrorKind.NOT_FOUND;
    }
    if (status == 429 || status == 503 || status >= 500 || "SlowDown".equals(code)) {
      return ErrorKind.TRANSIENT;
    }
    return ErrorKind.FATAL;
  }

  private static String requestId(AwsServiceException e) {
    String id = e.requestId();
    return id == null || id.isEmpty() ? "" : " [request id " + id + "]";
  }

  private static String hint(ErrorKind kind, int status) {
    if (status == 404) {
      return "; check the bucket name and fs.s3a.endpoint";
    }
    if (status == 403) {
      return "; check the credentials and permissions set under fs.s3a.* for this bucket";
    }
    if (status == 301 || status == 307) {
      return "; the bucket lives in another region: set fs.s3a.endpoint.region";
    }
    return kind == ErrorKind.TRANSIENT
        ? "; the SDK's retries (fs.s3a.attempts.maximum) were exhausted"
        : "";
  }

  private static String nullToEmpty(String s) {
    return s == null ? "" : s;
  }
}
