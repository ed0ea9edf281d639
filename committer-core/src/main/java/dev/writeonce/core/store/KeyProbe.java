package dev.writeonce.core.store;

import java.util.Optional;

/**
 * What one LIST tells of a key, as a path: the object stored under it, and whether other keys lie
 * under it as under a directory.
 *
 * @param object the object whose key is exactly the probed key, or null
 * @param directory whether any key starts with the probed key and '/'
 */
public record KeyProbe(ObjectInfo object, boolean directory) {

  public Optional<ObjectInfo> file() {
    return Optional.ofNullable(object);
  }

  public boolean exists() {
    return object != null || directory;
  }
}
