package dev.writeonce.core.store.check;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * What {@link StoreCheck} found on one store: a verdict per capability, with the store's answer
 * that decided it.
 *
 * @param endpoint the store's endpoint, as the client reaches it
 * @param bucket the bucket the probes ran in
 * @param server the store's {@code Server} header, empty when it sends none; where its answers came
 *     with several (the nodes of a cluster in a rolling upgrade), each, separated by {@value
 *     #SERVERS_SEPARATOR}
 * @param checkedAtMillis when the check ran, on the store's clock where it sent one
 * @param requests how many requests the check sent, its cleanup included
 * @param findings one per capability, in {@link Capability} order
 */
public record StoreReport(
    String endpoint,
    String bucket,
    String server,
    long checkedAtMillis,
    int requests,
    List<Finding> findings) {

  /**
   * One capability's verdict.
   *
   * @param answer what the store answered and what reading back showed, in a line
   */
  public record Finding(Capability capability, Verdict verdict, String answer) {

    /** What the library does about it. */
    public String action() {
      return capability.action(verdict);
    }
  }

  /** Between the Server headers of a store whose answers came with several. */
  public static final String SERVERS_SEPARATOR = " | ";

  public StoreReport {
    findings = List.copyOf(findings);
  }

  /**
   * Whether an answer's Server header is one the check saw: the identity a verdict is taken by (""
   * where the store sent none).
   */
  public boolean answeredAs(String serverHeader) {
    if (server.isEmpty()) {
      return serverHeader.isEmpty();
    }
    return List.of(server.split(java.util.regex.Pattern.quote(SERVERS_SEPARATOR)))
        .contains(serverHeader);
  }

  /** The finding of one capability. */
  public Optional<Finding> finding(Capability capability) {
    return findings.stream().filter(f -> f.capability() == capability).findFirst();
  }

  /** The verdict of one capability; {@link Verdict#NOT_APPLICABLE} when it was not probed. */
  public Verdict verdict(Capability capability) {
    return finding(capability).map(Finding::verdict).orElse(Verdict.NOT_APPLICABLE);
  }

  /**
   * The findings that leave a guarantee the library cannot give, leaving out the capabilities the
   * user chose to trust at their own risk.
   */
  public List<Finding> brokenGuarantees(Collection<Capability> trusted) {
    List<Finding> broken = new ArrayList<>();
    for (Finding finding : findings) {
      if (finding.capability().breaksGuarantee(finding.verdict())
          && !trusted.contains(finding.capability())) {
        broken.add(finding);
      }
    }
    return broken;
  }

  /** The findings where the library takes its documented fallback. */
  public List<Finding> fallbacks() {
    return findings.stream()
        .filter(
            f ->
                f.capability().reliance() == Capability.Reliance.FALLBACK
                    && (f.verdict() == Verdict.IGNORED || f.verdict() == Verdict.REFUSED))
        .toList();
  }
}
