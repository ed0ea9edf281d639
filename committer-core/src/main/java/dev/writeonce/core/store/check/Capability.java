package dev.writeonce.core.store.check;

/**
 * One store behaviour this library's guarantees rest on, or one it reports for the operator. Each
 * names the guarantee that rests on it and what the library does when the store does not honour it:
 * refuse to run, take a documented fallback, or nothing (the library does not use it).
 */
public enum Capability {
  PUT_IF_NONE_MATCH(
      "put-if-none-match",
      "PUT If-None-Match: *",
      Reliance.REQUIRED,
      "one commit point: the job manifest, job records, abort fences, claims and locks are"
          + " created once and never overwritten; the first _SUCCESS of a destination",
      "refuses: a second writer would overwrite the commit point and an acknowledged commit"
          + " could be lost"),
  PUT_IF_MATCH(
      "put-if-match",
      "PUT If-Match",
      Reliance.REQUIRED,
      "lease renewals, takeovers of lapsed locks, job record transitions and the history of"
          + " finished jobs in _SUCCESS are compare-and-swap",
      "refuses: two holders could both believe they hold a lock or lease"),
  DELETE_IF_MATCH(
      "delete-if-match",
      "DELETE If-Match",
      Reliance.FALLBACK,
      "a lock, claim or job record is removed only by its owner",
      "falls back: the object is read back and checked to be the caller's just before the"
          + " delete, and only while its lease is clear of lapsing on the store's clock"),
  DELETE_OBJECTS_ETAG(
      "delete-objects-etag",
      "ETag of a DeleteObjects entry",
      Reliance.UNUSED,
      "none: bulk deletes remove only objects of the caller's own run",
      "nothing: the library never sends it"),
  COMPLETE_IF_NONE_MATCH(
      "complete-if-none-match",
      "CompleteMultipartUpload If-None-Match: *",
      Reliance.UNUSED,
      "none: a completion is meant to replace the file at its key (overwrite and append modes"
          + " decide beforehand which keys a job may write)",
      "nothing: the library never sends it"),
  COMPLETE_REPEATED(
      "complete-repeated",
      "CompleteMultipartUpload repeated",
      Reliance.FALLBACK,
      "roll-forward: a completion whose answer was lost is sent again after a restart",
      "falls back: an upload the store no longer knows counts as completed when the object at"
          + " its key carries the ETag its parts give"),
  COMPLETE_AFTER_ABORT(
      "complete-after-abort",
      "CompleteMultipartUpload after an abort fails",
      Reliance.REQUIRED,
      "an aborted job leaves nothing behind: an upload it aborted can never be completed later",
      "refuses: an aborted job's file could appear after its abort"),
  LIST_UPLOADS_BY_KEY(
      "list-uploads-by-key",
      "ListMultipartUploads by exact key",
      Reliance.FALLBACK,
      "uploads of dead task attempts are found and aborted by upload id",
      "falls back: uploads it cannot find are left to the bucket's lifecycle rule for"
          + " incomplete uploads (a cost, never a visible file)"),
  LIST_UPLOADS_BY_PREFIX(
      "list-uploads-by-prefix",
      "ListMultipartUploads by directory prefix",
      Reliance.FALLBACK,
      "purge and recover find every open upload under a destination",
      "falls back: uploads it cannot find are left to the bucket's lifecycle rule for"
          + " incomplete uploads"),
  LIST_AFTER_WRITE(
      "list-after-write",
      "LIST after a write shows it",
      Reliance.REQUIRED,
      "job setup finds every unfinished job, and a job commit every task manifest, by listing",
      "refuses: a listing could miss a committed task's manifest or a job still committing"),
  LIST_AFTER_DELETE(
      "list-after-delete",
      "LIST after a delete omits it",
      Reliance.REQUIRED,
      "a destination emptied for an overwrite lists as empty",
      "refuses: an overwrite could keep files it deleted in the listings that follow"),
  DELIMITED_PAGES(
      "delimited-pages",
      "delimited pages and IsTruncated",
      Reliance.REQUIRED,
      "every listing reads every page: a page that ends early says so",
      "refuses: a listing could end before its last key and a file be taken as absent"),
  COMPLETED_ETAG(
      "completed-etag",
      "ETag in the CompleteMultipartUpload answer",
      Reliance.FALLBACK,
      "a completion is confirmed by the ETag of the object it made",
      "falls back: the ETag is read with a HEAD of the completed object"),
  CLOCK(
      "clock",
      "Date and Last-Modified on one clock",
      Reliance.FALLBACK,
      "leases and retentions are judged on the store's clock, never the local one",
      "falls back: without a Date header the local clock stands in, and the skew is unknown"),
  MIN_PART_SIZE(
      "min-part-size",
      "5 MiB minimum part size",
      Reliance.UNUSED,
      "none: every part but the last is at least fs.s3a.multipart.size (5 MiB or more)",
      "nothing: smaller parts are never sent"),
  CHECKSUM_TRAILER(
      "checksum-trailer",
      "checksum trailers (aws-chunked, CRC32)",
      Reliance.UNUSED,
      "none: the library sends no checksum trailer; S3A's own uploads send one only when"
          + " fs.s3a.checksum.calculation.enabled is true",
      "nothing: keep fs.s3a.checksum.calculation.enabled false on this store"),
  UNSIGNED_PAYLOAD(
      "unsigned-payload",
      "unsigned payloads (UNSIGNED-PAYLOAD over https)",
      Reliance.UNUSED,
      "none: the SDK chooses, signing every payload over http",
      "nothing: use http, or a store that takes unsigned payloads over https"),
  RENAME_OBJECT(
      "rename-object",
      "RenameObject, judged by the destination's content and the source's absence",
      Reliance.UNUSED,
      "none: the library and its shim never rename an object",
      "nothing: the library never sends it");

  /** How a guarantee depends on the capability. */
  public enum Reliance {
    /** No guarantee can be given without it: the library refuses to run. */
    REQUIRED,
    /** A documented fallback keeps the guarantee: the library takes it. */
    FALLBACK,
    /** Reported for the operator; the library does not use it. */
    UNUSED
  }

  private final String id;
  private final String title;
  private final Reliance reliance;
  private final String guarantee;
  private final String withoutIt;

  Capability(String id, String title, Reliance reliance, String guarantee, String withoutIt) {
    this.id = id;
    this.title = title;
    this.reliance = reliance;
    this.guarantee = guarantee;
    this.withoutIt = withoutIt;
  }

  /** The name used in reports and in {@code writeonce.store.check.trust}. */
  public String id() {
    return id;
  }

  public String title() {
    return title;
  }

  public Reliance reliance() {
    return reliance;
  }

  /** The guarantee that rests on the capability. */
  public String guarantee() {
    return guarantee;
  }

  /** What the library does when the store does not honour it. */
  public String withoutIt() {
    return withoutIt;
  }

  /** What the library does about a verdict. */
  public String action(Verdict verdict) {
    if (verdict == Verdict.HONOURED) {
      return reliance == Reliance.UNUSED ? "nothing: not used" : "uses it";
    }
    if (verdict == Verdict.NOT_APPLICABLE) {
      return "nothing: not probed";
    }
    return withoutIt;
  }

  /** Whether the verdict leaves a guarantee that cannot be given. */
  public boolean breaksGuarantee(Verdict verdict) {
    return reliance == Reliance.REQUIRED
        && (verdict == Verdict.IGNORED || verdict == Verdict.REFUSED);
  }

  /** The capability of a name given in reports or settings. */
  public static Capability of(String id) {
    for (Capability capability : values()) {
      if (capability.id.equals(id.trim())) {
        return capability;
      }
    }
    StringBuilder known = new StringBuilder();
    for (Capability capability : values()) {
      known.append(known.length() == 0 ? "" : ", ").append(capability.id);
    }
    throw new IllegalArgumentException("'" + id + "' is not a store capability; known: " + known);
  }
}
