package dev.writeonce.core.testing.s3;

import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.s3.S3AsyncClient;
import software.amazon.awssdk.services.s3.model.CopyObjectRequest;
import software.amazon.awssdk.services.s3.model.CopyObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectRequest;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;

/**
 * The asynchronous face of a {@link MemoryS3Client}, for the transfer manager S3A copies large
 * objects with: each call runs on the calling thread and returns a completed future, so no thread
 * of the SDK's takes part. An S3 or client error completes the future exceptionally, as the SDK's
 * does; anything else the hook throws (a crash) is thrown to the caller. Only the operations that
 * path uses are here.
 */
public final class MemoryS3AsyncClient implements S3AsyncClient {

  private final MemoryS3Client client;

  public MemoryS3AsyncClient(MemoryS3Client client) {
    this.client = client;
  }

  @Override
  public CompletableFuture<CopyObjectResponse> copyObject(CopyObjectRequest request) {
    return answered(() -> client.copyObject(request));
  }

  @Override
  public CompletableFuture<HeadObjectResponse> headObject(HeadObjectRequest request) {
    return answered(() -> client.headObject(request));
  }

  @Override
  public String serviceName() {
    return SERVICE_NAME;
  }

  @Override
  public void close() {
    client.close();
  }

  private static <T> CompletableFuture<T> answered(Supplier<T> call) {
    try {
      return CompletableFuture.completedFuture(call.get());
    } catch (SdkException e) {
      return CompletableFuture.failedFuture(e);
    }
  }
}
