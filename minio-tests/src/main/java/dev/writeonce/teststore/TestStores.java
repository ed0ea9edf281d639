package dev.writeonce.teststore;

import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * The stores of the suite, each started at most once per JVM and stopped when it exits. A store
 * that cannot start fails the test that asked for it: the suite never skips a missing store.
 */
public final class TestStores {

  private static LocalMinio minio;
  private static CephRgw cephRgw;
  private static ExternalStore external;

  private TestStores() {}

  /** A local MinIO server process, provisioned from the pinned version. */
  public static synchronized TestStore minio() {
    if (minio == null) {
      minio = start(LocalMinio::start);
    }
    return minio;
  }

  /** A single-node Ceph RGW started by {@code scripts/ceph-rgw.sh}. */
  public static synchronized TestStore cephRgw() {
    if (cephRgw == null) {
      cephRgw = start(CephRgw::start);
    }
    return cephRgw;
  }

  /** The endpoint named by the {@code WRITEONCE_S3_*} environment variables. */
  public static synchronized TestStore external() {
    if (external == null) {
      external = start(ExternalStore::fromEnvironment);
    }
    return external;
  }

  private interface Starter<T extends AutoCloseable> {
    T start() throws IOException;
  }

  private static <T extends AutoCloseable> T start(Starter<T> starter) {
    T store;
    try {
      store = starter.start();
    } catch (IOException e) {
      throw new UncheckedIOException("test store failed to start: " + e.getMessage(), e);
    }
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  try {
                    store.close();
                  } catch (Exception ignored) {
                    // the JVM is exiting
                  }
                },
                "writeonce-store-shutdown"));
    return store;
  }
}
