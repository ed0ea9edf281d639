package dev.writeonce.core.store;

import dev.writeonce.core.model.Etags;

/**
 * What HEAD or LIST tells of an object.
 *
 * @param key the object key
 * @param size its length
 * @param etag its ETag, unquoted
 * @param lastModifiedMillis its modification time in epoch millis
 */
public record ObjectInfo(String key, long size, String etag, long lastModifiedMillis) {
  public ObjectInfo {
    etag = Etags.unquote(etag);
  }
}
