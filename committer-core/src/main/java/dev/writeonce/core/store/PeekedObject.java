package dev.writeonce.core.store;

import java.util.Optional;

/**
 * An object read only as far as needed: its metadata, and its whole body when its first bytes
 * showed it to be one the caller wanted (a small record of this library), otherwise no body.
 *
 * @param info size, ETag and modification time of the object
 * @param body the whole body, or null when the object's first bytes did not match
 */
public record PeekedObject(ObjectInfo info, byte[] body) {

  /** The body, when the object was one the caller asked for. */
  public Optional<byte[]> matchingBody() {
    return Optional.ofNullable(body);
  }
}
