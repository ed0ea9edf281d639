package dev.writeonce.core.testing.s3;

import java.util.List;

/**
 * One request as the store receives it, shown to the {@link RequestHook} before the store acts.
 *
 * @param operation the S3 API name: "HeadObject", "ListObjectsV2", "PutObject",
 *     "CompleteMultipartUpload", ...
 * @param bucket the bucket the request names; for CopyObject the destination's
 * @param key the object key, or the prefix of a listing; null where the request names none
 * @param uploadId the multipart upload the request names, or null
 * @param keys DeleteObjects: the keys to delete; CopyObject: the source key; otherwise empty
 * @param thread the thread that sends the request
 */
public record StoreRequest(
    String operation,
    String bucket,
    String key,
    String uploadId,
    List<String> keys,
    Thread thread) {

  public StoreRequest {
    keys = keys == null ? List.of() : List.copyOf(keys);
  }
}
