package dev.writeonce.core.store;

import dev.writeonce.core.errors.ErrorKind;
import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.model.Etags;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.model.UploadPart;
import dev.writeonce.core.store.check.Capability;
import dev.writeonce.core.store.check.StoreCheck;
import dev.writeonce.core.store.check.StoreTrust;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.s3a.S3AFileSystem;
import org.apache.hadoop.fs.s3a.api.RequestFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.core.ResponseBytes;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.core.SdkResponse;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.AbortMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.CompleteMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.CreateMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.DeleteObjectRequest;
import software.amazon.awssdk.services.s3.model.DeleteObjectsRequest;
import software.amazon.awssdk.services.s3.model.DeleteObjectsResponse;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadBucketRequest;
import software.amazon.awssdk.services.s3.model.HeadObjectRequest;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.ListMultipartUploadsRequest;
import software.amazon.awssdk.services.s3.model.ListMultipartUploadsResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.MultipartUpload;
import software.amazon.awssdk.services.s3.model.ObjectIdentifier;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;
import software.amazon.awssdk.services.s3.model.S3Error;
import software.amazon.awssdk.services.s3.model.S3Object;
import software.amazon.awssdk.services.s3.model.UploadPartRequest;

/**
 * The gateway over an SDK v2 {@link S3Client}. Bound to an {@link S3AFileSystem}, it uses that
 * filesystem's client and request factory, so endpoint, credentials, region, encryption, ACL and
 * retry settings are those the user set under {@code fs.s3a.*}. It never sets a request checksum
 * algorithm, so stores that reject SDK checksum trailers (older Ceph RGW and MinIO) accept it.
 */
public final class S3StoreGateway implements StoreGateway {

  private static final Logger LOG = LoggerFactory.getLogger(S3StoreGateway.class);

  /** S3's limit of keys in one DeleteObjects request. */
  public static final int DELETE_BATCH = 1000;

  private final S3Client s3;
  private final String bucket;
  private final S3Requests requests;
  private final RequestCounters counters = new RequestCounters();

  /** The endpoint the client reaches, as the store verdicts name it. */
  private final String endpoint;

  /**
   * The store's clock minus the local clock: the largest lower bound seen so far, from the Date
   * header of each answer and the Last-Modified times it reports (each was the store's time at or
   * before the answer). Long.MIN_VALUE before any.
   */
  private final java.util.concurrent.atomic.AtomicLong storeClockOffset =
      new java.util.concurrent.atomic.AtomicLong(Long.MIN_VALUE);

  private S3StoreGateway(S3Client s3, String bucket, RequestFactory requests, String endpoint) {
    this.s3 = s3;
    this.bucket = bucket;
    this.requests = new S3Requests(bucket, requests);
    this.endpoint = endpoint;
  }

  /** The gateway for the bucket an S3A filesystem is bound to. */
  public static S3StoreGateway forFileSystem(FileSystem fs) {
    if (!(fs instanceof S3AFileSystem s3a)) {
      throw new IllegalArgumentException(
          fs.getUri()
              + " is served by "
              + fs.getClass().getName()
              + ", not S3AFileSystem: set fs.s3a.impl (or the scheme's fs.<scheme>.impl) to"
              + " org.apache.hadoop.fs.s3a.S3AFileSystem or a subclass");
    }
    S3Client client = s3a.getS3AInternals().getAmazonS3Client("writeonce job commit");
    return new S3StoreGateway(
        client, s3a.getBucket(), s3a.getRequestFactory(), StoreCheck.endpointOf(client, fs));
  }

  /** A gateway over a client built elsewhere; requests carry no encryption settings. */
  public static S3StoreGateway forClient(S3Client client, String bucket) {
    return new S3StoreGateway(client, bucket, null, StoreCheck.endpointOf(client, null));
  }

  @Override
  public String bucket() {
    return bucket;
  }

  @Override
  public RequestCounters counters() {
    return counters;
  }

  @Override
  public String createUpload(String key) throws StoreException {
    CreateMultipartUploadRequest.Builder request;
    try {
      request = requests.createUpload(key);
    } catch (IOException e) {
      throw new StoreException(
          ErrorKind.FATAL, 0, "CreateMultipartUpload " + uri(key) + ": " + e, e);
    }
    return call(
        RequestType.CREATE_UPLOAD,
        "CreateMultipartUpload",
        key,
        () -> s3.createMultipartUpload(request.build()).uploadId());
  }

  @Override
  public UploadPart uploadPart(String key, String uploadId, int partNumber, ByteBuffer data)
      throws StoreException {
    long size = data.remaining();
    return uploadPart(key, uploadId, partNumber, size, RequestBody.fromRemainingByteBuffer(data));
  }

  @Override
  public UploadPart uploadPart(
      String key, String uploadId, int partNumber, Path file, long offset, long length)
      throws StoreException {
    // A fresh stream per attempt, so the SDK can retry the part by reading the range again.
    RequestBody body =
        RequestBody.fromContentProvider(
            () -> BoundedInputStream.ofRange(file, offset, length),
            length,
            "application/octet-stream");
    return uploadPart(key, uploadId, partNumber, length, body);
  }

  private UploadPart uploadPart(
      String key, String uploadId, int partNumber, long size, RequestBody body)
      throws StoreException {
    UploadPartRequest.Builder request;
    try {
      request = requests.uploadPart(key, uploadId, partNumber, size);
    } catch (IOException e) {
      throw new StoreException(ErrorKind.FATAL, 0, "UploadPart " + uri(key) + ": " + e, e);
    }
    String etag =
        call(
            RequestType.UPLOAD_PART,
            "UploadPart",
            key,
            () -> s3.uploadPart(request.build(), body).eTag());
    return new UploadPart(partNumber, etag, size);
  }

  @Override
  public String completeUpload(PendingUpload upload) throws StoreException {
    List<CompletedPart> parts = new ArrayList<>(upload.parts().size());
    for (UploadPart part : upload.parts()) {
      parts.add(CompletedPart.builder().partNumber(part.number()).eTag(part.etag()).build());
    }
    CompleteMultipartUploadRequest request =
        requests.complete(upload.key(), upload.uploadId(), parts);
    String etag =
        call(
            RequestType.COMPLETE_UPLOAD,
            "CompleteMultipartUpload",
            upload.key(),
            () -> s3.completeMultipartUpload(request).eTag());
    etag = Etags.unquote(etag);
    if (etag.isEmpty()) {
      // Ceph RGW answers the first completion with an empty ETag. Predict it from the parts
      // rather than spend a HEAD per file; read it back only when it cannot be predicted.
      Optional<String> expected = upload.expectedEtag();
      if (expected.isPresent()) {
        return expected.get();
      }
      return headObject(upload.key()).map(ObjectInfo::etag).orElse("");
    }
    return etag;
  }

  @Override
  public void abortUpload(String key, String uploadId) throws StoreException {
    AbortMultipartUploadRequest request = requests.abort(key, uploadId);
    try {
      call(
          RequestType.ABORT_UPLOAD,
          "AbortMultipartUpload",
          key,
          () -> s3.abortMultipartUpload(request));
    } catch (StoreException e) {
      if (!e.is(ErrorKind.NO_SUCH_UPLOAD) && !e.is(ErrorKind.NOT_FOUND)) {
        throw e;
      }
      LOG.debug("Upload {} of {} was already gone", uploadId, uri(key));
    }
  }

  @Override
  public List<OpenUpload> listUploads(String key) throws StoreException {
    return listUploadsUnder(key).stream().filter(upload -> upload.key().equals(key)).toList();
  }

  @Override
  public List<OpenUpload> listUploadsUnder(String key) throws StoreException {
    List<OpenUpload> found = new ArrayList<>();
    String keyMarker = null;
    String uploadIdMarker = null;
    do {
      ListMultipartUploadsRequest.Builder request =
          ListMultipartUploadsRequest.builder().bucket(bucket).prefix(key);
      if (keyMarker != null) {
        request.keyMarker(keyMarker).uploadIdMarker(uploadIdMarker);
      }
      ListMultipartUploadsResponse page =
          call(
              RequestType.LIST_UPLOADS,
              "ListMultipartUploads",
              key,
              () -> observed(s3.listMultipartUploads(request.build())));
      for (MultipartUpload upload : page.uploads()) {
        if (upload.key().startsWith(key)) {
          long initiated = upload.initiated() == null ? 0 : upload.initiated().toEpochMilli();
          found.add(new OpenUpload(upload.key(), upload.uploadId(), initiated));
        }
      }
      boolean more = Boolean.TRUE.equals(page.isTruncated());
      keyMarker = more ? page.nextKeyMarker() : null;
      uploadIdMarker = more ? page.nextUploadIdMarker() : null;
    } while (keyMarker != null);
    return found;
  }

  @Override
  public String putObject(String key, byte[] data, boolean ifNoneMatch) throws StoreException {
    if (!ifNoneMatch) {
      return put(key, data, request -> {});
    }
    return conditional(
        Capability.PUT_IF_NONE_MATCH, () -> put(key, data, request -> request.ifNoneMatch("*")));
  }

  @Override
  public String putObject(
      String key, ObjectBody body, boolean ifNoneMatch, java.util.Map<String, String> metadata)
      throws StoreException {
    if (body.length() > 5L * 1024 * 1024 * 1024) {
      throw new StoreException(
          ErrorKind.FATAL,
          0,
          "PutObject "
              + uri(key)
              + ": "
              + body.length()
              + " bytes, more than one PUT takes (5 GiB)",
          null);
    }
    Put put =
        () -> {
          PutObjectRequest.Builder request = requests.put(key, 0);
          request.contentLength(body.length());
          java.util.Map<String, String> merged =
              new java.util.HashMap<>(request.build().metadata());
          merged.putAll(metadata);
          request.metadata(merged);
          if (ifNoneMatch) {
            request.ifNoneMatch("*");
          }
          // A file is read afresh on each attempt, so the SDK can retry the request.
          RequestBody content =
              body instanceof ObjectBody.File file
                  ? RequestBody.fromContentProvider(
                      () -> BoundedInputStream.ofRange(file.path(), 0, file.length()),
                      file.length(),
                      "application/octet-stream")
                  : RequestBody.fromBytes(((ObjectBody.Bytes) body).data());
          String etag =
              call(
                  RequestType.PUT_OBJECT,
                  "PutObject",
                  key,
                  () -> observed(s3.putObject(request.build(), content)).eTag());
          return Etags.unquote(etag);
        };
    return ifNoneMatch ? conditional(Capability.PUT_IF_NONE_MATCH, put) : put.send();
  }

  @Override
  public Optional<java.util.Map<String, String>> objectMetadata(String key) throws StoreException {
    return head(key).map(HeadObjectResponse::metadata);
  }

  @Override
  public DirectoryListing listDirectory(String prefix) throws StoreException {
    List<ObjectInfo> files = new ArrayList<>();
    List<String> directories = new ArrayList<>();
    String token = null;
    do {
      ListObjectsV2Request request =
          ListObjectsV2Request.builder()
              .bucket(bucket)
              .prefix(prefix)
              .delimiter("/")
              .continuationToken(token)
              .build();
      ListObjectsV2Response page =
          call(
              RequestType.LIST_OBJECTS,
              "ListObjectsV2",
              prefix,
              () -> observed(s3.listObjectsV2(request)));
      page.commonPrefixes().forEach(p -> directories.add(p.prefix()));
      for (S3Object object : page.contents()) {
        long modified = object.lastModified() == null ? 0 : object.lastModified().toEpochMilli();
        files.add(new ObjectInfo(object.key(), object.size(), object.eTag(), modified));
      }
      token = nextToken(page, prefix);
    } while (token != null);
    return new DirectoryListing(files, directories);
  }

  @Override
  public String replaceObject(String key, byte[] data, String etag) throws StoreException {
    try {
      return conditional(
          Capability.PUT_IF_MATCH,
          () -> put(key, data, request -> request.ifMatch(Etags.unquote(etag))));
    } catch (StoreException e) {
      if (!e.is(ErrorKind.NOT_FOUND)) {
        throw e;
      }
      // MinIO answers If-Match on a missing key with 404, Ceph RGW and S3 with 412.
      throw new StoreException(
          ErrorKind.PRECONDITION_FAILED,
          412,
          "PutObject " + key + " If-Match " + etag + ": the object is gone",
          e);
    }
  }

  private interface Put {
    String send() throws StoreException;
  }

  /** The error codes of a store that does not implement a condition it was sent. */
  private static final java.util.Set<String> CONDITION_NOT_IMPLEMENTED =
      java.util.Set.of("NotImplemented", "InvalidRequest", "InvalidArgument");

  /**
   * A write whose condition the store check found honoured: an answer saying the store does not
   * implement it (501, or 400 with such a code; not an expired token or a bad digest) was not
   * predicted, so the verdict is discarded and the next write checks the store again.
   */
  private String conditional(Capability capability, Put put) throws StoreException {
    try {
      return put.send();
    } catch (StoreException e) {
      String code =
          e.getCause() instanceof software.amazon.awssdk.awscore.exception.AwsServiceException aws
                  && aws.awsErrorDetails() != null
                  && aws.awsErrorDetails().errorCode() != null
              ? aws.awsErrorDetails().errorCode()
              : "";
      if (e.statusCode() == 501
          || (e.statusCode() == 400 && CONDITION_NOT_IMPLEMENTED.contains(code))) {
        StoreTrust.mispredicted(
            endpoint,
            bucket,
            capability,
            "answered a conditional PutObject with " + e.statusCode() + " " + code);
      }
      throw e;
    }
  }

  private String put(String key, byte[] data, Consumer<PutObjectRequest.Builder> condition)
      throws StoreException {
    PutObjectRequest.Builder request = requests.put(key, data.length);
    condition.accept(request);
    String etag =
        call(
            RequestType.PUT_OBJECT,
            "PutObject",
            key,
            () -> observed(s3.putObject(request.build(), RequestBody.fromBytes(data))).eTag());
    return Etags.unquote(etag);
  }

  @Override
  public String copyObject(String sourceKey, String targetKey) throws StoreException {
    software.amazon.awssdk.services.s3.model.CopyObjectRequest request =
        software.amazon.awssdk.services.s3.model.CopyObjectRequest.builder()
            .sourceBucket(bucket)
            .sourceKey(sourceKey)
            .destinationBucket(bucket)
            .destinationKey(targetKey)
            .build();
    String etag =
        call(
            RequestType.COPY_OBJECT,
            "CopyObject",
            targetKey,
            () -> observed(s3.copyObject(request)).copyObjectResult().eTag());
    return Etags.unquote(etag);
  }

  @Override
  public Optional<byte[]> getObject(String key) throws StoreException {
    GetObjectRequest request = requests.get(key);
    try {
      ResponseBytes<GetObjectResponse> bytes =
          call(RequestType.GET_OBJECT, "GetObject", key, () -> s3.getObjectAsBytes(request));
      observed(bytes.response());
      return Optional.of(bytes.asByteArray());
    } catch (StoreException e) {
      if (e.is(ErrorKind.NOT_FOUND)) {
        return Optional.empty();
      }
      throw e;
    }
  }

  @Override
  public Optional<PeekedObject> peekObject(
      String key, int headBytes, java.util.function.Predicate<byte[]> wanted)
      throws StoreException {
    GetObjectRequest request = requests.get(key);
    try {
      ResponseInputStream<GetObjectResponse> in =
          call(RequestType.GET_OBJECT, "GetObject", key, () -> s3.getObject(request));
      try {
        GetObjectResponse response = observed(in.response());
        long modified =
            response.lastModified() == null ? 0 : response.lastModified().toEpochMilli();
        noteStoreTime(modified);
        ObjectInfo info = new ObjectInfo(key, response.contentLength(), response.eTag(), modified);
        byte[] head = in.readNBytes(headBytes);
        if (!wanted.test(head)) {
          // Closing would drain the rest of a possibly large body: drop the connection instead.
          in.abort();
          return Optional.of(new PeekedObject(info, null));
        }
        byte[] rest = in.readAllBytes();
        byte[] body = java.util.Arrays.copyOf(head, head.length + rest.length);
        System.arraycopy(rest, 0, body, head.length, rest.length);
        in.close();
        return Optional.of(new PeekedObject(info, body));
      } catch (IOException e) {
        in.abort();
        throw new StoreException(
            ErrorKind.TRANSIENT, 0, "GetObject " + uri(key) + ": reading failed: " + e, e);
      }
    } catch (StoreException e) {
      if (e.is(ErrorKind.NOT_FOUND)) {
        return Optional.empty();
      }
      throw e;
    }
  }

  @Override
  public Optional<ObjectInfo> headObject(String key) throws StoreException {
    Optional<HeadObjectResponse> found = head(key);
    if (found.isEmpty()) {
      return Optional.empty();
    }
    HeadObjectResponse head = found.get();
    long modified = head.lastModified() == null ? 0 : head.lastModified().toEpochMilli();
    noteStoreTime(modified);
    return Optional.of(new ObjectInfo(key, head.contentLength(), head.eTag(), modified));
  }

  /** One HeadObject; empty when the key holds nothing. */
  private Optional<HeadObjectResponse> head(String key) throws StoreException {
    HeadObjectRequest request = requests.head(key);
    try {
      return Optional.of(
          call(RequestType.HEAD_OBJECT, "HeadObject", key, () -> observed(s3.headObject(request))));
    } catch (StoreException e) {
      if (e.is(ErrorKind.NOT_FOUND)) {
        return Optional.empty();
      }
      throw e;
    }
  }

  @Override
  public List<String> listChildren(String prefix, int maxEntries) throws StoreException {
    List<String> children = new ArrayList<>();
    String token = null;
    do {
      ListObjectsV2Request request =
          ListObjectsV2Request.builder()
              .bucket(bucket)
              .prefix(prefix)
              .delimiter("/")
              .maxKeys(Math.min(1000, maxEntries - children.size()))
              .continuationToken(token)
              .build();
      ListObjectsV2Response page =
          call(
              RequestType.LIST_OBJECTS,
              "ListObjectsV2",
              prefix,
              () -> observed(s3.listObjectsV2(request)));
      page.commonPrefixes().forEach(p -> children.add(p.prefix()));
      page.contents().forEach(o -> children.add(o.key()));
      token = nextToken(page, prefix);
    } while (token != null && children.size() < maxEntries);
    return children.size() > maxEntries ? children.subList(0, maxEntries) : children;
  }

  /**
   * The token of the page after this one, null when it was the last. The S3 API lets a page hold
   * fewer entries than asked (none, even) while more remain: only {@code IsTruncated} tells.
   */
  private String nextToken(ListObjectsV2Response page, String prefix) throws StoreException {
    if (!Boolean.TRUE.equals(page.isTruncated())) {
      return null;
    }
    String token = page.nextContinuationToken();
    if (token == null || token.isEmpty()) {
      throw new StoreException(
          ErrorKind.FATAL,
          200,
          "ListObjectsV2 "
              + uri(prefix)
              + ": the store marked a page truncated and gave no continuation token, so the"
              + " rest of the listing cannot be read",
          null);
    }
    return token;
  }

  /**
   * Whether a key is a file, a directory or both. One LIST with delimiter '/' and the key as prefix
   * answers both in the usual case: the object comes first, and the directory appears as the prefix
   * {@code key/}, after any keys that share the prefix and sort before '/' ({@code key.crc}, {@code
   * key-1}). Pages are read until {@code key/} is passed or the listing ends, so a short, truncated
   * page never reads as "no such directory".
   */
  @Override
  public KeyProbe probe(String key) throws StoreException {
    String directory = key + "/";
    byte[] directoryBytes = directory.getBytes(StandardCharsets.UTF_8);
    ObjectInfo object = null;
    boolean isDirectory = false;
    String token = null;
    do {
      ListObjectsV2Request request =
          ListObjectsV2Request.builder()
              .bucket(bucket)
              .prefix(key)
              .delimiter("/")
              .maxKeys(1000)
              .continuationToken(token)
              .build();
      ListObjectsV2Response page =
          call(
              RequestType.LIST_OBJECTS,
              "ListObjectsV2",
              key,
              () -> observed(s3.listObjectsV2(request)));
      boolean passed = false;
      for (S3Object found : page.contents()) {
        if (found.key().equals(key)) {
          long modified = found.lastModified() == null ? 0 : found.lastModified().toEpochMilli();
          object = new ObjectInfo(key, found.size(), found.eTag(), modified);
        }
        passed |= sortsAfter(found.key(), directoryBytes);
      }
      for (software.amazon.awssdk.services.s3.model.CommonPrefix found : page.commonPrefixes()) {
        isDirectory |= found.prefix().equals(directory);
        passed |= sortsAfter(found.prefix(), directoryBytes);
      }
      token = isDirectory || passed ? null : nextToken(page, key);
    } while (token != null);
    return new KeyProbe(object, isDirectory);
  }

  /** Whether a listed key comes after {@code bound} in S3's (UTF-8 byte) listing order. */
  private static boolean sortsAfter(String listed, byte[] bound) {
    return Arrays.compareUnsigned(listed.getBytes(StandardCharsets.UTF_8), bound) > 0;
  }

  @Override
  public List<ObjectInfo> listObjects(String prefix) throws StoreException {
    return listObjectsUpTo(prefix, Integer.MAX_VALUE).orElseThrow();
  }

  @Override
  public Optional<List<ObjectInfo>> listObjectsUpTo(String prefix, int maxKeys)
      throws StoreException {
    return listObjectsUpTo(prefix, maxKeys, null);
  }

  /**
   * The highest code point: every key under a prefix sorts before the prefix followed by it, and
   * every key after that directory sorts after it, in the UTF-8 byte order of S3 listings.
   */
  private static final String LAST_CHARACTER =
      new String(Character.toChars(Character.MAX_CODE_POINT));

  /**
   * Pages through the prefix and, at the first key under {@code skippedPrefix}, starts again after
   * the last key that directory can hold (StartAfter), so that a large directory inside the
   * listing, such as an output's {@code _temporary}, costs no pages. A store that ignores
   * StartAfter sends the listing from the start again: keys up to the last one kept are then left
   * out, as they were kept already. A null {@code skippedPrefix} skips nothing.
   */
  @Override
  public Optional<List<ObjectInfo>> listObjectsUpTo(
      String prefix, int maxKeys, String skippedPrefix) throws StoreException {
    List<ObjectInfo> found = new ArrayList<>();
    String token = null;
    String startAfter = null;
    byte[] lastKeptBeforeSkip = null;
    boolean more = true;
    while (more) {
      ListObjectsV2Request.Builder request =
          ListObjectsV2Request.builder().bucket(bucket).prefix(prefix).continuationToken(token);
      if (token == null && startAfter != null) {
        request.startAfter(startAfter);
      }
      ListObjectsV2Response page =
          call(
              RequestType.LIST_OBJECTS,
              "ListObjectsV2",
              prefix,
              () -> observed(s3.listObjectsV2(request.build())));
      boolean reachedSkipped = false;
      for (S3Object object : page.contents()) {
        if (skippedPrefix != null && object.key().startsWith(skippedPrefix)) {
          reachedSkipped = true;
          continue;
        }
        if (lastKeptBeforeSkip != null
            && Arrays.compareUnsigned(
                    object.key().getBytes(StandardCharsets.UTF_8), lastKeptBeforeSkip)
                <= 0) {
          continue;
        }
        long modified = object.lastModified() == null ? 0 : object.lastModified().toEpochMilli();
        noteStoreTime(modified);
        found.add(new ObjectInfo(object.key(), object.size(), object.eTag(), modified));
      }
      token = nextToken(page, prefix);
      if (found.size() > maxKeys || (token != null && found.size() >= maxKeys)) {
        return Optional.empty();
      }
      if (reachedSkipped && token != null && startAfter == null) {
        startAfter = skippedPrefix + LAST_CHARACTER;
        lastKeptBeforeSkip =
            found.isEmpty()
                ? new byte[0]
                : found.get(found.size() - 1).key().getBytes(StandardCharsets.UTF_8);
        token = null;
        more = true;
      } else {
        more = token != null;
      }
    }
    return Optional.of(found);
  }

  @Override
  public void deleteObjects(Collection<String> keys) throws StoreException {
    List<String> all = List.copyOf(keys);
    for (int start = 0; start < all.size(); start += DELETE_BATCH) {
      List<ObjectIdentifier> batch = new ArrayList<>();
      for (String key : all.subList(start, Math.min(all.size(), start + DELETE_BATCH))) {
        batch.add(ObjectIdentifier.builder().key(key).build());
      }
      DeleteObjectsRequest request = requests.bulkDelete(batch);
      String first = batch.get(0).key();
      DeleteObjectsResponse response =
          call(RequestType.DELETE_OBJECTS, "DeleteObjects", first, () -> s3.deleteObjects(request));
      List<String> refused = new ArrayList<>();
      for (S3Error error : response.errors()) {
        if (!"NoSuchKey".equals(error.code())) {
          refused.add(error.key() + " (" + error.code() + ")");
        }
      }
      if (!refused.isEmpty()) {
        throw new StoreException(
            ErrorKind.FATAL,
            200,
            "DeleteObjects in s3a://"
                + bucket
                + "/ refused "
                + refused.size()
                + " keys: "
                + refused,
            null);
      }
    }
  }

  @Override
  public boolean deleteObjectIfMatch(String key, String etag) throws StoreException {
    DeleteObjectRequest request =
        DeleteObjectRequest.builder()
            .bucket(bucket)
            .key(key)
            // As a header, so that SDK lines without the field send it too.
            .overrideConfiguration(c -> c.putHeader("If-Match", Etags.unquote(etag)))
            .build();
    try {
      call(
          RequestType.DELETE_OBJECTS,
          "DeleteObject",
          key,
          () -> observed(s3.deleteObject(request)));
      return true;
    } catch (StoreException e) {
      if (e.is(ErrorKind.PRECONDITION_FAILED) || e.is(ErrorKind.NOT_FOUND)) {
        return false;
      }
      throw e;
    }
  }

  @Override
  public long storeNowMillis() throws StoreException {
    if (storeClockOffset.get() == Long.MIN_VALUE) {
      HeadBucketRequest request = HeadBucketRequest.builder().bucket(bucket).build();
      call(RequestType.HEAD_OBJECT, "HeadBucket", "", () -> observed(s3.headBucket(request)));
    }
    long offset = storeClockOffset.get();
    // A store that sends no Date header leaves the local clock as the only one there is.
    return System.currentTimeMillis() + (offset == Long.MIN_VALUE ? 0 : offset);
  }

  /**
   * Notes a time the store stamped at or before an answer that arrives now. Each is a lower bound
   * of the store's clock, so the estimate never runs ahead of it: a lapse is seen late, never
   * early. The Date header has whole seconds; Last-Modified times sharpen it.
   */
  private void noteStoreTime(long storeMillis) {
    if (storeMillis > 0) {
      long candidate = storeMillis - System.currentTimeMillis();
      storeClockOffset.accumulateAndGet(candidate, Math::max);
    }
  }

  /**
   * Notes the store's clock from an answer's Date header, and its Server header for the store's
   * verdict.
   */
  private <R extends SdkResponse> R observed(R response) {
    response
        .sdkHttpResponse()
        .firstMatchingHeader("Server")
        .ifPresent(server -> StoreTrust.observedServer(endpoint, server));
    try {
      response
          .sdkHttpResponse()
          .firstMatchingHeader("Date")
          .ifPresent(
              date ->
                  noteStoreTime(
                      java.time.ZonedDateTime.parse(
                              date, java.time.format.DateTimeFormatter.RFC_1123_DATE_TIME)
                          .toInstant()
                          .toEpochMilli()));
    } catch (RuntimeException unparsable) {
      LOG.debug("The store's Date header could not be read: {}", unparsable.toString());
    }
    return response;
  }

  private <T> T call(RequestType type, String operation, String key, Supplier<T> request)
      throws StoreException {
    counters.increment(type);
    try {
      return request.get();
    } catch (SdkException e) {
      throw StoreErrors.translate(operation, uri(key), e);
    }
  }

  private String uri(String key) {
    return "s3a://" + bucket + "/" + key;
  }
}
