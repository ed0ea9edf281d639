package dev.writeonce.core.store.check;

import dev.writeonce.core.model.Etags;
import dev.writeonce.core.store.check.StoreReport.Finding;
import java.nio.charset.StandardCharsets;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.s3a.S3AFileSystem;
import software.amazon.awssdk.core.SdkResponse;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.ChecksumAlgorithm;
import software.amazon.awssdk.services.s3.model.CompleteMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.CompleteMultipartUploadResponse;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.DeleteObjectsResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.ListMultipartUploadsResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.MultipartUpload;
import software.amazon.awssdk.services.s3.model.ObjectIdentifier;
import software.amazon.awssdk.services.s3.model.PutObjectResponse;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * Probes what a store does with the requests this library's guarantees rest on. Each probe sends a
 * small request under a scratch prefix and judges the store by reading back what the request did,
 * never by its status code alone: a store that ignores a condition answers 200 and acts
 * unconditionally. The scratch prefix is removed at the end, uploads included.
 *
 * <p>Cost: about 60 small requests and a few kilobytes, once per store per process ({@link
 * StoreTrust}); {@link StoreReport#requests()} gives the exact figure of a run.
 */
public final class StoreCheck {

  /** Where the probes go under the prefix they are given. */
  public static final String SCRATCH_DIR = "_writeonce/check-";

  /**
   * An ETag no probe object has, unquoted as the library sends ETags in conditions (the one form
   * every store tried matches; Ceph RGW 16 never matches a quoted one).
   */
  private static final String WRONG_ETAG = "00000000000000000000000000000000";

  private final S3Client s3;
  private final String bucket;
  private final String endpoint;
  private final String scratch;
  private int requests;

  /** The Server headers the store answered with, in the order first seen. */
  private final java.util.Set<String> servers = new java.util.LinkedHashSet<>();

  private Long skewMillis;
  private final List<String> dates = new ArrayList<>();
  private final List<String> openUploads = new ArrayList<>();

  /**
   * @param under the prefix the probes go under ("" for the bucket's root, else ending in "/"): one
   *     the caller may write, such as a job's destination
   */
  public StoreCheck(S3Client s3, String bucket, String endpoint, String under) {
    this.s3 = s3;
    this.bucket = bucket;
    this.endpoint = normalized(endpoint);
    String base = under.isEmpty() || under.endsWith("/") ? under : under + "/";
    this.scratch = base + SCRATCH_DIR + UUID.randomUUID() + "/";
  }

  /** A check through the client of an S3A filesystem: its endpoint, credentials and settings. */
  public static StoreCheck forFileSystem(FileSystem fs, String under) {
    if (!(fs instanceof S3AFileSystem s3a)) {
      throw new IllegalArgumentException(
          fs.getUri() + " is not served by S3AFileSystem: only an S3 store can be checked");
    }
    S3Client client = s3a.getS3AInternals().getAmazonS3Client("writeonce store check");
    return new StoreCheck(client, s3a.getBucket(), endpointOf(client, fs), under);
  }

  /**
   * The endpoint a client reaches, as reports and the verdicts name it.
   *
   * @param fs the filesystem the client serves, whose settings name the endpoint where the client
   *     cannot; null for none
   */
  public static String endpointOf(S3Client client, FileSystem fs) {
    try {
      return normalized(
          client
              .serviceClientConfiguration()
              .endpointOverride()
              .map(Object::toString)
              .orElse("aws:" + client.serviceClientConfiguration().region()));
    } catch (RuntimeException | LinkageError e) {
      return fs == null ? "aws" : normalized(fs.getConf().getTrimmed("fs.s3a.endpoint", "aws"));
    }
  }

  /**
   * An endpoint as the verdicts key it: one spelling per endpoint (scheme and host in lower case,
   * no default port, no trailing slash).
   */
  public static String normalized(String endpoint) {
    String trimmed = endpoint.trim();
    while (trimmed.endsWith("/")) {
      trimmed = trimmed.substring(0, trimmed.length() - 1);
    }
    try {
      java.net.URI uri = new java.net.URI(trimmed);
      if (uri.getScheme() == null || uri.getHost() == null) {
        return trimmed;
      }
      String scheme = uri.getScheme().toLowerCase(java.util.Locale.ROOT);
      int port = uri.getPort();
      boolean defaultPort =
          (scheme.equals("http") && port == 80) || (scheme.equals("https") && port == 443);
      return scheme
          + "://"
          + uri.getHost().toLowerCase(java.util.Locale.ROOT)
          + (port < 0 || defaultPort ? "" : ":" + port)
          + (uri.getRawPath() == null ? "" : uri.getRawPath());
    } catch (java.net.URISyntaxException e) {
      return trimmed;
    }
  }

  /**
   * Runs every probe, reporting each as it goes, and removes what they wrote.
   *
   * @throws java.io.UncheckedIOException when a request got no answer from the store at all
   */
  public StoreReport run(Consumer<String> progress) {
    Map<Capability, Finding> found = new LinkedHashMap<>();
    Consumer<Finding> note =
        finding -> {
          found.put(finding.capability(), finding);
          progress.accept(
              String.format(
                  "%-24s %-14s %s",
                  finding.capability().id(), finding.verdict().id(), finding.answer()));
        };
    long started = System.currentTimeMillis();
    progress.accept("checking s3a://" + bucket + "/" + scratch + " on " + endpoint);
    try {
      probeConditionalPuts(note);
      probeConditionalDeletes(note);
      probeCompletions(note);
      probeUploadListings(note);
      probeListings(note);
      probeClock(note);
      probeMinimumPartSize(note);
      probeChecksumTrailer(note);
      probeUnsignedPayload(note);
      probeRename(note);
    } finally {
      try {
        cleanUp(progress);
      } catch (java.io.UncheckedIOException e) {
        progress.accept(
            "could not remove the probes under s3a://" + bucket + "/" + scratch + ": " + e);
      }
    }
    long now = skewMillis == null ? started : started + skewMillis;
    List<Finding> ordered = new ArrayList<>();
    for (Capability capability : Capability.values()) {
      ordered.add(
          found.getOrDefault(
              capability, new Finding(capability, Verdict.NOT_APPLICABLE, "not probed")));
    }
    return new StoreReport(
        endpoint,
        bucket,
        String.join(StoreReport.SERVERS_SEPARATOR, servers),
        now,
        requests,
        ordered);
  }

  // ---- conditional writes ----

  private void probeConditionalPuts(Consumer<Finding> note) {
    String key = scratch + "conditional";
    Answer<PutObjectResponse> first = put(key, "first", h -> {});
    String etag = written(key, first);

    Answer<PutObjectResponse> create = put(scratch + "created", "created", h -> h.ifNoneMatch("*"));
    Answer<PutObjectResponse> overwrite = put(key, "second", h -> h.ifNoneMatch("*"));
    String now = read(key);
    if (!create.ok()) {
      note.accept(
          new Finding(
              Capability.PUT_IF_NONE_MATCH,
              Verdict.REFUSED,
              "a create where no object is answered " + create.describe()));
    } else {
      note.accept(conditionFinding(Capability.PUT_IF_NONE_MATCH, overwrite, "first", now));
    }

    // The object still holds "first" where the condition held; else rewrite it for the next probe.
    if (!"first".equals(now)) {
      etag = written(key, put(key, "first", h -> {}));
    }
    Answer<PutObjectResponse> wrong = put(key, "third", h -> h.ifMatch(WRONG_ETAG));
    now = read(key);
    Finding ifMatch = conditionFinding(Capability.PUT_IF_MATCH, wrong, "first", now);
    if (ifMatch.verdict() == Verdict.HONOURED) {
      String current = etag;
      Answer<PutObjectResponse> right = put(key, "fourth", h -> h.ifMatch(Etags.unquote(current)));
      if (!right.ok() || !"fourth".equals(read(key))) {
        ifMatch =
            new Finding(
                Capability.PUT_IF_MATCH,
                Verdict.REFUSED,
                "a write with the object's own ETag answered " + right.describe());
      }
    }
    note.accept(ifMatch);
  }

  /**
   * Judges a write that the condition should have stopped, by what the object holds now.
   *
   * @param before what the object held before the conditional write
   */
  private static Finding conditionFinding(
      Capability capability, Answer<?> answer, String before, String now) {
    boolean kept = before.equals(now);
    if (answer.ok()) {
      return kept
          ? new Finding(capability, Verdict.HONOURED, "answered 200 and left the object as it was")
          : new Finding(
              capability,
              Verdict.IGNORED,
              "answered " + answer.status() + " and overwrote the object despite the condition");
    }
    if (answer.status() == 412 || answer.status() == 409) {
      return new Finding(
          capability,
          kept ? Verdict.HONOURED : Verdict.IGNORED,
          "answered " + answer.describe() + (kept ? "" : ", yet the object changed"));
    }
    return new Finding(
        capability,
        kept ? Verdict.REFUSED : Verdict.IGNORED,
        "answered " + answer.describe() + (kept ? "" : ", yet the object changed"));
  }

  private void probeConditionalDeletes(Consumer<Finding> note) {
    String key = scratch + "owned";
    put(key, "owned", h -> {});
    Answer<SdkResponse> delete =
        send(
            () ->
                s3.deleteObject(
                    r ->
                        r.bucket(bucket)
                            .key(key)
                            .overrideConfiguration(c -> c.putHeader("If-Match", WRONG_ETAG))));
    boolean stands = head(key).isPresent();
    note.accept(deleteFinding(Capability.DELETE_IF_MATCH, delete, stands));

    if (!stands) {
      put(key, "owned", h -> {});
    }
    ObjectIdentifier entry;
    try {
      entry = ObjectIdentifier.builder().key(key).eTag(WRONG_ETAG).build();
    } catch (LinkageError e) {
      note.accept(
          new Finding(
              Capability.DELETE_OBJECTS_ETAG,
              Verdict.NOT_APPLICABLE,
              "this SDK cannot send an ETag in a DeleteObjects entry"));
      return;
    }
    Answer<DeleteObjectsResponse> bulk =
        send(() -> s3.deleteObjects(r -> r.bucket(bucket).delete(d -> d.objects(entry))));
    boolean stillStands = head(key).isPresent();
    if (bulk.ok() && !bulk.value().errors().isEmpty()) {
      String code = bulk.value().errors().get(0).code();
      note.accept(
          new Finding(
              Capability.DELETE_OBJECTS_ETAG,
              stillStands ? Verdict.HONOURED : Verdict.IGNORED,
              "the entry was refused (" + code + ")" + (stillStands ? "" : ", yet it is gone")));
    } else {
      note.accept(deleteFinding(Capability.DELETE_OBJECTS_ETAG, bulk, stillStands));
    }
  }

  private static Finding deleteFinding(Capability capability, Answer<?> answer, boolean stands) {
    if (!stands) {
      return new Finding(
          capability,
          Verdict.IGNORED,
          "answered " + answer.describe() + " and deleted the object despite a wrong ETag");
    }
    if (answer.ok() || answer.status() == 412) {
      return new Finding(
          capability,
          Verdict.HONOURED,
          "answered " + answer.describe() + " and kept the object (wrong ETag)");
    }
    return new Finding(capability, Verdict.REFUSED, "answered " + answer.describe());
  }

  // ---- multipart uploads ----

  private void probeCompletions(Consumer<Finding> note) {
    // If-None-Match on a completion over an existing object.
    String existing = scratch + "complete-over";
    put(existing, "existing", h -> {});
    Upload over = upload(existing, "completed");
    Answer<CompleteMultipartUploadResponse> guarded =
        send(
            () ->
                s3.completeMultipartUpload(
                    over.request(c -> c.putHeader("If-None-Match", "*")).build()));
    String now = read(existing);
    note.accept(conditionFinding(Capability.COMPLETE_IF_NONE_MATCH, guarded, "existing", now));
    if (guarded.ok()) {
      ended(over);
    } else {
      abort(over);
    }

    // The ETag a completion answers, and a completion sent again.
    String key = scratch + "completed";
    Upload upload = upload(key, "completed");
    Answer<CompleteMultipartUploadResponse> done =
        send(() -> s3.completeMultipartUpload(upload.request(c -> {}).build()));
    if (!done.ok()) {
      throw new IllegalStateException(
          "cannot complete an upload to s3a://" + bucket + "/" + key + ": " + done.describe());
    }
    ended(upload);
    String answered = Optional.ofNullable(done.value().eTag()).orElse("");
    String headed = head(key).map(HeadObjectResponse::eTag).orElse("");
    boolean sameEtag =
        !Etags.unquote(answered).isEmpty() && Etags.unquote(answered).equals(Etags.unquote(headed));
    note.accept(
        new Finding(
            Capability.COMPLETED_ETAG,
            sameEtag ? Verdict.HONOURED : Verdict.IGNORED,
            sameEtag
                ? "answered " + answered + ", as HEAD says"
                : "answered '" + answered + "' where HEAD says " + headed));
    Answer<CompleteMultipartUploadResponse> again =
        send(() -> s3.completeMultipartUpload(upload.request(c -> {}).build()));
    String afterAgain = read(key);
    if (again.ok()) {
      note.accept(
          new Finding(
              Capability.COMPLETE_REPEATED,
              "completed".equals(afterAgain) ? Verdict.HONOURED : Verdict.IGNORED,
              "answered 200 again, ETag " + again.value().eTag()));
    } else {
      note.accept(
          new Finding(
              Capability.COMPLETE_REPEATED,
              Verdict.REFUSED,
              "answered " + again.describe() + "; the object stands"));
    }

    // A completion after an abort must fail and leave no object.
    String aborted = scratch + "aborted";
    Upload doomed = upload(aborted, "aborted");
    abort(doomed);
    Answer<CompleteMultipartUploadResponse> late =
        send(() -> s3.completeMultipartUpload(doomed.request(c -> {}).build()));
    boolean appeared = head(aborted).isPresent();
    note.accept(
        new Finding(
            Capability.COMPLETE_AFTER_ABORT,
            late.ok() || appeared ? Verdict.IGNORED : Verdict.HONOURED,
            "answered "
                + late.describe()
                + (appeared ? " and the aborted upload's object appeared" : ", no object")));
  }

  private void probeUploadListings(Consumer<Finding> note) {
    Upload exact = create(scratch + "uploads/file");
    Upload longer = create(scratch + "uploads/file-longer");
    Upload nested = create(scratch + "uploads/dir/file");
    Answer<ListMultipartUploadsResponse> byKey = listUploads(exact.key());
    Answer<ListMultipartUploadsResponse> byPrefix = listUploads(scratch + "uploads/dir/");
    note.accept(uploadsFinding(Capability.LIST_UPLOADS_BY_KEY, byKey, exact, longer));
    note.accept(uploadsFinding(Capability.LIST_UPLOADS_BY_PREFIX, byPrefix, nested, null));
    abort(exact);
    abort(longer);
    abort(nested);
  }

  private static Finding uploadsFinding(
      Capability capability,
      Answer<ListMultipartUploadsResponse> answer,
      Upload wanted,
      Upload sibling) {
    if (!answer.ok()) {
      return new Finding(capability, Verdict.REFUSED, "answered " + answer.describe());
    }
    List<String> ids = answer.value().uploads().stream().map(MultipartUpload::uploadId).toList();
    if (!ids.contains(wanted.uploadId())) {
      return new Finding(
          capability,
          Verdict.IGNORED,
          "listed " + ids.size() + " uploads, not the one open at " + wanted.key());
    }
    String extra =
        sibling != null && ids.contains(sibling.uploadId())
            ? " and the upload of the longer key that shares its prefix (callers filter by key)"
            : "";
    return new Finding(capability, Verdict.HONOURED, "listed the open upload" + extra);
  }

  // ---- listings ----

  private void probeListings(Consumer<Finding> note) {
    String dir = scratch + "listed/";
    put(dir + "one", "1", h -> {});
    Answer<ListObjectsV2Response> afterWrite = list(dir, null, 1000, null);
    boolean seen =
        afterWrite.ok()
            && afterWrite.value().contents().stream().anyMatch(o -> o.key().equals(dir + "one"));
    note.accept(
        new Finding(
            Capability.LIST_AFTER_WRITE,
            seen ? Verdict.HONOURED : afterWrite.ok() ? Verdict.IGNORED : Verdict.REFUSED,
            seen
                ? "listed the object written just before"
                : "missed it: " + afterWrite.describe()));
    send(() -> s3.deleteObject(r -> r.bucket(bucket).key(dir + "one")));
    Answer<ListObjectsV2Response> afterDelete = list(dir, null, 1000, null);
    boolean gone =
        afterDelete.ok()
            && afterDelete.value().contents().stream().noneMatch(o -> o.key().equals(dir + "one"));
    note.accept(
        new Finding(
            Capability.LIST_AFTER_DELETE,
            gone ? Verdict.HONOURED : afterDelete.ok() ? Verdict.IGNORED : Verdict.REFUSED,
            gone ? "omitted the object deleted just before" : "still listed it"));

    // Three files and two directories, read in pages of at most two entries.
    String paged = scratch + "paged/";
    for (String name : List.of("a", "b", "c", "d/x", "e/x")) {
      put(paged + name, name, h -> {});
    }
    TreeSet<String> entries = new TreeSet<>();
    String token = null;
    int pages = 0;
    boolean oversized = false;
    Answer<ListObjectsV2Response> page;
    do {
      page = list(paged, "/", 2, token);
      if (!page.ok()) {
        note.accept(
            new Finding(
                Capability.DELIMITED_PAGES, Verdict.REFUSED, "answered " + page.describe()));
        return;
      }
      pages++;
      page.value().contents().forEach(o -> entries.add(o.key().substring(paged.length())));
      page.value().commonPrefixes().forEach(p -> entries.add(p.prefix().substring(paged.length())));
      oversized |= page.value().contents().size() + page.value().commonPrefixes().size() > 2;
      token = page.value().nextContinuationToken();
    } while (Boolean.TRUE.equals(page.value().isTruncated()) && token != null && pages < 10);
    TreeSet<String> expected = new TreeSet<>(List.of("a", "b", "c", "d/", "e/"));
    boolean whole = entries.equals(expected);
    note.accept(
        new Finding(
            Capability.DELIMITED_PAGES,
            whole ? Verdict.HONOURED : Verdict.IGNORED,
            (whole
                    ? "5 entries in " + pages + " pages of MaxKeys 2, the last not truncated"
                    : "the pages ended with " + entries + " of " + expected)
                + (oversized ? "; a page held more than MaxKeys" : "")));
  }

  // ---- the clock ----

  private void probeClock(Consumer<Finding> note) {
    String key = scratch + "clock";
    long before = System.currentTimeMillis();
    Answer<PutObjectResponse> written = put(key, "clock", h -> {});
    Optional<HeadObjectResponse> head = head(key);
    if (!written.ok() || head.isEmpty() || skewMillis == null) {
      note.accept(
          new Finding(
              Capability.CLOCK,
              Verdict.IGNORED,
              skewMillis == null ? "the store sends no Date header" : "cannot read the probe"));
      return;
    }
    long modified = head.get().lastModified().toEpochMilli();
    long storeBefore = before + skewMillis;
    // Date has whole seconds: Last-Modified must lie within a few seconds of the store's time.
    long apart = Math.abs(modified - storeBefore);
    boolean oneClock = apart <= 5_000;
    note.accept(
        new Finding(
            Capability.CLOCK,
            oneClock ? Verdict.HONOURED : Verdict.IGNORED,
            String.format(
                "store clock %+d ms from this host's (Date has whole seconds); Last-Modified %s"
                    + " the store's Date",
                skewMillis, oneClock ? "agrees with" : "is " + apart + " ms apart from")));
  }

  private void probeMinimumPartSize(Consumer<Finding> note) {
    String key = scratch + "small-parts";
    Answer<String> created = createUpload(key);
    if (!created.ok()) {
      note.accept(
          new Finding(Capability.MIN_PART_SIZE, Verdict.REFUSED, "create " + created.describe()));
      return;
    }
    String uploadId = created.value();
    List<CompletedPart> parts = new ArrayList<>();
    for (int number = 1; number <= 2; number++) {
      int n = number;
      Answer<String> part =
          send(
              () ->
                  s3.uploadPart(
                          r -> r.bucket(bucket).key(key).uploadId(uploadId).partNumber(n),
                          RequestBody.fromBytes(new byte[1024]))
                      .eTag());
      if (part.ok()) {
        parts.add(CompletedPart.builder().partNumber(n).eTag(part.value()).build());
      }
    }
    Answer<CompleteMultipartUploadResponse> done =
        send(
            () ->
                s3.completeMultipartUpload(
                    r ->
                        r.bucket(bucket)
                            .key(key)
                            .uploadId(uploadId)
                            .multipartUpload(m -> m.parts(parts))));
    if (!done.ok()) {
      send(() -> s3.abortMultipartUpload(r -> r.bucket(bucket).key(key).uploadId(uploadId)));
    }
    openUploads.remove(key + "\n" + uploadId);
    boolean enforced = !done.ok() && "EntityTooSmall".equals(done.code());
    note.accept(
        new Finding(
            Capability.MIN_PART_SIZE,
            enforced ? Verdict.HONOURED : done.ok() ? Verdict.IGNORED : Verdict.REFUSED,
            enforced
                ? "refused two parts of 1 KiB (EntityTooSmall)"
                : done.ok()
                    ? "completed two parts of 1 KiB: no minimum"
                    : "answered " + done.describe()));
  }

  private void probeChecksumTrailer(Consumer<Finding> note) {
    String key = scratch + "checksummed";
    String body = "checksummed body";
    Answer<PutObjectResponse> put;
    try {
      put =
          send(
              () ->
                  s3.putObject(
                      r -> r.bucket(bucket).key(key).checksumAlgorithm(ChecksumAlgorithm.CRC32),
                      RequestBody.fromString(body)));
    } catch (LinkageError e) {
      note.accept(
          new Finding(
              Capability.CHECKSUM_TRAILER, Verdict.NOT_APPLICABLE, "this SDK sends no trailers"));
      return;
    }
    if (!put.ok()) {
      note.accept(
          new Finding(Capability.CHECKSUM_TRAILER, Verdict.REFUSED, "answered " + put.describe()));
      return;
    }
    String stored = read(key);
    boolean exact = body.equals(stored);
    note.accept(
        new Finding(
            Capability.CHECKSUM_TRAILER,
            exact ? Verdict.HONOURED : Verdict.IGNORED,
            exact
                ? "stored the body exactly"
                : "stored "
                    + (stored == null ? "nothing" : stored.length() + " bytes")
                    + " for a body of "
                    + body.length()));
  }

  private void probeUnsignedPayload(Consumer<Finding> note) {
    if (!endpoint.startsWith("https:") && !endpoint.startsWith("aws:")) {
      note.accept(
          new Finding(
              Capability.UNSIGNED_PAYLOAD,
              Verdict.NOT_APPLICABLE,
              "over http the SDK signs every payload"));
      return;
    }
    // Over https the SDK sends UNSIGNED-PAYLOAD: every write above was one.
    note.accept(
        new Finding(
            Capability.UNSIGNED_PAYLOAD,
            Verdict.HONOURED,
            "took the probes' writes, sent with unsigned payloads over https"));
  }

  private void probeRename(Consumer<Finding> note) {
    String source = scratch + "rename-source";
    String target = scratch + "rename-target";
    put(source, "renamed", h -> {});
    Answer<SdkResponse> renamed;
    try {
      renamed = send(() -> RenameProbe.rename(s3, bucket, source, target));
    } catch (LinkageError e) {
      note.accept(
          new Finding(
              Capability.RENAME_OBJECT, Verdict.NOT_APPLICABLE, "this SDK has no RenameObject"));
      return;
    }
    String moved = read(target);
    boolean sourceGone = head(source).isEmpty();
    boolean honoured = "renamed".equals(moved) && sourceGone;
    Verdict verdict =
        honoured ? Verdict.HONOURED : renamed.ok() ? Verdict.IGNORED : Verdict.REFUSED;
    note.accept(
        new Finding(
            Capability.RENAME_OBJECT,
            verdict,
            "answered "
                + renamed.describe()
                + "; target "
                + (moved == null ? "absent" : "holds " + moved.length() + " bytes")
                + ", source "
                + (sourceGone ? "gone" : "still there")));
  }

  // ---- cleanup ----

  private void cleanUp(Consumer<String> progress) {
    int removed = 0;
    String token = null;
    do {
      String from = token;
      Answer<ListObjectsV2Response> page = list(scratch, null, 1000, from);
      if (!page.ok()) {
        progress.accept("could not list the probes to remove them: " + page.describe());
        break;
      }
      List<ObjectIdentifier> keys =
          page.value().contents().stream()
              .map(S3Object::key)
              .map(k -> ObjectIdentifier.builder().key(k).build())
              .toList();
      if (!keys.isEmpty()) {
        send(() -> s3.deleteObjects(r -> r.bucket(bucket).delete(d -> d.objects(keys))));
        removed += keys.size();
      }
      token =
          Boolean.TRUE.equals(page.value().isTruncated())
              ? page.value().nextContinuationToken()
              : null;
    } while (token != null);
    for (String open : new ArrayList<>(openUploads)) {
      String[] keyAndId = open.split("\n", 2);
      send(
          () ->
              s3.abortMultipartUpload(
                  r -> r.bucket(bucket).key(keyAndId[0]).uploadId(keyAndId[1])));
    }
    progress.accept(
        "removed "
            + removed
            + " probe objects and "
            + openUploads.size()
            + " open uploads; "
            + requests
            + " requests in all");
  }

  // ---- requests ----

  /** A request's outcome: the response, or the store's error status and code. */
  private record Answer<T>(T value, int status, String code, String message) {

    boolean ok() {
      return code == null && status / 100 == 2;
    }

    String describe() {
      return ok() ? String.valueOf(status) : status + (code == null ? "" : " " + code);
    }
  }

  private <T> Answer<T> send(Supplier<T> call) {
    requests++;
    try {
      T value = call.get();
      int status = 200;
      if (value instanceof SdkResponse response) {
        observe(response);
        status = response.sdkHttpResponse().statusCode();
      }
      return new Answer<>(value, status, null, null);
    } catch (S3Exception e) {
      String code = e.awsErrorDetails() == null ? "" : e.awsErrorDetails().errorCode();
      return new Answer<>(null, e.statusCode(), code == null ? "" : code, e.getMessage());
    } catch (SdkException e) {
      // No answer from the store (connection refused or reset, timeouts past the SDK's retries):
      // nothing can be judged, and a verdict made of it must never be remembered.
      throw new java.io.UncheckedIOException(
          new java.io.IOException(
              "the store check of s3a://"
                  + bucket
                  + "/ at "
                  + endpoint
                  + " got no answer from the store: "
                  + e.getMessage(),
              e));
    }
  }

  private void observe(SdkResponse response) {
    response.sdkHttpResponse().firstMatchingHeader("Server").ifPresent(servers::add);
    response
        .sdkHttpResponse()
        .firstMatchingHeader("Date")
        .ifPresent(
            date -> {
              try {
                long store =
                    ZonedDateTime.parse(date, DateTimeFormatter.RFC_1123_DATE_TIME)
                        .toInstant()
                        .toEpochMilli();
                long skew = store - System.currentTimeMillis();
                skewMillis = skewMillis == null ? skew : Math.max(skewMillis, skew);
                dates.add(date);
              } catch (RuntimeException unparsable) {
                // No usable Date: the clock probe says so.
              }
            });
  }

  private interface PutConditions {
    void apply(software.amazon.awssdk.services.s3.model.PutObjectRequest.Builder request);
  }

  private Answer<PutObjectResponse> put(String key, String body, PutConditions conditions) {
    return send(
        () ->
            s3.putObject(
                r -> {
                  r.bucket(bucket).key(key);
                  conditions.apply(r);
                },
                RequestBody.fromString(body)));
  }

  /** The ETag of a write the probes need, which must succeed. */
  private String written(String key, Answer<PutObjectResponse> put) {
    if (!put.ok()) {
      throw new IllegalStateException(
          "cannot write s3a://" + bucket + "/" + key + ": " + put.describe() + " " + put.message());
    }
    return put.value().eTag();
  }

  /** The object's content as text, or null when it is absent or unreadable. */
  private String read(String key) {
    Answer<String> got =
        send(
            () -> {
              var bytes = s3.getObjectAsBytes(r -> r.bucket(bucket).key(key));
              observe(bytes.response());
              return bytes.asString(StandardCharsets.UTF_8);
            });
    return got.ok() ? got.value() : null;
  }

  private Optional<HeadObjectResponse> head(String key) {
    Answer<HeadObjectResponse> head = send(() -> s3.headObject(r -> r.bucket(bucket).key(key)));
    return head.ok() ? Optional.of(head.value()) : Optional.empty();
  }

  private Answer<ListObjectsV2Response> list(
      String prefix, String delimiter, int maxKeys, String token) {
    return send(
        () ->
            s3.listObjectsV2(
                r ->
                    r.bucket(bucket)
                        .prefix(prefix)
                        .delimiter(delimiter)
                        .maxKeys(maxKeys)
                        .continuationToken(token)));
  }

  private Answer<ListMultipartUploadsResponse> listUploads(String prefix) {
    return send(() -> s3.listMultipartUploads(r -> r.bucket(bucket).prefix(prefix)));
  }

  /** An open upload with one part. */
  private record Upload(String bucket, String key, String uploadId, List<CompletedPart> parts) {

    CompleteMultipartUploadRequest.Builder request(
        Consumer<software.amazon.awssdk.awscore.AwsRequestOverrideConfiguration.Builder> headers) {
      return CompleteMultipartUploadRequest.builder()
          .bucket(bucket)
          .key(key)
          .uploadId(uploadId)
          .multipartUpload(m -> m.parts(parts))
          .overrideConfiguration(headers);
    }
  }

  private Answer<String> createUpload(String key) {
    Answer<String> created =
        send(() -> s3.createMultipartUpload(r -> r.bucket(bucket).key(key)).uploadId());
    if (created.ok()) {
      openUploads.add(key + "\n" + created.value());
    }
    return created;
  }

  private Upload create(String key) {
    Answer<String> created = createUpload(key);
    if (!created.ok()) {
      throw new IllegalStateException(
          "cannot start an upload to s3a://" + bucket + "/" + key + ": " + created.describe());
    }
    return new Upload(bucket, key, created.value(), List.of());
  }

  private Upload upload(String key, String body) {
    Upload open = create(key);
    Answer<String> part =
        send(
            () ->
                s3.uploadPart(
                        r -> r.bucket(bucket).key(key).uploadId(open.uploadId()).partNumber(1),
                        RequestBody.fromString(body))
                    .eTag());
    if (!part.ok()) {
      throw new IllegalStateException(
          "cannot upload a part to s3a://" + bucket + "/" + key + ": " + part.describe());
    }
    // Once completed or aborted, the cleanup has nothing to abort for it.
    return new Upload(
        bucket,
        key,
        open.uploadId(),
        List.of(CompletedPart.builder().partNumber(1).eTag(part.value()).build()));
  }

  private void abort(Upload upload) {
    send(
        () ->
            s3.abortMultipartUpload(
                r -> r.bucket(bucket).key(upload.key()).uploadId(upload.uploadId())));
    ended(upload);
  }

  /** The upload is completed or aborted: the cleanup has nothing to abort for it. */
  private void ended(Upload upload) {
    openUploads.remove(upload.key() + "\n" + upload.uploadId());
  }

  @Override
  public String toString() {
    return "store check of s3a://" + bucket + "/" + scratch + " on " + endpoint + " " + dates;
  }

  /**
   * RenameObject, apart: SDKs before 2.31 have no such request, and only this class names it, so
   * that on them it alone fails to load, as a {@link LinkageError} the probe reports.
   */
  private static final class RenameProbe {

    private RenameProbe() {}

    static SdkResponse rename(S3Client s3, String bucket, String source, String target) {
      return s3.renameObject(r -> r.bucket(bucket).key(target).renameSource(source));
    }
  }
}
