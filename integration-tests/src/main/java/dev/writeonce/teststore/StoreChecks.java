package dev.writeonce.teststore;

import dev.writeonce.core.store.check.StoreCheck;
import dev.writeonce.core.store.check.StoreReport;
import dev.writeonce.core.store.check.StoreTrust;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * Each test store is checked once when it starts, as an operator runs {@code writeonce check-store}
 * before trusting a store: the committers and the shim in this JVM then find the report in memory,
 * and the requests the suites count are their own. A suite that plays a store which ignores a
 * condition checks through a proxy of its own instead.
 */
public final class StoreChecks {

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(StoreChecks.class);

  private StoreChecks() {}

  /** Checks the store in a bucket of its own and remembers the report for its endpoint. */
  static StoreReport checkAtStart(TestStore store) {
    String bucket;
    try {
      bucket = store.newBucket("store-check");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    StoreReport report =
        new StoreCheck(store.adminClient(), bucket, store.endpoint().toString(), "")
            .run(line -> LOG.info("{}: {}", store.name(), line));
    StoreTrust.remember(report);
    return report;
  }

  /** The report of a started store. */
  public static StoreReport of(TestStore store) {
    return StoreTrust.known(store.endpoint().toString()).orElseGet(() -> checkAtStart(store));
  }
}
