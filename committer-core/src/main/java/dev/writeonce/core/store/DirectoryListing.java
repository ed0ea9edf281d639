package dev.writeonce.core.store;

import java.util.List;

/**
 * What one delimited listing of a prefix found directly under it.
 *
 * @param files the objects, in key order
 * @param directories the common prefixes, each ending in '/', in key order
 */
public record DirectoryListing(List<ObjectInfo> files, List<String> directories) {
  public DirectoryListing {
    files = List.copyOf(files);
    directories = List.copyOf(directories);
  }
}
