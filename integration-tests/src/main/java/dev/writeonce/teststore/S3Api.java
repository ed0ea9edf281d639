package dev.writeonce.teststore;

import java.util.HashSet;
import java.util.Set;

/**
 * The S3 operations the meters tell apart, whatever each store calls them, and the one rule that
 * tells them apart on the wire: {@link #classify}, used by the {@link StoreRelay} to count requests
 * and to pick the requests its faults and alterations apply to.
 */
public enum S3Api {
  PUT_OBJECT,
  COPY_OBJECT,
  CREATE_MULTIPART_UPLOAD,
  UPLOAD_PART,
  COMPLETE_MULTIPART_UPLOAD,
  ABORT_MULTIPART_UPLOAD,
  LIST_MULTIPART_UPLOADS,
  LIST_PARTS,
  GET_OBJECT,
  HEAD_OBJECT,
  LIST_OBJECTS,
  DELETE_OBJECT,
  DELETE_OBJECTS,
  OTHER;

  /** Query parameters of ListObjects (V1 and V2); a bucket GET with any other is not a listing. */
  private static final Set<String> LISTING_PARAMETERS =
      Set.of(
          "list-type",
          "prefix",
          "delimiter",
          "marker",
          "max-keys",
          "encoding-type",
          "continuation-token",
          "start-after",
          "fetch-owner",
          "x-id");

  /** Object sub-resources whose requests are none of the operations the meters tell apart. */
  private static final Set<String> OBJECT_SUBRESOURCES =
      Set.of(
          "tagging",
          "acl",
          "retention",
          "legal-hold",
          "attributes",
          "torrent",
          "restore",
          "select",
          "renameObject");

  /**
   * The operation of a path-style S3 request, the only addressing style the test stores configure.
   *
   * @param method the HTTP method
   * @param target the request target: path and query, as on the request line
   * @param copySource whether the request carries {@code x-amz-copy-source}
   */
  public static S3Api classify(String method, String target, boolean copySource) {
    int q = target.indexOf('?');
    String path = q < 0 ? target : target.substring(0, q);
    Set<String> parameters = new HashSet<>();
    if (q >= 0) {
      for (String pair : target.substring(q + 1).split("&")) {
        int eq = pair.indexOf('=');
        String name = eq < 0 ? pair : pair.substring(0, eq);
        if (!name.isEmpty()) {
          parameters.add(name);
        }
      }
    }
    String rest = path.startsWith("/") ? path.substring(1) : path;
    if (rest.isEmpty()) {
      return OTHER; // ListBuckets
    }
    int slash = rest.indexOf('/');
    boolean onObject = slash >= 0 && slash < rest.length() - 1;
    return onObject
        ? objectOperation(method, parameters, copySource)
        : bucketOperation(method, parameters);
  }

  private static S3Api bucketOperation(String method, Set<String> parameters) {
    switch (method) {
      case "GET":
        if (parameters.contains("uploads")) {
          return LIST_MULTIPART_UPLOADS;
        }
        return LISTING_PARAMETERS.containsAll(parameters) ? LIST_OBJECTS : OTHER;
      case "POST":
        return parameters.contains("delete") ? DELETE_OBJECTS : OTHER;
      default:
        return OTHER; // CreateBucket, HeadBucket, DeleteBucket, bucket settings
    }
  }

  private static S3Api objectOperation(String method, Set<String> parameters, boolean copySource) {
    boolean subresource = parameters.stream().anyMatch(OBJECT_SUBRESOURCES::contains);
    boolean upload = parameters.contains("uploadId");
    switch (method) {
      case "PUT":
        if (subresource) {
          return OTHER;
        }
        if (upload && parameters.contains("partNumber")) {
          return copySource ? OTHER : UPLOAD_PART; // UploadPartCopy is OTHER
        }
        return copySource ? COPY_OBJECT : PUT_OBJECT;
      case "POST":
        if (parameters.contains("uploads")) {
          return CREATE_MULTIPART_UPLOAD;
        }
        return upload ? COMPLETE_MULTIPART_UPLOAD : OTHER;
      case "DELETE":
        if (upload) {
          return ABORT_MULTIPART_UPLOAD;
        }
        return subresource ? OTHER : DELETE_OBJECT;
      case "GET":
        if (upload) {
          return LIST_PARTS;
        }
        return subresource ? OTHER : GET_OBJECT;
      case "HEAD":
        return HEAD_OBJECT;
      default:
        return OTHER;
    }
  }
}
