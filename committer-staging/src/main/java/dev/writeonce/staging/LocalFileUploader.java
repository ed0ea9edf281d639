package dev.writeonce.staging;

import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.UploadPart;
import dev.writeonce.core.store.StoreGateway;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Uploads one local file as the parts of a multipart upload it leaves open. */
final class LocalFileUploader {

  private static final Logger LOG = LoggerFactory.getLogger(LocalFileUploader.class);

  private LocalFileUploader() {}

  /**
   * Uploads the file in parts of {@code partSize} bytes (the last may be shorter; an empty file is
   * one empty part). On any failure the upload is aborted before the error is thrown.
   */
  static PendingUpload upload(
      StoreGateway store, String key, Path file, long size, long partSize, String attempt)
      throws IOException {
    long effectivePartSize = Math.max(partSize, ceilDiv(size, UploadPart.MAX_PARTS));
    if (effectivePartSize != partSize) {
      LOG.info(
          "{} is {} bytes: parts of {} bytes instead of {} to stay within {} parts",
          file,
          size,
          effectivePartSize,
          partSize,
          UploadPart.MAX_PARTS);
    }
    String uploadId = store.createUpload(key);
    try {
      List<UploadPart> parts = new ArrayList<>();
      long offset = 0;
      int number = 1;
      do {
        long length = Math.min(effectivePartSize, size - offset);
        parts.add(store.uploadPart(key, uploadId, number++, file, offset, length));
        offset += length;
      } while (offset < size);
      return new PendingUpload(store.bucket(), key, uploadId, parts, attempt);
    } catch (IOException | RuntimeException e) {
      try {
        store.abortUpload(key, uploadId);
      } catch (IOException abortFailure) {
        e.addSuppressed(abortFailure);
      }
      throw e;
    }
  }

  private static long ceilDiv(long a, long b) {
    return (a + b - 1) / b;
  }
}
