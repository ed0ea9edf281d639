package dev.writeonce.core.store;

import java.io.IOException;
import java.util.List;
import org.apache.hadoop.fs.s3a.api.RequestFactory;
import org.apache.hadoop.fs.s3a.impl.PutObjectOptions;
import software.amazon.awssdk.services.s3.model.AbortMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.CompleteMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.CompletedMultipartUpload;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.CreateMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.Delete;
import software.amazon.awssdk.services.s3.model.DeleteObjectsRequest;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;
import software.amazon.awssdk.services.s3.model.HeadObjectRequest;
import software.amazon.awssdk.services.s3.model.ObjectIdentifier;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;
import software.amazon.awssdk.services.s3.model.UploadPartRequest;

/**
 * The gateway's requests, built by the request factory of the S3A file system it is bound to (so
 * they carry the encryption, ACL and storage-class settings of {@code fs.s3a.*}), or plainly for a
 * bare client.
 */
final class S3Requests {

  private final String bucket;
  private final RequestFactory factory;

  /**
   * @param factory S3A's request factory, or null for plain requests
   */
  S3Requests(String bucket, RequestFactory factory) {
    this.bucket = bucket;
    this.factory = factory;
  }

  CreateMultipartUploadRequest.Builder createUpload(String key) throws IOException {
    return factory == null
        ? CreateMultipartUploadRequest.builder().bucket(bucket).key(key)
        : factory.newMultipartUploadRequestBuilder(key, PutObjectOptions.defaultOptions());
  }

  UploadPartRequest.Builder uploadPart(String key, String uploadId, int partNumber, long size)
      throws IOException {
    return factory == null
        ? UploadPartRequest.builder()
            .bucket(bucket)
            .key(key)
            .uploadId(uploadId)
            .partNumber(partNumber)
            .contentLength(size)
        : factory.newUploadPartRequestBuilder(key, uploadId, partNumber, true, size);
  }

  CompleteMultipartUploadRequest complete(String key, String uploadId, List<CompletedPart> parts) {
    return factory == null
        ? CompleteMultipartUploadRequest.builder()
            .bucket(bucket)
            .key(key)
            .uploadId(uploadId)
            .multipartUpload(CompletedMultipartUpload.builder().parts(parts).build())
            .build()
        : factory
            .newCompleteMultipartUploadRequestBuilder(
                key, uploadId, parts, PutObjectOptions.defaultOptions())
            .build();
  }

  AbortMultipartUploadRequest abort(String key, String uploadId) {
    return factory == null
        ? AbortMultipartUploadRequest.builder().bucket(bucket).key(key).uploadId(uploadId).build()
        : factory.newAbortMultipartUploadRequestBuilder(key, uploadId).build();
  }

  PutObjectRequest.Builder put(String key, int length) {
    return factory == null
        ? PutObjectRequest.builder().bucket(bucket).key(key).contentLength((long) length)
        : factory.newPutObjectRequestBuilder(key, PutObjectOptions.defaultOptions(), length, false);
  }

  GetObjectRequest get(String key) {
    return factory == null
        ? GetObjectRequest.builder().bucket(bucket).key(key).build()
        : factory.newGetObjectRequestBuilder(key).build();
  }

  HeadObjectRequest head(String key) {
    return factory == null
        ? HeadObjectRequest.builder().bucket(bucket).key(key).build()
        : factory.newHeadObjectRequestBuilder(key).build();
  }

  DeleteObjectsRequest bulkDelete(List<ObjectIdentifier> batch) {
    return factory == null
        ? DeleteObjectsRequest.builder()
            .bucket(bucket)
            .delete(Delete.builder().objects(batch).quiet(true).build())
            .build()
        : factory.newBulkDeleteRequestBuilder(batch).build();
  }
}
