package dev.writeonce.core.store.check;

/** What a probe found a store to do with a capability, judged by reading back what it did. */
public enum Verdict {
  /** The store did what S3's contract says. */
  HONOURED,
  /** The store answered as if it had, but reading back shows it did not: the dangerous case. */
  IGNORED,
  /** The store refused the request (an error answer), so nothing silently went wrong. */
  REFUSED,
  /** Not probed: the client or the connection cannot send it. */
  NOT_APPLICABLE;

  /** The name used in reports. */
  public String id() {
    return name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
  }
}
