package dev.writeonce.core.testing.s3;

/** What happens to a request once its {@link RequestHook} has seen it. */
public enum Handling {
  /** The store acts and answers. */
  PROCEED,
  /** The store answers 503 SlowDown and applies nothing, as a throttled request. */
  FAIL_UNSENT,
  /**
   * The store applies the request, then the answer is lost: the caller gets an {@code
   * SdkClientException} as from a reset connection and cannot tell whether it took effect.
   */
  LOSE_ANSWER
}
