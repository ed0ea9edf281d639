package dev.writeonce.core.model;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/** ETag arithmetic: stores quote ETags inconsistently, and multipart ETags can be derived. */
public final class Etags {

  private static final Pattern MD5_HEX = Pattern.compile("[0-9a-fA-F]{32}");

  private Etags() {}

  /** Strips the quotes some stores put around an ETag; null becomes empty. */
  public static String unquote(String etag) {
    if (etag == null) {
      return "";
    }
    String trimmed = etag.trim();
    if (trimmed.length() >= 2 && trimmed.startsWith("\"") && trimmed.endsWith("\"")) {
      return trimmed.substring(1, trimmed.length() - 1);
    }
    return trimmed;
  }

  /**
   * The ETag S3-compatible stores give a completed multipart object: the MD5 of the concatenated
   * binary part MD5s, a dash, and the part count. Empty when a part's ETag is not a plain MD5 (for
   * example under SSE-KMS), because then the object's ETag cannot be predicted.
   */
  public static Optional<String> multipartEtag(List<UploadPart> parts) {
    MessageDigest md5 = md5();
    HexFormat hex = HexFormat.of();
    for (UploadPart part : parts) {
      if (!MD5_HEX.matcher(part.etag()).matches()) {
        return Optional.empty();
      }
      md5.update(hex.parseHex(part.etag()));
    }
    return Optional.of(hex.formatHex(md5.digest()) + "-" + parts.size());
  }

  /** The hex MD5 of some bytes: the ETag a single-request PUT of them gets. */
  public static String md5Hex(byte[] bytes) {
    return HexFormat.of().formatHex(md5().digest(bytes));
  }

  /** The hex MD5 of a string's UTF-8 bytes. */
  public static String md5Hex(String text) {
    return md5Hex(text.getBytes(StandardCharsets.UTF_8));
  }

  private static MessageDigest md5() {
    try {
      return MessageDigest.getInstance("MD5");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java runtime has MD5", e);
    }
  }
}
