package dev.writeonce.core.store;

/**
 * A multipart upload the store still holds open.
 *
 * @param key the key the upload would create
 * @param uploadId its id
 * @param initiatedMillis when it was created, epoch millis
 */
public record OpenUpload(String key, String uploadId, long initiatedMillis) {}
