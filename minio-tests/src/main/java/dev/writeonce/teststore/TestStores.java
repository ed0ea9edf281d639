package dev.writeonce.teststore;

import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * The stores of the suite, each started at most once per JVM and stopped when it exits. A store
 * that cannot start fails the test that asked for it: the suite never skips a missing store.
 */
public final class TestStores {

  private static TestStore minio;
  private static TestStore cephRgw;
  private static TestStore external;

  private TestStores() {}

  /**
   * A local MinIO server process, provisioned from the pinned version; a container instead when
   * {@code WRITEONCE_MINIO_MODE=container} and a Docker engine runs.
   */
  public static synchronized TestStore minio() {
    if (minio == null) {
      String mode = System.getenv().getOrDefault("WRITEONCE_MINIO_MODE", "process");
      minio =
          switch (mode) {
            case "process" -> start(LocalMinio::start);
            case "container" -> start(ContainerMinio::start);
            default ->
                throw new IllegalStateException(
                    "WRITEONCE_MINIO_MODE="
                        + mode
                        + " is not understood: use process or container");
          };
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

  private interface Starter<T extends TestStore> {
    T start() throws IOException;
  }

  private static <T extends TestStore> T start(Starter<T> starter) {
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
