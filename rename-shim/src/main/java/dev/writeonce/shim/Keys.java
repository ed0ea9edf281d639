package dev.writeonce.shim;

/**
 * Key arithmetic: keys have no leading '/'; a directory's key has no trailing '/'; the bucket's
 * root is "".
 */
final class Keys {

  private Keys() {}

  /** The parent directory's key: "" for a key at the bucket's root, null for the root itself. */
  static String parentOf(String key) {
    if (key.isEmpty()) {
      return null;
    }
    int slash = key.lastIndexOf('/');
    return slash < 0 ? "" : key.substring(0, slash);
  }

  /** The last component of a key. */
  static String nameOf(String key) {
    return key.substring(key.lastIndexOf('/') + 1);
  }

  /** The prefix of everything under a directory: "" for the root, otherwise the key and '/'. */
  static String prefixOf(String directoryKey) {
    return directoryKey.isEmpty() ? "" : directoryKey + "/";
  }

  /** Whether a key is the directory's own key or lies under it. */
  static boolean isAtOrUnder(String key, String directoryKey) {
    return directoryKey.isEmpty() || key.equals(directoryKey) || key.startsWith(directoryKey + "/");
  }

  /** Whether a key lies strictly under the directory. */
  static boolean isUnder(String key, String directoryKey) {
    return !key.equals(directoryKey) && isAtOrUnder(key, directoryKey);
  }

  /** The directory above both keys ("" for the bucket's root). */
  static String commonDirectory(String a, String b) {
    String common = "";
    int from = 0;
    while (true) {
      int slash = a.indexOf('/', from);
      if (slash < 0 || !b.startsWith(a.substring(0, slash + 1))) {
        return common;
      }
      common = a.substring(0, slash);
      from = slash + 1;
    }
  }
}
