package dev.writeonce.shim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.store.RequestType;
import dev.writeonce.core.store.StoreGateway;
import dev.writeonce.core.testing.InMemoryStore;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class DestinationListingsTest {

  private static final long WINDOW_MILLIS = 1_000;

  private final InMemoryStore store = new InMemoryStore("bucket");
  private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
  private final ShimStatistics counters = new ShimStatistics();
  private final DestinationListings listings =
      new DestinationListings(store, WINDOW_MILLIS, nanos::get, counters);

  private void advanceMillis(long millis) {
    nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(millis));
  }

  private long lists() {
    return store.counters().snapshot().getOrDefault(RequestType.LIST_OBJECTS, 0L);
  }

  @Test
  void childrenTheListingDoesNotShowAreAbsentAndThoseItShowsAreLeftToTheStore() throws Exception {
    store.putObject("out/part-0", new byte[] {1}, false);
    store.putObject("out/p=1/part-1", new byte[] {1}, false);

    listings.list("out");

    assertThat(listings.knownAbsent("out/part-0")).isFalse();
    assertThat(listings.knownAbsent("out/p=1")).as("a directory").isFalse();
    assertThat(listings.knownAbsent("out/part-2")).isTrue();
    assertThat(listings.knownAbsent("elsewhere/part-2")).as("a directory not listed").isFalse();
    assertThat(lists()).isEqualTo(1);
    assertThat(counters.destinationChecksFromListing()).isEqualTo(1);
  }

  @Test
  void aFileAnotherWriterCreatesAfterTheListingIsReportedAbsentOnlyWithinTheWindow()
      throws Exception {
    listings.list("out");
    store.putObject("out/part-0", new byte[] {1}, false);

    advanceMillis(WINDOW_MILLIS - 1);
    assertThat(listings.knownAbsent("out/part-0")).as("the stated bound").isTrue();

    // Past the window the listing is read again, since checks are still going: it shows the file.
    advanceMillis(1);
    assertThat(listings.knownAbsent("out/part-0")).isFalse();
    assertThat(lists()).isEqualTo(2);
  }

  @Test
  void aListingNoCheckUsedForAWindowIsDroppedNotReadAgain() throws Exception {
    listings.list("out");

    advanceMillis(2 * WINDOW_MILLIS);

    assertThat(listings.knownAbsent("out/part-0")).isFalse();
    assertThat(lists()).as("no LIST for a merge that ended").isEqualTo(1);
  }

  @Test
  void whatThisInstanceWritesIsNeverReportedAbsentEvenAfterTheListingIsReadAgain()
      throws Exception {
    listings.list("out");
    listings.wrote("out/part-0"); // a rename whose completion is still on the wire
    listings.wrote("out/p=1/part-1"); // a file created in a new directory
    listings.wrote("out/moved"); // a directory renamed into place

    assertThat(listings.knownAbsent("out/part-0")).isFalse();
    assertThat(listings.knownAbsent("out/p=1")).isFalse();
    listings.list("out/moved");
    assertThat(listings.knownAbsent("out/moved/part-2")).as("brought by the rename").isFalse();

    advanceMillis(WINDOW_MILLIS / 2);
    assertThat(listings.knownAbsent("out/part-1")).isTrue(); // keeps the listing in use
    advanceMillis(WINDOW_MILLIS);
    // Read again while the completion was still landing: the listing misses it, the memory not.
    assertThat(listings.knownAbsent("out/part-0")).isFalse();
    assertThat(listings.knownAbsent("out/p=1")).isFalse();
  }

  @Test
  void aDirectoryRenamedIntoPlaceBeforeTheListingWasSentIsShownByIt() throws Exception {
    // FileOutputCommitter's merge of a first task moves a partition directory whole; the merges of
    // later tasks list it afterwards, and that listing shows what the rename brought.
    listings.wrote("out/p=1");
    advanceMillis(1);
    listings.list("out/p=1");
    assertThat(listings.knownAbsent("out/p=1/part-2")).isTrue();

    listings.wrote("out/p=1"); // renamed onto again, after the listing
    assertThat(listings.knownAbsent("out/p=1/part-3")).isFalse();
  }

  @Test
  void theMergesOfSeveralTasksIntoOneDirectoryShareItsListingWithinTheWindow() throws Exception {
    listings.listUnlessFresh("out/p=1");
    listings.wrote("out/p=1/part-0"); // the first task's file
    advanceMillis(WINDOW_MILLIS / 2);
    listings.listUnlessFresh("out/p=1"); // the second task's merge
    assertThat(lists()).isEqualTo(1);
    assertThat(listings.knownAbsent("out/p=1/part-1")).isTrue();
    assertThat(listings.knownAbsent("out/p=1/part-0")).isFalse();

    advanceMillis(WINDOW_MILLIS);
    listings.listUnlessFresh("out/p=1");
    assertThat(lists()).isEqualTo(2);
  }

  @Test
  void aDirectoryOfMoreThanOnePageIsNotKept() throws Exception {
    for (int i = 0; i < DestinationListings.MAX_CHILDREN; i++) {
      store.putObject("big/part-" + i, new byte[] {1}, false);
    }

    listings.list("big");

    assertThat(listings.knownAbsent("big/part-new")).isFalse();
  }

  @Test
  void aZeroWindowListsNothing() throws Exception {
    DestinationListings off = new DestinationListings(store, 0, nanos::get, counters);

    off.list("out");

    assertThat(off.knownAbsent("out/part-0")).isFalse();
    assertThat(lists()).isZero();
  }

  @Test
  void aDirectoryTheListingShowsIsKnownUntilThisInstanceRemovesSomethingUnderIt() throws Exception {
    store.putObject("out/p=1/part-0", new byte[] {1}, false);
    store.putObject("out/part-9", new byte[] {1}, false);
    listings.list("out");

    assertThat(listings.knownDirectory("out/p=1")).isTrue();
    assertThat(listings.knownDirectory("out/part-9")).as("a file").isFalse();
    assertThat(listings.knownDirectory("out/p=2")).as("not listed").isFalse();

    // Deleting its only file may take the directory with it: the store is asked again.
    listings.removed("out/p=1/part-0");
    assertThat(listings.knownDirectory("out/p=1")).isFalse();
    assertThat(listings.knownAbsent("out/p=1")).as("nor reported absent").isFalse();
    assertThat(counters.destinationDirectoriesFromListing()).isEqualTo(1);
  }

  @Test
  void removingADirectoryDropsTheListingsUnderIt() throws Exception {
    listings.list("out/p=1");

    listings.removed("out");

    assertThat(listings.knownAbsent("out/p=1/part-0")).isFalse();
    assertThat(lists()).isEqualTo(1);
  }

  /**
   * The same store, through a gateway that runs {@code duringListing} after the store answered a
   * listing and before that answer reaches the listings: a delete that overtakes it on the wire.
   */
  private StoreGateway racingListings(Runnable duringListing) {
    InvocationHandler handler =
        (proxy, method, args) -> {
          Object answer;
          try {
            answer = method.invoke(store, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
          if (method.getName().equals("listChildren")) {
            duringListing.run();
          }
          return answer;
        };
    return (StoreGateway)
        Proxy.newProxyInstance(
            StoreGateway.class.getClassLoader(), new Class<?>[] {StoreGateway.class}, handler);
  }

  @Test
  void aDirectoryDeletedWhileAListingWasOnTheWireIsNotReportedByThatListing() throws Exception {
    store.putObject("out/p=1/part-0", new byte[] {1}, false);
    store.putObject("out/p=2/part-0", new byte[] {1}, false);
    store.putObject("out/p=2/sub/part-0", new byte[] {1}, false);
    AtomicReference<DestinationListings> racing = new AtomicReference<>();
    AtomicReference<String> deleting = new AtomicReference<>();
    racing.set(
        new DestinationListings(
            racingListings(
                () -> {
                  String key = deleting.get();
                  // The shim's delete: removed when it starts, the objects go, removed when it
                  // ends.
                  advanceMillis(1);
                  racing.get().removed(key);
                  store.deleteObjects(
                      store.keys().stream().filter(k -> k.startsWith(key + "/")).toList());
                  advanceMillis(1);
                  racing.get().removed(key);
                }),
            WINDOW_MILLIS,
            nanos::get,
            counters));

    deleting.set("out/p=1");
    racing.get().list("out");
    assertThat(racing.get().knownDirectory("out/p=1")).as("deleted under the listing").isFalse();
    assertThat(racing.get().knownDirectory("out/p=2")).as("untouched").isTrue();

    deleting.set("out/p=2");
    racing.get().list("out/p=2");
    assertThat(racing.get().knownDirectory("out/p=2/sub")).as("below a deleted one").isFalse();
    assertThat(store.keys()).isEmpty();
  }

  @Test
  void listingsNoCheckUsesAnyMoreAreDroppedWhenAnotherIsMade() throws Exception {
    for (int day = 0; day < 100; day++) {
      listings.list("out/day=" + day);
      advanceMillis(WINDOW_MILLIS);
    }

    assertThat(listings.listingsKept()).isEqualTo(1);
  }

  @Test
  void listingsOfWholeOutputsNoCheckUsesAnyMoreAreDroppedWhenAnotherIsMade() throws Exception {
    for (int table = 0; table < 20; table++) {
      store.putObject("t" + table + "/p=1/part-0", new byte[] {1}, false);
      listings.listTreeForMerge("t" + table, 5_000, List.of("t" + table + "/p=1"), null);
      advanceMillis(WINDOW_MILLIS);
    }

    assertThat(listings.listingsKept()).as("the last output and its directory").isEqualTo(2);
  }

  @Test
  void aDirectoryOfAnOutputListedWholeWhoseListingRanOutGetsTheOutputListedAgainOnce()
      throws Exception {
    store.putObject("out/p=1/part-0", new byte[] {1}, false);
    store.putObject("out/p=2/part-0", new byte[] {1}, false);
    store.putObject("out/_temporary/0/task_1/p=1/part-1", new byte[] {1}, false);
    assertThat(listings.listTreeForMerge("out", 5_000, List.of("out/p=1", "out/p=2"), "_temporary"))
        .isTrue();

    // A task's merge outlasts the window: the next directory's check finds its listing old.
    advanceMillis(WINDOW_MILLIS);
    long before = lists();
    listings.listUnlessFresh("out/p=1");
    listings.listUnlessFresh("out/p=2");

    assertThat(lists() - before).as("the output, once, for both").isEqualTo(1);
    assertThat(listings.knownAbsent("out/p=2/part-1")).isTrue();
    assertThat(listings.knownAbsent("out/_temporary"))
        .as("the skipped directory is shown present")
        .isFalse();
    assertThat(listings.knownDirectory("out/_temporary"))
        .as("but nothing is answered for it")
        .isFalse();

    // A merge whose rules put files inside the skipped directory learns nothing of it.
    assertThat(
            listings.listTreeForMerge(
                "out", 5_000, List.of("out/_temporary/0/task_1/p=1"), "_temporary"))
        .isTrue();
    assertThat(listings.knownAbsent("out/_temporary/0/task_1/p=1/part-1")).isFalse();
  }
}
