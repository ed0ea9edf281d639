package dev.writeonce.core.testing.s3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.S3StoreGateway;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.IntUnaryOperator;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.ResponseBytes;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.CopyObjectResponse;
import software.amazon.awssdk.services.s3.model.DeleteObjectsResponse;
import software.amazon.awssdk.services.s3.model.DeletedObject;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.ListMultipartUploadsResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.MultipartUpload;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.NoSuchUploadException;
import software.amazon.awssdk.services.s3.model.ObjectIdentifier;
import software.amazon.awssdk.services.s3.model.PutObjectResponse;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;

/** S3's semantics as the SDK interface shows them, on {@link MemoryS3Client}. */
class MemoryS3ClientTest {

  private static final String BUCKET = "bucket";
  private static final int MIB = 1024 * 1024;

  private final MemoryS3 store = new MemoryS3();
  private final List<StoreRequest> seen = new ArrayList<>();
  private Function<StoreRequest, Handling> outcomes = request -> Handling.PROCEED;
  private IntUnaryOperator pageSizes = requested -> requested;

  private final RequestHook hook =
      new RequestHook() {
        @Override
        public Handling before(StoreRequest request) {
          seen.add(request);
          return outcomes.apply(request);
        }

        @Override
        public int pageSize(StoreRequest request, int requested) {
          return pageSizes.applyAsInt(requested);
        }
      };

  private final S3Client s3 = new MemoryS3Client(store, hook);

  @Test
  void conditionalPutsAnswer412WhenTheConditionFails() {
    String etag = put("k", "one").eTag();

    assertStatus(
        () -> s3.putObject(b -> b.bucket(BUCKET).key("k").ifNoneMatch("*"), body("two")),
        412,
        "PreconditionFailed");
    assertStatus(
        () -> s3.putObject(b -> b.bucket(BUCKET).key("k").ifMatch("\"0123\""), body("two")),
        412,
        "PreconditionFailed");
    assertStatus(
        () -> s3.putObject(b -> b.bucket(BUCKET).key("absent").ifMatch(etag), body("two")),
        412,
        "PreconditionFailed");
    // As S3A sends it: a header of the request's override configuration.
    assertStatus(
        () ->
            s3.putObject(
                b ->
                    b.bucket(BUCKET)
                        .key("k")
                        .overrideConfiguration(c -> c.putHeader("If-None-Match", "*")),
                body("two")),
        412,
        "PreconditionFailed");
    assertThat(store.getObject(BUCKET, "k")).contains(bytes("one"));

    // The ETag matches with or without its quotes.
    s3.putObject(b -> b.bucket(BUCKET).key("k").ifMatch(MemoryS3.unquote(etag)), body("two"));
    s3.putObject(b -> b.bucket(BUCKET).key("new").ifNoneMatch("*"), body("three"));
    assertThat(store.getObject(BUCKET, "k")).contains(bytes("two"));
    assertThat(store.getObject(BUCKET, "new")).contains(bytes("three"));
    assertThat(etag).isEqualTo("\"" + md5Hex(bytes("one")) + "\"");
  }

  @Test
  void aCompletedUploadHasTheMultipartEtagAndASecondCompletionAnswersNoSuchUpload()
      throws Exception {
    byte[] first = filled(5 * MIB, (byte) 1);
    byte[] second = filled(1000, (byte) 2);
    String uploadId = s3.createMultipartUpload(b -> b.bucket(BUCKET).key("big")).uploadId();
    String etag1 = uploadPart("big", uploadId, 1, first);
    String etag2 = uploadPart("big", uploadId, 2, second);
    assertThat(store.getObject(BUCKET, "big")).isEmpty();
    assertThat(store.openUploads(BUCKET))
        .containsExactly(new MemoryS3.OpenUpload("big", uploadId, MemoryS3.START_MILLIS));

    String etag = complete("big", uploadId, part(1, etag1), part(2, etag2));

    MessageDigest digests = MessageDigest.getInstance("MD5");
    digests.update(MessageDigest.getInstance("MD5").digest(first));
    digests.update(MessageDigest.getInstance("MD5").digest(second));
    assertThat(etag).isEqualTo("\"" + HexFormat.of().formatHex(digests.digest()) + "-2\"");
    assertThat(etag1).isEqualTo("\"" + md5Hex(first) + "\"");
    assertThat(store.object(BUCKET, "big").orElseThrow().size()).isEqualTo(5 * MIB + 1000);
    assertThat(store.openUploads(BUCKET)).isEmpty();
    assertThatThrownBy(() -> complete("big", uploadId, part(1, etag1), part(2, etag2)))
        .isInstanceOfSatisfying(
            NoSuchUploadException.class,
            e -> {
              assertThat(e.statusCode()).isEqualTo(404);
              assertThat(e.awsErrorDetails().errorCode()).isEqualTo("NoSuchUpload");
            });
    assertStatus(
        () -> s3.abortMultipartUpload(b -> b.bucket(BUCKET).key("big").uploadId(uploadId)),
        404,
        "NoSuchUpload");
    assertStatus(() -> uploadPart("big", uploadId, 3, second), 404, "NoSuchUpload");
  }

  @Test
  void aCompletionIsCheckedBeforeItChangesAnything() {
    String uploadId = s3.createMultipartUpload(b -> b.bucket(BUCKET).key("k")).uploadId();
    String small1 = uploadPart("k", uploadId, 1, bytes("small"));
    String small2 = uploadPart("k", uploadId, 2, bytes("parts"));

    assertStatus(
        () -> complete("k", uploadId, part(2, small2), part(1, small1)), 400, "InvalidPartOrder");
    assertStatus(() -> complete("k", uploadId, part(1, small2)), 400, "InvalidPart");
    assertStatus(() -> complete("k", uploadId, part(3, small2)), 400, "InvalidPart");
    assertStatus(
        () -> complete("k", uploadId, part(1, small1), part(2, small2)), 400, "EntityTooSmall");
    assertStatus(() -> complete("other", uploadId, part(1, small1)), 404, "NoSuchUpload");
    put("k", "already there");
    assertStatus(
        () ->
            s3.completeMultipartUpload(
                b ->
                    b.bucket(BUCKET)
                        .key("k")
                        .uploadId(uploadId)
                        .ifNoneMatch("*")
                        .multipartUpload(m -> m.parts(part(1, small1)))),
        412,
        "PreconditionFailed");
    assertThat(store.openUploads(BUCKET)).hasSize(1);

    store.setMinimumPartSize(0);
    complete("k", uploadId, part(1, small1), part(2, small2));
    assertThat(store.getObject(BUCKET, "k")).contains(bytes("smallparts"));
  }

  @Test
  void listingWithADelimiterPagesThroughKeysAndCommonPrefixesInUtf8Order() {
    // U+FFFD sorts before U+1F600 in UTF-8, after its surrogates in Java's String order.
    for (String key :
        List.of("d/a", "d/b/1", "d/b/2", "d/c", "d/e/1", "d/\uFFFD", "d/\uD83D\uDE00", "e")) {
      put(key, key);
    }

    List<String> entries = new ArrayList<>();
    List<Integer> keyCounts = new ArrayList<>();
    String token = null;
    do {
      String continuation = token;
      ListObjectsV2Response page =
          s3.listObjectsV2(
              b ->
                  b.bucket(BUCKET)
                      .prefix("d/")
                      .delimiter("/")
                      .maxKeys(2)
                      .continuationToken(continuation));
      page.contents().forEach(o -> entries.add(o.key()));
      page.commonPrefixes().forEach(p -> entries.add(p.prefix()));
      keyCounts.add(page.keyCount());
      token = page.isTruncated() ? page.nextContinuationToken() : null;
    } while (token != null);

    assertThat(entries).containsExactly("d/a", "d/b/", "d/c", "d/e/", "d/\uFFFD", "d/\uD83D\uDE00");
    assertThat(keyCounts).containsExactly(2, 2, 2);

    ListObjectsV2Response all = s3.listObjectsV2(b -> b.bucket(BUCKET));
    assertThat(all.contents()).extracting(S3Object::key).hasSize(8).endsWith("e");
    assertThat(all.isTruncated()).isFalse();
    assertThat(all.contents().get(0).size()).isEqualTo(3);
    assertThat(all.contents().get(0).eTag()).isEqualTo("\"" + md5Hex(bytes("d/a")) + "\"");
    assertThat(all.contents().get(0).lastModified())
        .isEqualTo(Instant.ofEpochMilli(MemoryS3.START_MILLIS));
  }

  @Test
  void startAfterSkipsKeysAndAContinuationTokenTakesPrecedence() {
    for (String key : List.of("a", "b", "c", "d")) {
      put(key, key);
    }

    ListObjectsV2Response first =
        s3.listObjectsV2(b -> b.bucket(BUCKET).startAfter("a").maxKeys(1));
    assertThat(first.contents()).extracting(S3Object::key).containsExactly("b");
    assertThat(first.isTruncated()).isTrue();

    ListObjectsV2Response second =
        s3.listObjectsV2(
            b -> b.bucket(BUCKET).startAfter("c").continuationToken(first.nextContinuationToken()));
    assertThat(second.contents()).extracting(S3Object::key).containsExactly("c", "d");
    assertThat(second.isTruncated()).isFalse();
    assertThat(second.nextContinuationToken()).isNull();
    assertThat(second.continuationToken()).isEqualTo(first.nextContinuationToken());

    assertStatus(
        () -> s3.listObjectsV2(b -> b.bucket(BUCKET).continuationToken("not a token")),
        400,
        "InvalidArgument");
  }

  @Test
  void shortTruncatedPagesFromTheHookAreFollowedByPagingClients() throws Exception {
    for (int i = 0; i < 7; i++) {
      put("p/" + i, "x");
    }
    put("p/sub/deep", "x");
    // The first page is empty, the others hold one entry each: legal for S3, hard on clients.
    AtomicInteger pages = new AtomicInteger();
    pageSizes = requested -> pages.getAndIncrement() == 0 ? 0 : 1;

    ListObjectsV2Response empty = s3.listObjectsV2(b -> b.bucket(BUCKET).prefix("p/"));
    assertThat(empty.contents()).isEmpty();
    assertThat(empty.keyCount()).isZero();
    assertThat(empty.isTruncated()).isTrue();

    pages.set(0);
    List<String> paged = new ArrayList<>();
    s3.listObjectsV2Paginator(ListObjectsV2Request.builder().bucket(BUCKET).prefix("p/").build())
        .contents()
        .forEach(o -> paged.add(o.key()));
    assertThat(paged)
        .containsExactly("p/0", "p/1", "p/2", "p/3", "p/4", "p/5", "p/6", "p/sub/deep");
    assertThat(pages.get()).isEqualTo(9);

    pages.set(0);
    S3StoreGateway gateway = S3StoreGateway.forClient(s3, BUCKET);
    assertThat(gateway.listObjects("p/")).extracting(ObjectInfo::key).hasSize(8);
    pages.set(0);
    assertThat(gateway.listChildren("p/", 100)).hasSize(8).contains("p/sub/");
  }

  @Test
  void uploadsArePagedByKeyMarkerAndUploadIdMarker() {
    String a1 = s3.createMultipartUpload(b -> b.bucket(BUCKET).key("u/a")).uploadId();
    String b1 = s3.createMultipartUpload(b -> b.bucket(BUCKET).key("u/b")).uploadId();
    String a2 = s3.createMultipartUpload(b -> b.bucket(BUCKET).key("u/a")).uploadId();
    s3.createMultipartUpload(b -> b.bucket(BUCKET).key("v/c"));

    List<String> ids = new ArrayList<>();
    String keyMarker = null;
    String uploadIdMarker = null;
    do {
      String key = keyMarker;
      String id = uploadIdMarker;
      ListMultipartUploadsResponse page =
          s3.listMultipartUploads(
              b -> b.bucket(BUCKET).prefix("u/").maxUploads(1).keyMarker(key).uploadIdMarker(id));
      page.uploads().stream().map(MultipartUpload::uploadId).forEach(ids::add);
      keyMarker = page.isTruncated() ? page.nextKeyMarker() : null;
      uploadIdMarker = page.isTruncated() ? page.nextUploadIdMarker() : null;
    } while (keyMarker != null);

    assertThat(ids).containsExactly(a1, a2, b1);
    assertThat(
            s3.listMultipartUploads(b -> b.bucket(BUCKET).prefix("u/").keyMarker("u/a")).uploads())
        .extracting(MultipartUpload::uploadId)
        .containsExactly(b1);
  }

  @Test
  void deleteObjectsAnswersForEachKeyAndCountsAMissingKeyAsDeleted() {
    put("x", "1");
    String etag = put("y", "2").eTag();
    put("z", "3");

    DeleteObjectsResponse loud =
        s3.deleteObjects(
            b ->
                b.bucket(BUCKET)
                    .delete(
                        d ->
                            d.objects(
                                ObjectIdentifier.builder().key("x").build(),
                                ObjectIdentifier.builder().key("missing").build(),
                                ObjectIdentifier.builder().key("y").eTag("\"other\"").build())));
    assertThat(loud.deleted()).extracting(DeletedObject::key).containsExactly("x", "missing");
    assertThat(loud.errors()).hasSize(1);
    assertThat(loud.errors().get(0).key()).isEqualTo("y");
    assertThat(loud.errors().get(0).code()).isEqualTo("PreconditionFailed");

    DeleteObjectsResponse quiet =
        s3.deleteObjects(
            b ->
                b.bucket(BUCKET)
                    .delete(
                        d ->
                            d.quiet(true)
                                .objects(
                                    ObjectIdentifier.builder().key("y").eTag(etag).build(),
                                    ObjectIdentifier.builder().key("z").build())));
    assertThat(quiet.deleted()).isEmpty();
    assertThat(quiet.errors()).isEmpty();
    assertThat(store.objects(BUCKET, "")).isEmpty();
    assertThat(seen.get(seen.size() - 1).keys()).containsExactly("y", "z");
  }

  @Test
  void deleteObjectAnswers204AndHonoursIfMatchSentAsAHeader() {
    String etag = put("k", "v").eTag();

    assertThat(s3.deleteObject(b -> b.bucket(BUCKET).key("never")).sdkHttpResponse().statusCode())
        .isEqualTo(204);
    assertStatus(
        () ->
            s3.deleteObject(
                b ->
                    b.bucket(BUCKET)
                        .key("k")
                        .overrideConfiguration(c -> c.putHeader("If-Match", "0000"))),
        412,
        "PreconditionFailed");
    assertThat(store.getObject(BUCKET, "k")).isPresent();

    s3.deleteObject(
        b ->
            b.bucket(BUCKET)
                .key("k")
                .overrideConfiguration(c -> c.putHeader("If-Match", MemoryS3.unquote(etag))));
    assertThat(store.getObject(BUCKET, "k")).isEmpty();
    assertStatus(
        () -> s3.deleteObject(b -> b.bucket(BUCKET).key("k").ifMatch(etag)),
        412,
        "PreconditionFailed");
  }

  @Test
  void copyObjectCopiesBytesAndMetadataAndIsCounted() {
    s3.putObject(b -> b.bucket(BUCKET).key("src").metadata(Map.of("m", "1")), body("content"));
    String sourceEtag = store.object(BUCKET, "src").orElseThrow().etag();

    CopyObjectResponse copy =
        s3.copyObject(
            b ->
                b.sourceBucket(BUCKET)
                    .sourceKey("src")
                    .destinationBucket(BUCKET)
                    .destinationKey("dst")
                    .copySourceIfMatch(sourceEtag));

    assertThat(copy.copyObjectResult().eTag()).isEqualTo(sourceEtag);
    assertThat(store.object(BUCKET, "dst").orElseThrow().metadata()).containsEntry("m", "1");
    assertThat(store.getObject(BUCKET, "dst")).contains(bytes("content"));
    assertStatus(
        () ->
            s3.copyObject(
                b ->
                    b.sourceBucket(BUCKET)
                        .sourceKey("src")
                        .destinationBucket(BUCKET)
                        .destinationKey("dst2")
                        .copySourceIfMatch("\"other\"")),
        412,
        "PreconditionFailed");
    assertThatThrownBy(
            () ->
                s3.copyObject(
                    b ->
                        b.sourceBucket(BUCKET)
                            .sourceKey("missing")
                            .destinationBucket(BUCKET)
                            .destinationKey("dst3")))
        .isInstanceOfSatisfying(
            NoSuchKeyException.class, e -> assertThat(e.statusCode()).isEqualTo(404));
    assertThat(store.requestCount("CopyObject")).isEqualTo(3);
    assertThat(seen.get(seen.size() - 1))
        .satisfies(
            request -> {
              assertThat(request.key()).isEqualTo("dst3");
              assertThat(request.keys()).containsExactly("missing");
            });
  }

  @Test
  void getObjectServesByteRangesAndMissingKeysAre404() {
    put("k", "0123456789");

    assertThat(range("bytes=2-4")).isEqualTo("234");
    assertThat(range("bytes=7-")).isEqualTo("789");
    assertThat(range("bytes=-3")).isEqualTo("789");
    assertThat(range("bytes=8-100")).isEqualTo("89");
    assertThat(range("bytes=5-2")).isEqualTo("0123456789");
    ResponseBytes<GetObjectResponse> ranged =
        s3.getObjectAsBytes(b -> b.bucket(BUCKET).key("k").range("bytes=2-4"));
    assertThat(ranged.response().contentRange()).isEqualTo("bytes 2-4/10");
    assertThat(ranged.response().contentLength()).isEqualTo(3);
    assertThat(ranged.response().sdkHttpResponse().statusCode()).isEqualTo(206);
    assertStatus(() -> range("bytes=10-"), 416, "InvalidRange");

    assertThatThrownBy(() -> s3.getObjectAsBytes(b -> b.bucket(BUCKET).key("missing")))
        .isInstanceOfSatisfying(
            NoSuchKeyException.class,
            e -> assertThat(e.awsErrorDetails().errorCode()).isEqualTo("NoSuchKey"));
    assertThatThrownBy(() -> s3.headObject(b -> b.bucket(BUCKET).key("missing")))
        .isInstanceOfSatisfying(
            NoSuchKeyException.class, e -> assertThat(e.statusCode()).isEqualTo(404));
    assertThat(s3.headObject(b -> b.bucket(BUCKET).key("k")).contentLength()).isEqualTo(10);
  }

  @Test
  void everyAnswerCarriesTheStoreClockInItsDateHeader() {
    store.advanceMillis(90_500);
    long expected = MemoryS3.START_MILLIS + 90_000;

    PutObjectResponse put = put("k", "v");
    ListObjectsV2Response list = s3.listObjectsV2(b -> b.bucket(BUCKET));
    S3Exception missing =
        (S3Exception) catchThrowable(() -> s3.headObject(b -> b.bucket(BUCKET).key("missing")));

    assertThat(dateHeader(put.sdkHttpResponse().firstMatchingHeader("Date").orElseThrow()))
        .isEqualTo(expected);
    assertThat(dateHeader(list.sdkHttpResponse().firstMatchingHeader("Date").orElseThrow()))
        .isEqualTo(expected);
    assertThat(
            dateHeader(
                missing
                    .awsErrorDetails()
                    .sdkHttpResponse()
                    .firstMatchingHeader("Date")
                    .orElseThrow()))
        .isEqualTo(expected);
    assertThat(list.contents().get(0).lastModified().toEpochMilli()).isEqualTo(expected + 500);
    assertThat(put.sdkHttpResponse().firstMatchingHeader("Date").orElseThrow())
        .isEqualTo("Thu, 01 Jan 2026 00:01:30 GMT");
  }

  @Test
  void aLostAnswerLeavesTheRequestApplied() {
    outcomes = request -> Handling.LOSE_ANSWER;
    assertThatThrownBy(() -> put("k", "v"))
        .isInstanceOf(SdkClientException.class)
        .hasMessageContaining("Connection reset");
    assertThat(store.getObject(BUCKET, "k")).contains(bytes("v"));

    outcomes = request -> Handling.PROCEED;
    String uploadId = s3.createMultipartUpload(b -> b.bucket(BUCKET).key("m")).uploadId();
    String etag = uploadPart("m", uploadId, 1, bytes("part"));
    outcomes =
        request ->
            request.operation().equals("CompleteMultipartUpload")
                ? Handling.LOSE_ANSWER
                : Handling.PROCEED;
    assertThatThrownBy(() -> complete("m", uploadId, part(1, etag)))
        .isInstanceOf(SdkClientException.class);
    assertThat(store.getObject(BUCKET, "m")).contains(bytes("part"));
    outcomes = request -> Handling.PROCEED;
    assertStatus(() -> complete("m", uploadId, part(1, etag)), 404, "NoSuchUpload");
  }

  @Test
  void aRequestFailedUnsentAppliesNothing() {
    outcomes = request -> Handling.FAIL_UNSENT;

    assertStatus(() -> put("k", "v"), 503, "SlowDown");
    assertStatus(() -> s3.createMultipartUpload(b -> b.bucket(BUCKET).key("k")), 503, "SlowDown");

    assertThat(store.objects(BUCKET, "")).isEmpty();
    assertThat(store.openUploads(BUCKET)).isEmpty();
    assertThat(store.requestCount("PutObject")).isEqualTo(1);
  }

  @Test
  void theHookSeesEachRequestOnTheCallingThreadAndMayCrashIt() {
    put("k", "v");
    assertThat(seen)
        .singleElement()
        .satisfies(
            request -> {
              assertThat(request.operation()).isEqualTo("PutObject");
              assertThat(request.bucket()).isEqualTo(BUCKET);
              assertThat(request.key()).isEqualTo("k");
              assertThat(request.thread()).isSameAs(Thread.currentThread());
            });

    outcomes =
        request -> {
          throw new IllegalStateException("process crashed");
        };
    assertThatThrownBy(() -> put("k", "w")).hasMessage("process crashed");
    assertThat(store.getObject(BUCKET, "k")).contains(bytes("v"));
    assertThat(store.requestCount("PutObject")).isEqualTo(1);
  }

  // ---- helpers

  private PutObjectResponse put(String key, String content) {
    return s3.putObject(b -> b.bucket(BUCKET).key(key), body(content));
  }

  private String uploadPart(String key, String uploadId, int number, byte[] data) {
    return s3.uploadPart(
            b -> b.bucket(BUCKET).key(key).uploadId(uploadId).partNumber(number),
            RequestBody.fromBytes(data))
        .eTag();
  }

  private String complete(String key, String uploadId, CompletedPart... parts) {
    return s3.completeMultipartUpload(
            b -> b.bucket(BUCKET).key(key).uploadId(uploadId).multipartUpload(m -> m.parts(parts)))
        .eTag();
  }

  private String range(String range) {
    return s3.getObjectAsBytes(b -> b.bucket(BUCKET).key("k").range(range)).asUtf8String();
  }

  private static CompletedPart part(int number, String etag) {
    return CompletedPart.builder().partNumber(number).eTag(etag).build();
  }

  private static void assertStatus(Runnable call, int status, String code) {
    assertThatThrownBy(call::run)
        .isInstanceOfSatisfying(
            S3Exception.class,
            e -> {
              assertThat(e.statusCode()).isEqualTo(status);
              assertThat(e.awsErrorDetails().errorCode()).isEqualTo(code);
              assertThat(e.awsErrorDetails().serviceName()).isEqualTo("S3");
              assertThat(e.requestId()).isNotEmpty();
            });
  }

  private static long dateHeader(String value) {
    return ZonedDateTime.parse(value, DateTimeFormatter.RFC_1123_DATE_TIME)
        .toInstant()
        .toEpochMilli();
  }

  private static RequestBody body(String content) {
    return RequestBody.fromString(content);
  }

  private static byte[] bytes(String content) {
    return content.getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] filled(int size, byte value) {
    byte[] data = new byte[size];
    Arrays.fill(data, value);
    return data;
  }

  private static String md5Hex(byte[] data) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("MD5").digest(data));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
