package dev.writeonce.core.model;

/**
 * One uploaded part of a multipart upload.
 *
 * @param number the part number, 1 to 10,000 as S3 allows
 * @param etag the ETag the store returned for the part, unquoted
 * @param size the bytes in the part
 */
public record UploadPart(int number, String etag, long size) {

  /** The most parts one upload may have on S3, Ceph RGW and MinIO. */
  public static final int MAX_PARTS = 10_000;

  public UploadPart {
    if (number < 1 || number > MAX_PARTS) {
      throw new IllegalArgumentException("part number " + number + " is outside 1.." + MAX_PARTS);
    }
    etag = Etags.unquote(etag);
    if (etag.isEmpty()) {
      throw new IllegalArgumentException("part " + number + " has no ETag");
    }
    if (size < 0) {
      throw new IllegalArgumentException("part " + number + " has negative size " + size);
    }
  }
}
