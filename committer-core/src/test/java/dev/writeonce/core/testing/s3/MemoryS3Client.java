package dev.writeonce.core.testing.s3;

import dev.writeonce.core.testing.s3.MemoryS3.DeleteOutcome;
import dev.writeonce.core.testing.s3.MemoryS3.DeleteTarget;
import dev.writeonce.core.testing.s3.MemoryS3.ListPosition;
import dev.writeonce.core.testing.s3.MemoryS3.ObjectPage;
import dev.writeonce.core.testing.s3.MemoryS3.OpenUpload;
import dev.writeonce.core.testing.s3.MemoryS3.PartPage;
import dev.writeonce.core.testing.s3.MemoryS3.PartRef;
import dev.writeonce.core.testing.s3.MemoryS3.StoredObject;
import dev.writeonce.core.testing.s3.MemoryS3.UploadPage;
import java.io.IOException;
import java.io.InputStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import software.amazon.awssdk.awscore.AwsRequest;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.core.SdkResponse;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.core.sync.ResponseTransformer;
import software.amazon.awssdk.http.AbortableInputStream;
import software.amazon.awssdk.http.SdkHttpResponse;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.AbortMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.AbortMultipartUploadResponse;
import software.amazon.awssdk.services.s3.model.CommonPrefix;
import software.amazon.awssdk.services.s3.model.CompleteMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.CompleteMultipartUploadResponse;
import software.amazon.awssdk.services.s3.model.CopyObjectRequest;
import software.amazon.awssdk.services.s3.model.CopyObjectResponse;
import software.amazon.awssdk.services.s3.model.CopyObjectResult;
import software.amazon.awssdk.services.s3.model.CreateMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.CreateMultipartUploadResponse;
import software.amazon.awssdk.services.s3.model.DeleteObjectRequest;
import software.amazon.awssdk.services.s3.model.DeleteObjectResponse;
import software.amazon.awssdk.services.s3.model.DeleteObjectsRequest;
import software.amazon.awssdk.services.s3.model.DeleteObjectsResponse;
import software.amazon.awssdk.services.s3.model.DeletedObject;
import software.amazon.awssdk.services.s3.model.GetBucketLocationRequest;
import software.amazon.awssdk.services.s3.model.GetBucketLocationResponse;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadBucketRequest;
import software.amazon.awssdk.services.s3.model.HeadBucketResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectRequest;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.ListMultipartUploadsRequest;
import software.amazon.awssdk.services.s3.model.ListMultipartUploadsResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsRequest;
import software.amazon.awssdk.services.s3.model.ListObjectsResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.ListPartsRequest;
import software.amazon.awssdk.services.s3.model.ListPartsResponse;
import software.amazon.awssdk.services.s3.model.MetadataDirective;
import software.amazon.awssdk.services.s3.model.MultipartUpload;
import software.amazon.awssdk.services.s3.model.NoSuchBucketException;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.NoSuchUploadException;
import software.amazon.awssdk.services.s3.model.ObjectIdentifier;
import software.amazon.awssdk.services.s3.model.ObjectStorageClass;
import software.amazon.awssdk.services.s3.model.Part;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;
import software.amazon.awssdk.services.s3.model.PutObjectResponse;
import software.amazon.awssdk.services.s3.model.S3Error;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;
import software.amazon.awssdk.services.s3.model.StorageClass;
import software.amazon.awssdk.services.s3.model.UploadPartRequest;
import software.amazon.awssdk.services.s3.model.UploadPartResponse;

/**
 * One simulated process's SDK client of a {@link MemoryS3}. Each request is shown to the {@link
 * RequestHook} on the calling thread first, counted by the store under its S3 API name, then
 * answered with S3's semantics: its status codes, error codes and the SDK's exception classes, and
 * a {@code Date} header from the store clock on every answer.
 *
 * <p>There are no SDK retries: each call is one attempt, so a failure the hook injects reaches the
 * caller (S3A's own retry loop, or the gateway) directly. Operations not implemented here throw
 * {@link UnsupportedOperationException}, as the interface's defaults do.
 */
public final class MemoryS3Client implements S3Client {

  /** S3's largest page of a listing. */
  static final int MAX_PAGE = 1000;

  private static final DateTimeFormatter HTTP_DATE =
      DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US)
          .withZone(ZoneOffset.UTC);

  private static final Pattern BYTE_RANGE = Pattern.compile("bytes=(\\d*)-(\\d*)");

  private final MemoryS3 store;
  private final RequestHook hook;
  private volatile boolean closed;

  /** The Date header of the store clock's current second, formatted once per second. */
  private record DateHeader(long second, String text) {}

  private volatile DateHeader date = new DateHeader(Long.MIN_VALUE, "");

  public MemoryS3Client(MemoryS3 store, RequestHook hook) {
    this.store = store;
    this.hook = hook;
  }

  public MemoryS3 store() {
    return store;
  }

  @Override
  public String serviceName() {
    return SERVICE_NAME;
  }

  /** After this, every request fails, as with an SDK client whose connection pool is shut. */
  @Override
  public void close() {
    closed = true;
  }

  // ---- buckets

  @Override
  public HeadBucketResponse headBucket(HeadBucketRequest request) {
    return send(
        request("HeadBucket", request.bucket(), null, null, null),
        (sent, id) -> {
          store.touchBucket(request.bucket());
          HeadBucketResponse.Builder answer =
              HeadBucketResponse.builder().bucketRegion(MemoryS3.REGION);
          answer.sdkHttpResponse(
              http(200, id).toBuilder().putHeader("x-amz-bucket-region", MemoryS3.REGION).build());
          return answer.build();
        });
  }

  /** Every bucket is in us-east-1, for which S3 sends an empty location constraint. */
  @Override
  public GetBucketLocationResponse getBucketLocation(GetBucketLocationRequest request) {
    return send(
        request("GetBucketLocation", request.bucket(), null, null, null),
        (sent, id) -> {
          store.touchBucket(request.bucket());
          return answer(GetBucketLocationResponse.builder(), 200, id).build();
        });
  }

  /**
   * Refused, as S3 refuses RenameObject outside directory buckets: the in-memory buckets are
   * general-purpose ones.
   */
  @Override
  public software.amazon.awssdk.services.s3.model.RenameObjectResponse renameObject(
      software.amazon.awssdk.services.s3.model.RenameObjectRequest request) {
    return send(
        request("RenameObject", request.bucket(), request.key(), null, null),
        (sent, id) -> {
          throw new S3Failure(
              501, "NotImplemented", "RenameObject is supported only in directory buckets");
        });
  }

  // ---- reading objects

  @Override
  public HeadObjectResponse headObject(HeadObjectRequest request) {
    if (request.partNumber() != null || request.range() != null) {
      throw new UnsupportedOperationException("HeadObject with a part number or range");
    }
    return send(
        request("HeadObject", request.bucket(), request.key(), null, null),
        (sent, id) -> {
          StoredObject object = existing(request.bucket(), request.key());
          checkReadConditions(
              object,
              condition(request, request.ifMatch(), "If-Match"),
              condition(request, request.ifNoneMatch(), "If-None-Match"),
              request.ifModifiedSince(),
              request.ifUnmodifiedSince());
          return answer(
                  HeadObjectResponse.builder()
                      .contentLength(object.size())
                      .eTag(object.etag())
                      .lastModified(httpTime(object.lastModifiedMillis()))
                      .contentType(object.contentType())
                      .metadata(object.metadata())
                      .acceptRanges("bytes"),
                  200,
                  id)
              .build();
        });
  }

  /**
   * GET, whole or one byte range ("bytes=a-b", "bytes=a-", "bytes=-n"; the end is cut to the
   * object's; a start past it is 416 InvalidRange; a Range S3 cannot read is ignored). The
   * transformer gets an {@link AbortableInputStream} over the bytes, on the calling thread.
   */
  @Override
  public <ReturnT> ReturnT getObject(
      GetObjectRequest request, ResponseTransformer<GetObjectResponse, ReturnT> transformer) {
    if (request.partNumber() != null) {
      throw new UnsupportedOperationException("GetObject with a part number");
    }
    record Read(GetObjectResponse response, InputStream content) {}
    Read read =
        send(
            request("GetObject", request.bucket(), request.key(), null, null),
            (sent, id) -> {
              StoredObject object = existing(request.bucket(), request.key());
              checkReadConditions(
                  object,
                  condition(request, request.ifMatch(), "If-Match"),
                  condition(request, request.ifNoneMatch(), "If-None-Match"),
                  request.ifModifiedSince(),
                  request.ifUnmodifiedSince());
              long[] range = byteRange(request.range(), object.size());
              int from = range == null ? 0 : (int) range[0];
              int length = range == null ? (int) object.size() : (int) (range[1] - range[0] + 1);
              GetObjectResponse.Builder answer =
                  GetObjectResponse.builder()
                      .contentLength((long) length)
                      .eTag(object.etag())
                      .lastModified(httpTime(object.lastModifiedMillis()))
                      .contentType(object.contentType())
                      .metadata(object.metadata())
                      .acceptRanges("bytes");
              if (range != null) {
                answer.contentRange("bytes " + range[0] + "-" + range[1] + "/" + object.size());
              }
              return new Read(
                  answer(answer, range == null ? 200 : 206, id).build(),
                  object.stream(from, length));
            });
    try {
      return transformer.transform(read.response(), AbortableInputStream.create(read.content()));
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw SdkClientException.create("The response transformer failed: " + e, e);
    }
  }

  // ---- writing objects

  /**
   * PUT, read fully from the body's stream. Honours If-None-Match "*" and If-Match, as fields or as
   * headers (S3A sends headers), with 412 PreconditionFailed, also for If-Match on a missing key.
   */
  @Override
  public PutObjectResponse putObject(PutObjectRequest request, RequestBody body) {
    if (request.writeOffsetBytes() != null) {
      throw new UnsupportedOperationException("PutObject with a write offset (appends)");
    }
    return send(
        request("PutObject", request.bucket(), request.key(), null, null),
        (sent, id) -> {
          byte[] bytes = readFully(body);
          StoredObject object =
              store.put(
                  request.bucket(),
                  request.key(),
                  bytes,
                  request.metadata(),
                  request.contentType() != null ? request.contentType() : body.contentType(),
                  condition(request, request.ifMatch(), "If-Match"),
                  condition(request, request.ifNoneMatch(), "If-None-Match"));
          return answer(PutObjectResponse.builder().eTag(object.etag()), 200, id).build();
        });
  }

  /**
   * A single-request copy (counted as "CopyObject"). The copy's ETag is the MD5 of its bytes; it
   * keeps the source's metadata unless the directive is REPLACE. A missing source is 404 NoSuchKey;
   * CopySourceIfMatch / IfNoneMatch are honoured with 412.
   */
  @Override
  public CopyObjectResponse copyObject(CopyObjectRequest request) {
    if (request.copySourceIfModifiedSince() != null
        || request.copySourceIfUnmodifiedSince() != null
        || request.sourceVersionId() != null) {
      throw new UnsupportedOperationException(
          "CopyObject with a time condition or a source version");
    }
    String bucket = request.destinationBucket();
    String key = request.destinationKey();
    String[] source = copySource(request);
    Map<String, String> metadata =
        request.metadataDirective() == MetadataDirective.REPLACE ? request.metadata() : null;
    return send(
        request("CopyObject", bucket, key, null, List.of(source[1])),
        (sent, id) -> {
          StoredObject copy =
              store.copy(
                  source[0],
                  source[1],
                  bucket,
                  key,
                  metadata,
                  request.contentType(),
                  condition(request, request.copySourceIfMatch(), "x-amz-copy-source-if-match"),
                  condition(
                      request, request.copySourceIfNoneMatch(), "x-amz-copy-source-if-none-match"));
          CopyObjectResult result =
              CopyObjectResult.builder()
                  .eTag(copy.etag())
                  .lastModified(httpTime(copy.lastModifiedMillis()))
                  .build();
          return answer(CopyObjectResponse.builder().copyObjectResult(result), 200, id).build();
        });
  }

  /**
   * 204 whether or not the key exists; with If-Match (the field, or the header the gateway sends)
   * 412 when the object is absent or has another ETag.
   */
  @Override
  public DeleteObjectResponse deleteObject(DeleteObjectRequest request) {
    if (request.ifMatchLastModifiedTime() != null || request.ifMatchSize() != null) {
      throw new UnsupportedOperationException("DeleteObject with a time or size condition");
    }
    String ifMatch = condition(request, request.ifMatch(), "If-Match");
    return send(
        request("DeleteObject", request.bucket(), request.key(), null, null),
        (sent, id) -> {
          store.delete(request.bucket(), request.key(), ifMatch);
          return answer(DeleteObjectResponse.builder(), 204, id).build();
        });
  }

  /**
   * Deletes each key on its own: a missing key counts as deleted, a key whose ETag condition fails
   * is listed under errors. Quiet mode lists only the errors.
   */
  @Override
  public DeleteObjectsResponse deleteObjects(DeleteObjectsRequest request) {
    List<ObjectIdentifier> identifiers =
        request.delete() == null ? List.of() : request.delete().objects();
    boolean quiet = request.delete() != null && Boolean.TRUE.equals(request.delete().quiet());
    List<String> keys = identifiers.stream().map(ObjectIdentifier::key).toList();
    return send(
        request("DeleteObjects", request.bucket(), null, null, keys),
        (sent, id) -> {
          if (identifiers.isEmpty() || identifiers.size() > MAX_PAGE) {
            throw S3Failure.malformedXml();
          }
          List<DeleteTarget> targets =
              identifiers.stream().map(o -> new DeleteTarget(o.key(), o.eTag())).toList();
          List<DeletedObject> deleted = new ArrayList<>();
          List<S3Error> errors = new ArrayList<>();
          for (DeleteOutcome outcome : store.deleteAll(request.bucket(), targets)) {
            if (outcome.failure() == null) {
              if (!quiet) {
                deleted.add(DeletedObject.builder().key(outcome.key()).build());
              }
            } else {
              errors.add(
                  S3Error.builder()
                      .key(outcome.key())
                      .code(outcome.failure().code)
                      .message(outcome.failure().getMessage())
                      .build());
            }
          }
          return answer(DeleteObjectsResponse.builder().deleted(deleted).errors(errors), 200, id)
              .build();
        });
  }

  // ---- multipart uploads

  @Override
  public CreateMultipartUploadResponse createMultipartUpload(CreateMultipartUploadRequest request) {
    return send(
        request("CreateMultipartUpload", request.bucket(), request.key(), null, null),
        (sent, id) -> {
          OpenUpload upload =
              store.createUpload(
                  request.bucket(), request.key(), request.metadata(), request.contentType());
          return answer(
                  CreateMultipartUploadResponse.builder()
                      .bucket(request.bucket())
                      .key(request.key())
                      .uploadId(upload.uploadId()),
                  200,
                  id)
              .build();
        });
  }

  /** Stores a part (404 NoSuchUpload for an unknown upload); its ETag is the quoted MD5. */
  @Override
  public UploadPartResponse uploadPart(UploadPartRequest request, RequestBody body) {
    return send(
        request("UploadPart", request.bucket(), request.key(), request.uploadId(), null),
        (sent, id) -> {
          if (request.partNumber() == null) {
            throw S3Failure.invalidArgument("A part number is required");
          }
          String etag =
              store.uploadPart(
                  request.bucket(),
                  request.key(),
                  request.uploadId(),
                  request.partNumber(),
                  readFully(body));
          return answer(UploadPartResponse.builder().eTag(etag), 200, id).build();
        });
  }

  /**
   * Completes an upload: 404 NoSuchUpload for an unknown upload, also one completed or aborted
   * before; 400 InvalidPartOrder, InvalidPart, EntityTooSmall, MalformedXML (no parts); 412 for
   * If-None-Match "*" on an existing key or a failed If-Match. The ETag is S3's multipart ETag.
   */
  @Override
  public CompleteMultipartUploadResponse completeMultipartUpload(
      CompleteMultipartUploadRequest request) {
    List<PartRef> parts =
        request.multipartUpload() == null
            ? List.of()
            : request.multipartUpload().parts().stream()
                .map(part -> new PartRef(part.partNumber(), part.eTag()))
                .toList();
    return send(
        request(
            "CompleteMultipartUpload", request.bucket(), request.key(), request.uploadId(), null),
        (sent, id) -> {
          StoredObject object =
              store.complete(
                  request.bucket(),
                  request.key(),
                  request.uploadId(),
                  parts,
                  condition(request, request.ifMatch(), "If-Match"),
                  condition(request, request.ifNoneMatch(), "If-None-Match"));
          return answer(
                  CompleteMultipartUploadResponse.builder()
                      .bucket(request.bucket())
                      .key(request.key())
                      .eTag(object.etag())
                      .location("/" + request.bucket() + "/" + request.key()),
                  200,
                  id)
              .build();
        });
  }

  @Override
  public AbortMultipartUploadResponse abortMultipartUpload(AbortMultipartUploadRequest request) {
    return send(
        request("AbortMultipartUpload", request.bucket(), request.key(), request.uploadId(), null),
        (sent, id) -> {
          store.abort(request.bucket(), request.key(), request.uploadId());
          return answer(AbortMultipartUploadResponse.builder(), 204, id).build();
        });
  }

  /**
   * Open uploads under a prefix, by key and then by age, paged by key marker and upload id marker.
   * A page holds at least one upload when any is left: the markers cannot say "from the start".
   */
  @Override
  public ListMultipartUploadsResponse listMultipartUploads(ListMultipartUploadsRequest request) {
    if (request.delimiter() != null && !request.delimiter().isEmpty()) {
      throw new UnsupportedOperationException("ListMultipartUploads with a delimiter");
    }
    int requested = request.maxUploads() == null ? MAX_PAGE : request.maxUploads();
    return send(
        request("ListMultipartUploads", request.bucket(), request.prefix(), null, null),
        (sent, id) -> {
          int limit = markerPageSize(sent, requested);
          UploadPage page =
              store.listUploads(
                  request.bucket(),
                  nullToEmpty(request.prefix()),
                  emptyToNull(request.keyMarker()),
                  emptyToNull(request.uploadIdMarker()),
                  limit);
          List<MultipartUpload> uploads = new ArrayList<>();
          for (OpenUpload upload : page.uploads()) {
            uploads.add(
                MultipartUpload.builder()
                    .key(upload.key())
                    .uploadId(upload.uploadId())
                    .initiated(Instant.ofEpochMilli(upload.initiatedMillis()))
                    .storageClass(StorageClass.STANDARD)
                    .build());
          }
          ListMultipartUploadsResponse.Builder answer =
              ListMultipartUploadsResponse.builder()
                  .bucket(request.bucket())
                  .prefix(request.prefix())
                  .keyMarker(request.keyMarker())
                  .uploadIdMarker(request.uploadIdMarker())
                  .maxUploads(requested)
                  .isTruncated(page.truncated())
                  .uploads(uploads);
          if (page.truncated() && !page.uploads().isEmpty()) {
            OpenUpload last = page.uploads().get(page.uploads().size() - 1);
            answer.nextKeyMarker(last.key()).nextUploadIdMarker(last.uploadId());
          }
          return answer(answer, 200, id).build();
        });
  }

  @Override
  public ListPartsResponse listParts(ListPartsRequest request) {
    int requested = request.maxParts() == null ? MAX_PAGE : request.maxParts();
    int marker = request.partNumberMarker() == null ? 0 : request.partNumberMarker();
    return send(
        request("ListParts", request.bucket(), request.key(), request.uploadId(), null),
        (sent, id) -> {
          int limit = markerPageSize(sent, requested);
          PartPage page =
              store.listParts(request.bucket(), request.key(), request.uploadId(), marker, limit);
          List<Part> parts = new ArrayList<>();
          for (MemoryS3.Part part : page.parts()) {
            parts.add(
                Part.builder()
                    .partNumber(part.number())
                    .eTag(part.etag())
                    .size(part.size())
                    .lastModified(httpTime(part.lastModifiedMillis()))
                    .build());
          }
          ListPartsResponse.Builder answer =
              ListPartsResponse.builder()
                  .bucket(request.bucket())
                  .key(request.key())
                  .uploadId(request.uploadId())
                  .partNumberMarker(marker)
                  .maxParts(requested)
                  .isTruncated(page.truncated())
                  .parts(parts);
          if (page.truncated() && !parts.isEmpty()) {
            answer.nextPartNumberMarker(parts.get(parts.size() - 1).partNumber());
          }
          return answer(answer, 200, id).build();
        });
  }

  // ---- listings

  /**
   * LIST v2: prefix, delimiter, MaxKeys (default and at most 1000), StartAfter, and an opaque
   * continuation token, which takes precedence over StartAfter. The hook may make any page short
   * while {@code IsTruncated} stays true, even empty.
   */
  @Override
  public ListObjectsV2Response listObjectsV2(ListObjectsV2Request request) {
    int requested = request.maxKeys() == null ? MAX_PAGE : request.maxKeys();
    String token = request.continuationToken();
    return send(
        request("ListObjectsV2", request.bucket(), request.prefix(), null, null),
        (sent, id) -> {
          ListPosition after;
          if (token != null) {
            after = decodeToken(token);
          } else if (request.startAfter() != null && !request.startAfter().isEmpty()) {
            after = new ListPosition(request.startAfter(), false);
          } else {
            after = null;
          }
          ObjectPage page =
              store.list(
                  request.bucket(),
                  nullToEmpty(request.prefix()),
                  request.delimiter(),
                  after,
                  pageSize(sent, requested));
          return answer(
                  ListObjectsV2Response.builder()
                      .name(request.bucket())
                      .prefix(request.prefix())
                      .delimiter(request.delimiter())
                      .maxKeys(requested)
                      .keyCount(page.contents().size() + page.commonPrefixes().size())
                      .isTruncated(page.truncated())
                      .contents(listed(page))
                      .commonPrefixes(commonPrefixes(page))
                      .continuationToken(token)
                      .startAfter(request.startAfter())
                      .nextContinuationToken(page.truncated() ? encodeToken(page.next()) : null),
                  200,
                  id)
              .build();
        });
  }

  /**
   * LIST v1: as v2, paged by marker. NextMarker comes only with a delimiter, as from S3; without
   * one a client goes on from the last key. A page holds at least one entry when any is left.
   */
  @Override
  public ListObjectsResponse listObjects(ListObjectsRequest request) {
    int requested = request.maxKeys() == null ? MAX_PAGE : request.maxKeys();
    String prefix = nullToEmpty(request.prefix());
    String delimiter = request.delimiter();
    String marker = emptyToNull(request.marker());
    return send(
        request("ListObjects", request.bucket(), request.prefix(), null, null),
        (sent, id) -> {
          ListPosition after = null;
          if (marker != null) {
            // A marker that is a common prefix goes on after everything under it.
            boolean commonPrefix =
                delimiter != null
                    && !delimiter.isEmpty()
                    && marker.startsWith(prefix)
                    && marker.endsWith(delimiter)
                    && marker.indexOf(delimiter, prefix.length())
                        == marker.length() - delimiter.length();
            after = new ListPosition(marker, commonPrefix);
          }
          ObjectPage page =
              store.list(
                  request.bucket(), prefix, delimiter, after, markerPageSize(sent, requested));
          ListObjectsResponse.Builder answer =
              ListObjectsResponse.builder()
                  .name(request.bucket())
                  .prefix(request.prefix())
                  .delimiter(delimiter)
                  .marker(request.marker())
                  .maxKeys(requested)
                  .isTruncated(page.truncated())
                  .contents(listed(page))
                  .commonPrefixes(commonPrefixes(page));
          if (page.truncated()
              && page.next() != null
              && delimiter != null
              && !delimiter.isEmpty()) {
            answer.nextMarker(page.next().entry());
          }
          return answer(answer, 200, id).build();
        });
  }

  // ---- the request path

  /** What the store does with a request once the hook let it through. */
  @FunctionalInterface
  private interface Action<T> {
    T apply(StoreRequest sent, String requestId);
  }

  private static StoreRequest request(
      String operation, String bucket, String key, String uploadId, List<String> keys) {
    return new StoreRequest(operation, bucket, key, uploadId, keys, Thread.currentThread());
  }

  private <T> T send(StoreRequest request, Action<T> action) {
    if (closed) {
      throw new IllegalStateException(
          "MemoryS3Client is closed: " + request.operation() + " was not sent");
    }
    Handling outcome = hook.before(request);
    String requestId = store.acceptRequest(request.operation());
    if (outcome == Handling.FAIL_UNSENT) {
      throw exception(
          request.operation(),
          new S3Failure(503, "SlowDown", "Please reduce your request rate."),
          requestId);
    }
    T answer;
    try {
      answer = action.apply(request, requestId);
    } catch (S3Failure failure) {
      if (outcome == Handling.LOSE_ANSWER) {
        throw lostAnswer();
      }
      throw exception(request.operation(), failure, requestId);
    }
    if (outcome == Handling.LOSE_ANSWER) {
      throw lostAnswer();
    }
    return answer;
  }

  /** The hook's page size, within what was asked and S3's 1000. */
  private int pageSize(StoreRequest request, int requested) {
    if (requested < 0) {
      throw S3Failure.invalidArgument("max-keys must be between 0 and 2147483647");
    }
    int asked = Math.min(requested, MAX_PAGE);
    return Math.max(0, Math.min(asked, hook.pageSize(request, asked)));
  }

  /**
   * The page size of a listing paged by markers: at least one entry when any was asked for, as a
   * marker cannot say "from the start".
   */
  private int markerPageSize(StoreRequest request, int requested) {
    int size = pageSize(request, requested);
    return requested > 0 ? Math.max(1, size) : size;
  }

  private static SdkClientException lostAnswer() {
    return SdkClientException.create(
        "Unable to execute HTTP request: Connection reset (simulated lost answer)");
  }

  /**
   * The SDK's exception for an error answer: NoSuchKeyException, NoSuchUploadException and
   * NoSuchBucketException where the SDK throws those. A HEAD answer has no body, so the SDK knows
   * no error code for it except 404, which it calls NoSuchKey.
   */
  private S3Exception exception(String operation, S3Failure failure, String requestId) {
    String code = failure.code;
    String message = failure.getMessage();
    if (operation.startsWith("Head") && failure.status != 404 && failure.status != 503) {
      code = null;
      message = statusText(failure.status);
    }
    AwsErrorDetails details =
        AwsErrorDetails.builder()
            .errorCode(code)
            .errorMessage(message)
            .serviceName("S3")
            .sdkHttpResponse(http(failure.status, requestId))
            .build();
    S3Exception.Builder exception =
        switch (code == null ? "" : code) {
          case "NoSuchKey" -> NoSuchKeyException.builder();
          case "NoSuchUpload" -> NoSuchUploadException.builder();
          case "NoSuchBucket" -> NoSuchBucketException.builder();
          default -> S3Exception.builder();
        };
    return (S3Exception)
        exception
            .statusCode(failure.status)
            .requestId(requestId)
            .awsErrorDetails(details)
            .message(message)
            .build();
  }

  private <B extends SdkResponse.Builder> B answer(B builder, int status, String requestId) {
    builder.sdkHttpResponse(http(status, requestId));
    return builder;
  }

  private SdkHttpResponse http(int status, String requestId) {
    SdkHttpResponse.Builder response =
        SdkHttpResponse.builder()
            .statusCode(status)
            .statusText(statusText(status))
            .putHeader("Date", dateHeader())
            .putHeader("x-amz-request-id", requestId);
    String server = store.serverHeader();
    if (!server.isEmpty()) {
      response.putHeader("Server", server);
    }
    return response.build();
  }

  private String dateHeader() {
    long second = Math.floorDiv(store.nowMillis(), 1000);
    DateHeader current = date;
    if (current.second() != second) {
      current = new DateHeader(second, HTTP_DATE.format(Instant.ofEpochSecond(second)));
      date = current;
    }
    return current.text();
  }

  // ---- details

  private StoredObject existing(String bucket, String key) {
    StoredObject object = store.find(bucket, key);
    if (object == null) {
      throw S3Failure.noSuchKey();
    }
    return object;
  }

  /** GET and HEAD conditions, RFC 7232's way: If-Match before If-Unmodified-Since, and so on. */
  private static void checkReadConditions(
      StoredObject object,
      String ifMatch,
      String ifNoneMatch,
      Instant ifModifiedSince,
      Instant ifUnmodifiedSince) {
    Instant modified = httpTime(object.lastModifiedMillis());
    if (ifMatch != null) {
      if (!MemoryS3.etagMatches(object.etag(), ifMatch)) {
        throw S3Failure.preconditionFailed();
      }
    } else if (ifUnmodifiedSince != null && modified.isAfter(ifUnmodifiedSince)) {
      throw S3Failure.preconditionFailed();
    }
    if (ifNoneMatch != null) {
      if (MemoryS3.etagMatches(object.etag(), ifNoneMatch)) {
        throw S3Failure.notModified();
      }
    } else if (ifModifiedSince != null && !modified.isAfter(ifModifiedSince)) {
      throw S3Failure.notModified();
    }
  }

  /** The first and last byte of a Range, or null for the whole object. */
  static long[] byteRange(String header, long size) {
    if (header == null) {
      return null;
    }
    Matcher range = BYTE_RANGE.matcher(header.trim());
    if (!range.matches() || (range.group(1).isEmpty() && range.group(2).isEmpty())) {
      return null;
    }
    long first;
    long last;
    try {
      if (range.group(1).isEmpty()) {
        long suffix = Long.parseLong(range.group(2));
        if (suffix == 0) {
          throw invalidRange();
        }
        first = Math.max(0, size - suffix);
        last = size - 1;
      } else {
        first = Long.parseLong(range.group(1));
        last = range.group(2).isEmpty() ? Long.MAX_VALUE : Long.parseLong(range.group(2));
        if (last < first) {
          return null;
        }
        last = Math.min(last, size - 1);
      }
    } catch (NumberFormatException tooLong) {
      return null;
    }
    if (first >= size) {
      throw invalidRange();
    }
    return new long[] {first, last};
  }

  private static S3Failure invalidRange() {
    return new S3Failure(416, "InvalidRange", "The requested range is not satisfiable");
  }

  /**
   * A condition given as a field or, as S3A and the gateway send some, as a header of the request's
   * override configuration.
   */
  private static String condition(AwsRequest request, String field, String header) {
    if (field != null) {
      return field;
    }
    return request
        .overrideConfiguration()
        .flatMap(
            override ->
                override.headers().entrySet().stream()
                    .filter(e -> e.getKey().equalsIgnoreCase(header) && !e.getValue().isEmpty())
                    .map(e -> e.getValue().get(0))
                    .findFirst())
        .orElse(null);
  }

  /** The source bucket and key, also from the old CopySource field ("bucket/url-encoded-key"). */
  @SuppressWarnings("deprecation")
  private static String[] copySource(CopyObjectRequest request) {
    if (request.sourceBucket() != null && request.sourceKey() != null) {
      return new String[] {request.sourceBucket(), request.sourceKey()};
    }
    String source = request.copySource();
    if (source == null) {
      throw new IllegalArgumentException("CopyObject without a source");
    }
    if (source.startsWith("/")) {
      source = source.substring(1);
    }
    int slash = source.indexOf('/');
    if (slash <= 0) {
      throw new IllegalArgumentException("CopyObject source without a key: " + source);
    }
    String key = source.substring(slash + 1).replace("+", "%2B");
    return new String[] {
      source.substring(0, slash), URLDecoder.decode(key, StandardCharsets.UTF_8)
    };
  }

  private static List<S3Object> listed(ObjectPage page) {
    List<S3Object> listed = new ArrayList<>(page.contents().size());
    for (StoredObject object : page.contents()) {
      listed.add(
          S3Object.builder()
              .key(object.key())
              .size(object.size())
              .eTag(object.etag())
              // Listings carry milliseconds (as MinIO's do; AWS sends whole seconds).
              .lastModified(Instant.ofEpochMilli(object.lastModifiedMillis()))
              .storageClass(ObjectStorageClass.STANDARD)
              .build());
    }
    return listed;
  }

  private static List<CommonPrefix> commonPrefixes(ObjectPage page) {
    return page.commonPrefixes().stream()
        .map(prefix -> CommonPrefix.builder().prefix(prefix).build())
        .toList();
  }

  /** A position in a listing as an opaque token: B (the start), K key, or P common prefix. */
  private static String encodeToken(ListPosition position) {
    String plain =
        position == null ? "B" : (position.commonPrefix() ? "P" : "K") + position.entry();
    return Base64.getUrlEncoder()
        .withoutPadding()
        .encodeToString(plain.getBytes(StandardCharsets.UTF_8));
  }

  private static ListPosition decodeToken(String token) {
    String plain;
    try {
      plain = new String(Base64.getUrlDecoder().decode(token), StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      plain = "";
    }
    if (plain.equals("B")) {
      return null;
    }
    if (plain.length() < 2 || (plain.charAt(0) != 'K' && plain.charAt(0) != 'P')) {
      throw S3Failure.invalidArgument("The continuation token provided is incorrect");
    }
    return new ListPosition(plain.substring(1), plain.charAt(0) == 'P');
  }

  /** Last-Modified as an HTTP header carries it: whole seconds. */
  private static Instant httpTime(long millis) {
    return Instant.ofEpochSecond(Math.floorDiv(millis, 1000));
  }

  private static byte[] readFully(RequestBody body) {
    try (InputStream in = body.contentStreamProvider().newStream()) {
      return in.readAllBytes();
    } catch (IOException e) {
      throw SdkClientException.create("Unable to read the request body: " + e, e);
    }
  }

  private static String statusText(int status) {
    return switch (status) {
      case 200 -> "OK";
      case 204 -> "No Content";
      case 206 -> "Partial Content";
      case 304 -> "Not Modified";
      case 400 -> "Bad Request";
      case 404 -> "Not Found";
      case 412 -> "Precondition Failed";
      case 416 -> "Requested Range Not Satisfiable";
      case 501 -> "Not Implemented";
      case 503 -> "Service Unavailable";
      default -> "Status " + status;
    };
  }

  private static String nullToEmpty(String s) {
    return s == null ? "" : s;
  }

  private static String emptyToNull(String s) {
    return s == null || s.isEmpty() ? null : s;
  }
}
