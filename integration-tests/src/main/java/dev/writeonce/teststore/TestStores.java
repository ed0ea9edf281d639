package dev.writeonce.teststore;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The registry of the suite's stores. Each is started at most once per JVM, on first use, and
 * stopped when the JVM exits. A store that cannot start fails the suites that asked for it: the
 * suite never skips a missing store. Adding a store is one {@link TestStore} class and one line in
 * {@link #REGISTERED}.
 */
public final class TestStores {

  /**
   * The system property naming the stores the suites run on, in failsafe's tag syntax: {@code minio
   * | ceph-rgw | seaweedfs}. The build sets it from the {@code it.stores} property.
   */
  public static final String SELECTED_PROPERTY = "writeonce.it.stores";

  /** The store a suite runs on when the property is unset, as when one test runs in an IDE. */
  private static final String DEFAULT_SELECTION = "minio";

  private static final Map<String, Starter> REGISTERED = new LinkedHashMap<>();

  static {
    REGISTERED.put("minio", TestStores::startMinio);
    REGISTERED.put("ceph-rgw", CephRgw::start);
    REGISTERED.put("seaweedfs", SeaweedFs::start);
    REGISTERED.put("external", ExternalStore::fromEnvironment);
  }

  private static final Map<String, TestStore> STARTED = new HashMap<>();

  /** Why a store failed to start: every later suite fails at once with it, without a retry. */
  private static final Map<String, RuntimeException> FAILED = new HashMap<>();

  private TestStores() {}

  /** Starts a store, the first time it is asked for. */
  private interface Starter {
    TestStore start() throws IOException;
  }

  /** The store registered under this name, started if it is not yet. */
  public static synchronized TestStore get(String name) {
    TestStore store = STARTED.get(name);
    if (store != null) {
      return store;
    }
    Starter starter = REGISTERED.get(name);
    if (starter == null) {
      throw new IllegalArgumentException(unknown(name));
    }
    RuntimeException failed = FAILED.get(name);
    if (failed != null) {
      throw new IllegalStateException("test store '" + name + "' failed to start earlier", failed);
    }
    try {
      store = start(starter);
    } catch (RuntimeException e) {
      FAILED.put(name, e);
      throw e;
    }
    STARTED.put(name, store);
    return store;
  }

  /**
   * The stores {@link #SELECTED_PROPERTY} names, in its order: names separated by {@code |}, {@code
   * ,} or spaces, as failsafe's {@code groups} takes them.
   */
  public static List<String> selected() {
    String selection = System.getProperty(SELECTED_PROPERTY, DEFAULT_SELECTION);
    List<String> names = new ArrayList<>();
    for (String name : selection.split("[|,\\s]+")) {
      if (name.isEmpty() || names.contains(name)) {
        continue;
      }
      if (!REGISTERED.containsKey(name)) {
        throw new IllegalArgumentException(
            SELECTED_PROPERTY + "=" + selection + ": " + unknown(name));
      }
      names.add(name);
    }
    if (names.isEmpty()) {
      throw new IllegalArgumentException(
          SELECTED_PROPERTY + "=" + selection + " names no store; known: " + REGISTERED.keySet());
    }
    return names;
  }

  private static String unknown(String name) {
    return "no test store is registered as '"
        + name
        + "'; known: "
        + REGISTERED.keySet()
        + " (set them with -Dit.stores=...)";
  }

  /** A local MinIO server process, provisioned from the pinned version. */
  public static TestStore minio() {
    return get("minio");
  }

  /**
   * MinIO as a local process, or as a container when {@code WRITEONCE_MINIO_MODE=container} and a
   * Docker engine runs.
   */
  private static TestStore startMinio() throws IOException {
    String mode = System.getenv().getOrDefault("WRITEONCE_MINIO_MODE", "process");
    return switch (mode) {
      case "process" -> LocalMinio.start();
      case "container" -> ContainerMinio.start();
      default ->
          throw new IOException(
              "WRITEONCE_MINIO_MODE=" + mode + " is not understood: use process or container");
    };
  }

  private static TestStore start(Starter starter) {
    TestStore store;
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
    StoreChecks.checkAtStart(store);
    return store;
  }
}
