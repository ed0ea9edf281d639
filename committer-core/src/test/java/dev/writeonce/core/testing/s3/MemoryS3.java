package dev.writeonce.core.testing.s3;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.NavigableMap;
import java.util.NavigableSet;
import java.util.Optional;
import java.util.SortedMap;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * An S3 store in memory: buckets of objects and open multipart uploads, and a clock of its own that
 * moves only when a test moves it. The one model of S3 the tests have: one per simulated world,
 * where each simulated process talks to it through a {@link MemoryS3Client} of its own (under S3A,
 * or under the gateway as {@link dev.writeonce.core.testing.InMemoryStore}).
 *
 * <p>The public methods are the test's direct view of the store: they bypass every request hook and
 * count nothing. The package-private ones carry S3's semantics for the clients. All state is under
 * one lock, and nothing blocks or sleeps while holding it.
 */
public final class MemoryS3 {

  /** Where a store clock starts unless told otherwise, so that runs are reproducible. */
  public static final long START_MILLIS = Instant.parse("2026-01-01T00:00:00Z").toEpochMilli();

  /** The region every bucket is in. */
  public static final String REGION = "us-east-1";

  /** S3's least size of every part of a multipart upload but the last. */
  public static final long DEFAULT_MINIMUM_PART_SIZE = 5L * 1024 * 1024;

  /** S3's highest part number. */
  static final int MAX_PART_NUMBER = 10_000;

  /** The order of S3 listings: the UTF-8 byte order of keys, which is their code point order. */
  public static final Comparator<String> KEY_ORDER = MemoryS3::compareCodePoints;

  /**
   * An object as stored.
   *
   * @param etag as S3 sends it, in double quotes
   * @param lastModifiedMillis the store clock when it was written
   * @param metadata the user metadata, without the {@code x-amz-meta-} prefix
   * @param contentType the Content-Type it was written with, or null
   */
  public record StoredObject(
      String key,
      byte[] bytes,
      String etag,
      long lastModifiedMillis,
      Map<String, String> metadata,
      String contentType) {

    public StoredObject {
      metadata = metadata == null ? Map.of() : Map.copyOf(metadata);
    }

    /** A copy of the content: the stored one never changes. */
    @Override
    public byte[] bytes() {
      return bytes.clone();
    }

    public long size() {
      return bytes.length;
    }

    /** The ETag without its quotes. */
    public String plainEtag() {
      return unquote(etag);
    }

    InputStream stream(int offset, int length) {
      return new ByteArrayInputStream(bytes, offset, length);
    }
  }

  /** A multipart upload that is neither completed nor aborted. */
  public record OpenUpload(String key, String uploadId, long initiatedMillis) {}

  /** A part of an open upload. */
  record Part(int number, long size, String etag, long lastModifiedMillis, byte[] bytes) {}

  /** A page of a listing: objects and common prefixes, in listing order. */
  record ObjectPage(
      List<StoredObject> contents,
      List<String> commonPrefixes,
      boolean truncated,
      ListPosition next) {}

  /**
   * Where a listing goes on: after {@code entry}, and, when it is a common prefix, after every key
   * under it too. Null stands for the start.
   */
  record ListPosition(String entry, boolean commonPrefix) {}

  record UploadPage(List<OpenUpload> uploads, boolean truncated) {}

  record PartPage(List<Part> parts, boolean truncated) {}

  /** A part a completion names. */
  record PartRef(Integer number, String etag) {}

  /** One key of a DeleteObjects request, with the ETag it must have, if any. */
  record DeleteTarget(String key, String etag) {}

  /** What DeleteObjects did with one key: deleted when {@code failure} is null. */
  record DeleteOutcome(String key, S3Failure failure) {}

  private static final class Upload {
    final String key;
    final String id;
    final long sequence;
    final long initiatedMillis;
    final Map<String, String> metadata;
    final String contentType;
    final NavigableMap<Integer, Part> parts = new TreeMap<>();

    Upload(
        String key,
        String id,
        long sequence,
        long initiatedMillis,
        Map<String, String> metadata,
        String contentType) {
      this.key = key;
      this.id = id;
      this.sequence = sequence;
      this.initiatedMillis = initiatedMillis;
      this.metadata = metadata;
      this.contentType = contentType;
    }

    OpenUpload view() {
      return new OpenUpload(key, id, initiatedMillis);
    }
  }

  /** Uploads as S3 lists them: by key, then by when they were started. */
  private static final Comparator<Upload> UPLOAD_ORDER =
      Comparator.<Upload, String>comparing(upload -> upload.key, KEY_ORDER)
          .thenComparingLong(upload -> upload.sequence);

  private static final class Bucket {
    final NavigableMap<String, StoredObject> objects = new TreeMap<>(KEY_ORDER);
    final NavigableSet<Upload> uploads = new TreeSet<>(UPLOAD_ORDER);
    final Map<String, Upload> uploadsById = new HashMap<>();
  }

  private final Object lock = new Object();
  private final Map<String, Bucket> buckets = new HashMap<>();
  private final SortedMap<String, Long> requestCounts = new TreeMap<>();
  private final SplittableRandom random;
  private long clockMillis;
  private long uploadSequence;
  private long requestSequence;
  private long minimumPartSize = DEFAULT_MINIMUM_PART_SIZE;
  private volatile String server = "";

  /** A store whose upload ids come from seed 0. */
  public MemoryS3() {
    this(0);
  }

  /** A store whose upload ids, a counter and a random part, come from this seed. */
  public MemoryS3(long seed) {
    this(seed, START_MILLIS);
  }

  /** A store whose upload ids come from this seed and whose clock starts at these epoch millis. */
  public MemoryS3(long seed, long clockStartMillis) {
    this.random = new SplittableRandom(seed);
    this.clockMillis = clockStartMillis;
  }

  /** The Server header of every answer from now on; "" (the default) sends none. */
  private volatile boolean ignorePutIfNoneMatch;

  public void setServerHeader(String server) {
    this.server = server;
  }

  String serverHeader() {
    return server;
  }

  /**
   * Plays a store that silently ignores {@code If-None-Match} on PutObject, as a store the check
   * would refuse: the write replaces whatever is there. For planting the fault a guarantee rests
   * on.
   */
  public void ignorePutIfNoneMatch(boolean ignore) {
    this.ignorePutIfNoneMatch = ignore;
  }

  // ---- the clock

  /** The store clock, in epoch milliseconds. */
  public long nowMillis() {
    synchronized (lock) {
      return clockMillis;
    }
  }

  /** Moves the store clock on; it never moves by itself. */
  public void advanceMillis(long millis) {
    if (millis < 0) {
      throw new IllegalArgumentException("the store clock does not go back: " + millis);
    }
    synchronized (lock) {
      clockMillis += millis;
    }
  }

  // ---- settings

  /**
   * Sets the least size of every part but the last that a completion accepts (S3: 5 MiB; 0 lets
   * tests complete uploads of tiny parts).
   */
  public void setMinimumPartSize(long bytes) {
    synchronized (lock) {
      minimumPartSize = bytes;
    }
  }

  // ---- the direct view

  /** Creates a bucket if there is none of that name; buckets are also created on first use. */
  public void createBucket(String name) {
    synchronized (lock) {
      bucket(name);
    }
  }

  /** Writes an object as an unconditional PUT would. */
  public StoredObject putObject(String bucket, String key, byte[] bytes) {
    synchronized (lock) {
      return put(bucket, key, bytes.clone(), Map.of(), null, null, null);
    }
  }

  public Optional<byte[]> getObject(String bucket, String key) {
    return object(bucket, key).map(StoredObject::bytes);
  }

  public Optional<StoredObject> object(String bucket, String key) {
    synchronized (lock) {
      return Optional.ofNullable(bucket(bucket).objects.get(key));
    }
  }

  /** The objects whose keys start with {@code prefix}, in listing order. */
  public NavigableMap<String, StoredObject> objects(String bucket, String prefix) {
    synchronized (lock) {
      NavigableMap<String, StoredObject> found = new TreeMap<>(KEY_ORDER);
      for (StoredObject object : bucket(bucket).objects.tailMap(prefix, true).values()) {
        if (!object.key().startsWith(prefix)) {
          break;
        }
        found.put(object.key(), object);
      }
      return found;
    }
  }

  /** Every object key of a bucket, in listing order. */
  public List<String> keys(String bucket) {
    synchronized (lock) {
      return new ArrayList<>(bucket(bucket).objects.keySet());
    }
  }

  /** The open uploads of a bucket, in listing order. */
  public List<OpenUpload> openUploads(String bucket) {
    synchronized (lock) {
      return bucket(bucket).uploads.stream().map(Upload::view).toList();
    }
  }

  /** Aborts an upload as another tool would; false when there was no such open upload. */
  public boolean abortUpload(String bucket, String key, String uploadId) {
    synchronized (lock) {
      Bucket b = bucket(bucket);
      Upload upload = b.uploadsById.get(uploadId);
      if (upload == null || !upload.key.equals(key)) {
        return false;
      }
      remove(b, upload);
      return true;
    }
  }

  /** Deletes an object; false when there was none. */
  public boolean deleteObject(String bucket, String key) {
    synchronized (lock) {
      return bucket(bucket).objects.remove(key) != null;
    }
  }

  /**
   * How many requests of an operation ("CopyObject", "PutObject", ...) the clients sent: every one
   * the hook let through, also those it failed unsent or lost the answer of, not those it threw on.
   */
  public long requestCount(String operation) {
    synchronized (lock) {
      return requestCounts.getOrDefault(operation, 0L);
    }
  }

  /** Requests sent so far by operation name, every client of this store together. */
  public SortedMap<String, Long> requestCounts() {
    synchronized (lock) {
      return Collections.unmodifiableSortedMap(new TreeMap<>(requestCounts));
    }
  }

  // ---- for the clients

  /** Counts a request that reached the store and gives it an id. */
  String acceptRequest(String operation) {
    synchronized (lock) {
      requestCounts.merge(operation, 1L, Long::sum);
      String hex = Long.toHexString(++requestSequence).toUpperCase(Locale.ROOT);
      return "0".repeat(16 - hex.length()) + hex;
    }
  }

  /** Makes sure the bucket exists: every name does, created on first use. */
  void touchBucket(String bucket) {
    synchronized (lock) {
      bucket(bucket);
    }
  }

  StoredObject find(String bucket, String key) {
    synchronized (lock) {
      return bucket(bucket).objects.get(key);
    }
  }

  /**
   * Writes an object if the conditions hold.
   *
   * @param ifMatch the ETag the current object must have, or null
   * @param ifNoneMatch "*" for "only if there is none", or null
   */
  StoredObject put(
      String bucket,
      String key,
      byte[] bytes,
      Map<String, String> metadata,
      String contentType,
      String ifMatch,
      String ifNoneMatch) {
    synchronized (lock) {
      Bucket b = bucket(bucket);
      checkWriteConditions(b.objects.get(key), ifMatch, ignorePutIfNoneMatch ? null : ifNoneMatch);
      StoredObject object =
          new StoredObject(key, bytes, md5Etag(bytes), clockMillis, metadata, contentType);
      b.objects.put(key, object);
      return object;
    }
  }

  /**
   * Copies an object; the copy gets the MD5 of its bytes as ETag, as S3 gives a single-request
   * copy.
   *
   * @param metadata the copy's metadata, or null to keep the source's (directive COPY)
   */
  StoredObject copy(
      String sourceBucket,
      String sourceKey,
      String bucket,
      String key,
      Map<String, String> metadata,
      String contentType,
      String sourceIfMatch,
      String sourceIfNoneMatch) {
    synchronized (lock) {
      StoredObject source = bucket(sourceBucket).objects.get(sourceKey);
      if (source == null) {
        throw S3Failure.noSuchKey();
      }
      if (sourceIfMatch != null && !etagMatches(source.etag(), sourceIfMatch)) {
        throw S3Failure.preconditionFailed();
      }
      if (sourceIfNoneMatch != null && etagMatches(source.etag(), sourceIfNoneMatch)) {
        throw S3Failure.preconditionFailed();
      }
      if (metadata == null && sourceBucket.equals(bucket) && sourceKey.equals(key)) {
        throw S3Failure.invalidRequest(
            "This copy request is illegal because it is trying to copy an object to itself"
                + " without changing the object's metadata, storage class, website redirect"
                + " location or encryption attributes.");
      }
      StoredObject copy =
          new StoredObject(
              key,
              source.bytes,
              md5Etag(source.bytes),
              clockMillis,
              metadata == null ? source.metadata() : metadata,
              metadata == null ? source.contentType() : contentType);
      bucket(bucket).objects.put(key, copy);
      return copy;
    }
  }

  /**
   * Deletes an object, if it has the ETag {@code ifMatch} when that is given.
   *
   * @return whether there was an object
   */
  boolean delete(String bucket, String key, String ifMatch) {
    synchronized (lock) {
      Bucket b = bucket(bucket);
      StoredObject current = b.objects.get(key);
      if (ifMatch != null && (current == null || !etagMatches(current.etag(), ifMatch))) {
        throw S3Failure.preconditionFailed();
      }
      return b.objects.remove(key) != null;
    }
  }

  /** DeleteObjects: each key on its own; a missing key counts as deleted. */
  List<DeleteOutcome> deleteAll(String bucket, List<DeleteTarget> targets) {
    synchronized (lock) {
      Bucket b = bucket(bucket);
      List<DeleteOutcome> outcomes = new ArrayList<>(targets.size());
      for (DeleteTarget target : targets) {
        StoredObject current = b.objects.get(target.key());
        if (target.etag() != null
            && (current == null || !etagMatches(current.etag(), target.etag()))) {
          outcomes.add(new DeleteOutcome(target.key(), S3Failure.preconditionFailed()));
          continue;
        }
        b.objects.remove(target.key());
        outcomes.add(new DeleteOutcome(target.key(), null));
      }
      return outcomes;
    }
  }

  OpenUpload createUpload(
      String bucket, String key, Map<String, String> metadata, String contentType) {
    synchronized (lock) {
      Bucket b = bucket(bucket);
      long sequence = ++uploadSequence;
      // A counter for order and replay, a seeded random part so that ids do not look alike.
      String id = "u" + sequence + "-" + HexFormat.of().toHexDigits(random.nextLong());
      Upload upload =
          new Upload(
              key,
              id,
              sequence,
              clockMillis,
              metadata == null ? Map.of() : Map.copyOf(metadata),
              contentType);
      b.uploads.add(upload);
      b.uploadsById.put(id, upload);
      return upload.view();
    }
  }

  /** Stores a part, replacing one of the same number; returns its quoted ETag. */
  String uploadPart(String bucket, String key, String uploadId, int partNumber, byte[] bytes) {
    if (partNumber < 1 || partNumber > MAX_PART_NUMBER) {
      throw S3Failure.invalidArgument(
          "Part number must be an integer between 1 and 10000, inclusive");
    }
    synchronized (lock) {
      Upload upload = openUpload(bucket(bucket), key, uploadId);
      String etag = md5Etag(bytes);
      upload.parts.put(partNumber, new Part(partNumber, bytes.length, etag, clockMillis, bytes));
      return etag;
    }
  }

  /**
   * Completes an upload: the object replaces any at its key and the upload is gone, so that a
   * second completion answers NoSuchUpload, as AWS does.
   */
  StoredObject complete(
      String bucket,
      String key,
      String uploadId,
      List<PartRef> parts,
      String ifMatch,
      String ifNoneMatch) {
    synchronized (lock) {
      Bucket b = bucket(bucket);
      Upload upload = openUpload(b, key, uploadId);
      if (parts.isEmpty()) {
        throw S3Failure.malformedXml();
      }
      List<Part> chosen = new ArrayList<>(parts.size());
      int previous = 0;
      for (PartRef ref : parts) {
        if (ref.number() == null || ref.number() <= previous) {
          throw new S3Failure(
              400,
              "InvalidPartOrder",
              "The list of parts was not in ascending order. Parts must be ordered by part"
                  + " number.");
        }
        previous = ref.number();
        Part part = upload.parts.get(ref.number());
        if (part == null || ref.etag() == null || !etagMatches(part.etag(), ref.etag())) {
          throw new S3Failure(
              400,
              "InvalidPart",
              "One or more of the specified parts could not be found. The part may not have been"
                  + " uploaded, or the specified entity tag may not match the part's entity tag.");
        }
        chosen.add(part);
      }
      for (int i = 0; i < chosen.size() - 1; i++) {
        if (chosen.get(i).size() < minimumPartSize) {
          throw new S3Failure(
              400,
              "EntityTooSmall",
              "Your proposed upload is smaller than the minimum allowed object size.");
        }
      }
      checkWriteConditions(b.objects.get(key), ifMatch, ifNoneMatch);

      byte[] bytes = new byte[Math.toIntExact(chosen.stream().mapToLong(Part::size).sum())];
      MessageDigest partDigests = md5();
      int offset = 0;
      for (Part part : chosen) {
        System.arraycopy(part.bytes(), 0, bytes, offset, part.bytes().length);
        offset += part.bytes().length;
        partDigests.update(md5().digest(part.bytes()));
      }
      // S3's multipart ETag: the MD5 of the parts' binary MD5s, a dash, the number of parts.
      String etag =
          "\"" + HexFormat.of().formatHex(partDigests.digest()) + "-" + chosen.size() + "\"";
      StoredObject object =
          new StoredObject(key, bytes, etag, clockMillis, upload.metadata, upload.contentType);
      b.objects.put(key, object);
      remove(b, upload);
      return object;
    }
  }

  void abort(String bucket, String key, String uploadId) {
    synchronized (lock) {
      Bucket b = bucket(bucket);
      remove(b, openUpload(b, key, uploadId));
    }
  }

  /**
   * One page of objects under {@code prefix}, keys and (with a delimiter) common prefixes counting
   * alike towards {@code limit}.
   *
   * @param after where the previous page ended, or null for the start
   */
  ObjectPage list(String bucket, String prefix, String delimiter, ListPosition after, int limit) {
    synchronized (lock) {
      NavigableMap<String, StoredObject> objects = bucket(bucket).objects;
      boolean grouping = delimiter != null && !delimiter.isEmpty();
      NavigableMap<String, StoredObject> tail =
          after == null || KEY_ORDER.compare(after.entry(), prefix) < 0
              ? objects.tailMap(prefix, true)
              : objects.tailMap(after.entry(), false);
      String skipped = after != null && after.commonPrefix() ? after.entry() : null;
      List<StoredObject> contents = new ArrayList<>();
      List<String> commonPrefixes = new ArrayList<>();
      ListPosition last = after;
      boolean truncated = false;
      for (StoredObject object : tail.values()) {
        String key = object.key();
        if (!key.startsWith(prefix)) {
          break;
        }
        if (skipped != null && key.startsWith(skipped)) {
          continue;
        }
        int cut = grouping ? key.indexOf(delimiter, prefix.length()) : -1;
        if (contents.size() + commonPrefixes.size() >= limit) {
          truncated = true;
          break;
        }
        if (cut >= 0) {
          String common = key.substring(0, cut + delimiter.length());
          commonPrefixes.add(common);
          skipped = common;
          last = new ListPosition(common, true);
        } else {
          contents.add(object);
          last = new ListPosition(key, false);
        }
      }
      return new ObjectPage(contents, commonPrefixes, truncated, truncated ? last : null);
    }
  }

  /**
   * One page of open uploads under {@code prefix}, after the markers: with only a key marker, the
   * uploads of later keys; with an upload id marker too, also the later uploads of that key.
   */
  UploadPage listUploads(
      String bucket, String prefix, String keyMarker, String uploadIdMarker, int limit) {
    synchronized (lock) {
      List<OpenUpload> found = new ArrayList<>();
      boolean truncated = false;
      long markerSequence =
          keyMarker == null || uploadIdMarker == null ? Long.MAX_VALUE : sequenceOf(uploadIdMarker);
      for (Upload upload : bucket(bucket).uploads) {
        if (!upload.key.startsWith(prefix)) {
          continue;
        }
        if (keyMarker != null) {
          int order = KEY_ORDER.compare(upload.key, keyMarker);
          if (order < 0 || (order == 0 && upload.sequence <= markerSequence)) {
            continue;
          }
        }
        if (found.size() >= limit) {
          truncated = true;
          break;
        }
        found.add(upload.view());
      }
      return new UploadPage(found, truncated);
    }
  }

  PartPage listParts(String bucket, String key, String uploadId, int marker, int limit) {
    synchronized (lock) {
      Upload upload = openUpload(bucket(bucket), key, uploadId);
      List<Part> found = new ArrayList<>();
      boolean truncated = false;
      for (Part part : upload.parts.tailMap(marker, false).values()) {
        if (found.size() >= limit) {
          truncated = true;
          break;
        }
        found.add(part);
      }
      return new PartPage(found, truncated);
    }
  }

  // ---- internals, all called with the lock held

  private Bucket bucket(String name) {
    return buckets.computeIfAbsent(name, n -> new Bucket());
  }

  private static Upload openUpload(Bucket bucket, String key, String uploadId) {
    Upload upload = uploadId == null ? null : bucket.uploadsById.get(uploadId);
    if (upload == null || !upload.key.equals(key)) {
      throw S3Failure.noSuchUpload();
    }
    return upload;
  }

  private static void remove(Bucket bucket, Upload upload) {
    bucket.uploads.remove(upload);
    bucket.uploadsById.remove(upload.id);
  }

  private static void checkWriteConditions(
      StoredObject current, String ifMatch, String ifNoneMatch) {
    if (ifNoneMatch != null) {
      if (!"*".equals(ifNoneMatch.trim())) {
        throw new S3Failure(
            501,
            "NotImplemented",
            "A header you provided implies functionality that is not implemented");
      }
      if (current != null) {
        throw S3Failure.preconditionFailed();
      }
    }
    if (ifMatch != null && (current == null || !etagMatches(current.etag(), ifMatch))) {
      throw S3Failure.preconditionFailed();
    }
  }

  /** The sequence number an upload id begins with; an unreadable one sorts after all. */
  private static long sequenceOf(String uploadId) {
    int dash = uploadId.indexOf('-');
    try {
      return uploadId.startsWith("u") && dash > 1
          ? Long.parseLong(uploadId.substring(1, dash))
          : Long.MAX_VALUE;
    } catch (NumberFormatException e) {
      return Long.MAX_VALUE;
    }
  }

  /** Whether an ETag matches a condition, quoted or not; "*" matches any. */
  static boolean etagMatches(String etag, String condition) {
    String wanted = condition.trim();
    return wanted.equals("*") || unquote(etag).equals(unquote(wanted));
  }

  static String unquote(String etag) {
    String trimmed = etag.trim();
    return trimmed.length() >= 2 && trimmed.startsWith("\"") && trimmed.endsWith("\"")
        ? trimmed.substring(1, trimmed.length() - 1)
        : trimmed;
  }

  /** The ETag of a single-request PUT or copy: the quoted hex MD5 of the bytes. */
  static String md5Etag(byte[] bytes) {
    return "\"" + HexFormat.of().formatHex(md5().digest(bytes)) + "\"";
  }

  private static MessageDigest md5() {
    try {
      return MessageDigest.getInstance("MD5");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java runtime has MD5", e);
    }
  }

  /**
   * Code point order: the order of UTF-16 chars, but where a surrogate (part of a code point above
   * U+FFFF) meets a char above the surrogates, the surrogate sorts last.
   */
  private static int compareCodePoints(String a, String b) {
    int common = Math.min(a.length(), b.length());
    for (int i = 0; i < common; i++) {
      char ca = a.charAt(i);
      char cb = b.charAt(i);
      if (ca != cb) {
        if (ca >= Character.MIN_SURROGATE && cb >= Character.MIN_SURROGATE) {
          return Integer.compare(surrogatesLast(ca), surrogatesLast(cb));
        }
        return ca - cb;
      }
    }
    return a.length() - b.length();
  }

  private static int surrogatesLast(char c) {
    return c > Character.MAX_SURROGATE ? c - 0x800 : c + 0x2000;
  }
}
