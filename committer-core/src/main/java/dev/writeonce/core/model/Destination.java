package dev.writeonce.core.model;

import java.net.URI;
import java.util.Objects;

/**
 * Where a job's output goes: a bucket and a key prefix, which is empty for the bucket's root and
 * otherwise ends with '/'. Every key a job touches must lie under it.
 *
 * @param bucket the bucket
 * @param prefix the key prefix of the destination directory
 */
public record Destination(String bucket, String prefix) {

  public Destination {
    PendingUpload.requireText(bucket, "bucket");
    Objects.requireNonNull(prefix, "prefix");
    if (prefix.startsWith("/")) {
      throw new IllegalArgumentException("destination prefix must not start with '/': " + prefix);
    }
    if (!prefix.isEmpty() && !prefix.endsWith("/")) {
      prefix = prefix + "/";
    }
    if (prefix.contains("//")) {
      throw new IllegalArgumentException("destination prefix has an empty segment: " + prefix);
    }
  }

  /** Parses {@code s3a://bucket/path}; {@code s3://} and {@code s3n://} name the same place. */
  public static Destination of(URI uri) {
    String scheme = uri.getScheme();
    if (scheme == null || !scheme.matches("s3[an]?")) {
      throw new IllegalArgumentException(
          "destination " + uri + " is not an s3a:// URI: the committers write to S3 stores only");
    }
    String bucket = uri.getHost();
    if (bucket == null || bucket.isEmpty()) {
      throw new IllegalArgumentException("destination " + uri + " names no bucket");
    }
    String path = uri.getPath() == null ? "" : uri.getPath();
    while (path.startsWith("/")) {
      path = path.substring(1);
    }
    return new Destination(bucket, path);
  }

  /** Parses a destination written as a URI string. */
  public static Destination of(String uri) {
    return of(URI.create(uri));
  }

  /** True when the key lies strictly under this destination. */
  public boolean contains(String key) {
    return key.length() > prefix.length() && key.startsWith(prefix) && !key.contains("//");
  }

  /** The key of a path relative to the destination. */
  public String keyOf(String relativePath) {
    return prefix + relativePath;
  }

  /** The s3a URI of a key in this bucket. */
  public String uriOf(String key) {
    return "s3a://" + bucket + "/" + key;
  }

  @Override
  public String toString() {
    return uriOf(prefix);
  }
}
