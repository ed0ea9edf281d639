package dev.writeonce.core.testing;

import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.TaskManifest;
import dev.writeonce.core.model.UploadPart;
import dev.writeonce.core.store.StoreGateway;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Creates real pending uploads through a gateway, as a task commit would. */
public final class PendingUploads {

  private PendingUploads() {}

  /** The bytes test file {@code i} holds: small, distinct and checkable. */
  public static byte[] contentOf(String key) {
    return ("content of " + key + "\n").repeat(3).getBytes(StandardCharsets.UTF_8);
  }

  /** Uploads one file as one part and leaves the upload open. */
  public static PendingUpload upload(StoreGateway store, String key, byte[] data, String attempt)
      throws StoreException {
    String uploadId = store.createUpload(key);
    UploadPart part = store.uploadPart(key, uploadId, 1, ByteBuffer.wrap(data));
    return new PendingUpload(store.bucket(), key, uploadId, List.of(part), attempt);
  }

  /** Uploads one file of several parts (every part but the last of partSize bytes). */
  public static PendingUpload uploadInParts(
      StoreGateway store, String key, byte[] data, int partSize, String attempt)
      throws StoreException {
    String uploadId = store.createUpload(key);
    List<UploadPart> parts = new ArrayList<>();
    for (int offset = 0, number = 1; offset < data.length; offset += partSize, number++) {
      int length = Math.min(partSize, data.length - offset);
      parts.add(store.uploadPart(key, uploadId, number, ByteBuffer.wrap(data, offset, length)));
    }
    return new PendingUpload(store.bucket(), key, uploadId, parts, attempt);
  }

  /** A task manifest of files {@code keys}, each uploaded with {@link #contentOf}. */
  public static TaskManifest task(
      StoreGateway store, String jobId, String attempt, List<String> keys) throws StoreException {
    List<PendingUpload> uploads = new ArrayList<>();
    for (String key : keys) {
      uploads.add(upload(store, key, contentOf(key), attempt));
    }
    return new TaskManifest(jobId, attempt, uploads, Map.of("files", (long) keys.size()));
  }
}
