package dev.writeonce.teststore;

/**
 * An {@link EachStore} suite with {@code @TestInstance(PER_CLASS)} that holds state for the store
 * it runs on across its tests (a Spark session, an embedded Hive). JUnit makes one instance for all
 * of a class template's runs and runs {@code @BeforeAll} once for all of them, so such a suite
 * starts and stops its state here instead, once per store.
 */
public interface StoreLifecycle {

  /** Before the suite's tests on this store. */
  void startOn(TestStore store) throws Exception;

  /** After the suite's tests on this store, also when one of them failed. */
  void stopOn(TestStore store) throws Exception;
}
