package dev.writeonce.core.testing.s3;

/**
 * Sees every request a {@link MemoryS3Client} sends, on the sending thread, before the store acts:
 * the place for a deterministic scheduler to pause the caller and for fault injection.
 */
public interface RequestHook {

  /**
   * Called on the calling thread before the store acts on a request. May block (a scheduler pauses
   * the caller here), may throw (a crashed process), and returns what happens to the request.
   */
  Handling before(StoreRequest request);

  /**
   * How many entries the next list page may hold at most, given what the caller asked; a number
   * below the entries left makes a short, truncated page. Default: as asked. Called after {@link
   * #before} let the request through. ListObjectsV2 pages may be empty; the listings paged by
   * markers (ListObjects, ListMultipartUploads, ListParts) hold at least one entry when any is
   * left, as their markers cannot say "from the start".
   */
  default int pageSize(StoreRequest request, int requested) {
    return requested;
  }

  /** Lets every request through unchanged. */
  RequestHook NONE = request -> Handling.PROCEED;
}
