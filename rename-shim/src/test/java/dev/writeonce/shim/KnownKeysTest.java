package dev.writeonce.shim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.model.PendingFile;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.testing.ForwardingStore;
import dev.writeonce.core.testing.InMemoryStore;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The cache's rules, one test each: see the class comment of {@link KnownKeys}. */
class KnownKeysTest {

  private static final long WINDOW_MILLIS = 1_000;

  private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
  private final InMemoryStore store = new InMemoryStore("b");
  private final ShimStatistics counters = new ShimStatistics();
  private KnownKeys known;

  @BeforeEach
  void start() {
    known = new KnownKeys(WINDOW_MILLIS, nanos::get);
  }

  private void put(String key) throws StoreException {
    store.putObject(key, new byte[] {1}, false);
  }

  private void advanceMillis(long millis) {
    nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(millis));
  }

  /** One operation of this JVM, as the bracket runs it. */
  private void change(List<String> keys, java.util.function.Consumer<KnownKeys.Report> report) {
    known.begin(keys);
    KnownKeys.Report outcome = new KnownKeys.Report();
    report.accept(outcome);
    known.end(keys, outcome);
  }

  @Test
  void aCompleteListingAnswersForItsChildrenAndWhatLiesBelowAnAbsentOne() throws Exception {
    put("out/a");
    put("out/p=1/b");
    long before = store.counters().total();

    assertThat(known.listDirectory(store, "out", 1000, counters)).isTrue();

    assertThat(known.answer("out/a").isFile()).isTrue();
    assertThat(known.answer("out/p=1").isDirectory()).isTrue();
    assertThat(known.answer("out/c").isAbsent()).isTrue();
    assertThat(known.answer("out/p=2/c").isAbsent()).as("below an absent child").isTrue();
    assertThat(known.answer("out/p=1/b").isUnknown())
        .as("below a directory it shows, a delimited listing tells nothing")
        .isTrue();
    assertThat(store.counters().total() - before).as("one LIST").isEqualTo(1);
  }

  /**
   * A listing of the table, kept from the job commit of a write a moment ago, cannot tell what lies
   * under the staging directory the next write changes: it must not hide the record this JVM wrote
   * there (Spark's statistics read each file's status right after closing it).
   */
  @Test
  void aListingAboveThatCannotTellLeavesTheAnswerToWhatThisJvmWrote() throws Exception {
    put("out/old");
    known.listDirectory(store, "out", 1000, counters);
    String attempt = "out/.spark-staging-1/_temporary/0/_temporary/attempt_1_0001_m_000000_0";
    change(List.of("out/.spark-staging-1"), outcome -> outcome.unsure("out/.spark-staging-1"));
    String file = attempt + "/p=0/part-0";
    PendingFile record =
        new PendingFile(
            "b",
            "out/p=0/part-0",
            "u1",
            List.of(new dev.writeonce.core.model.UploadPart(1, "p1", 300)),
            "attempt_1_0001_m_000000_0",
            true,
            0);
    known.recordWritten(file, record, new ObjectInfo(file, 300, "e1", 0));

    assertThat(known.answer(file).record()).isEqualTo(record);
    assertThat(known.answer(attempt).isDirectory()).isTrue();
  }

  @Test
  void aDirectoryOfMoreChildrenThanAllowedIsNotKept() throws Exception {
    for (int i = 0; i < 5; i++) {
      put("out/f" + i);
    }

    assertThat(known.listDirectory(store, "out", 4, counters)).isFalse();
    assertThat(known.answer("out/g").isUnknown()).isTrue();
  }

  @Test
  void whatTheStoreToldAnswersForOneWindowFromWhenTheRequestWasSent() throws Exception {
    put("out/a");
    known.listDirectory(store, "out", 1000, counters);

    advanceMillis(WINDOW_MILLIS - 1);
    assertThat(known.answer("out/b").isAbsent()).isTrue();
    advanceMillis(1);
    assertThat(known.answer("out/b").isUnknown()).as("past the window").isTrue();
  }

  @Test
  void aChangeOfThisJvmIsAppliedToTheListingsItConcerns() throws Exception {
    put("out/a");
    known.listDirectory(store, "out", 1000, counters);

    change(
        List.of("out/b"),
        outcome -> {
          outcome.wrote("out/b", null);
          outcome.succeeded();
        });
    change(
        List.of("out/a"),
        outcome -> {
          outcome.removed("out/a");
          outcome.succeeded();
        });

    assertThat(known.answer("out/b").isFile()).isTrue();
    assertThat(known.answer("out/a").isAbsent()).isTrue();
  }

  @Test
  void aChangeWhileAListingIsOnTheWireIsReplayedOnItBeforeItIsKept() throws Exception {
    put("out/a");
    put("out/old");
    // The store answers the LIST, then, before the answer arrives, this JVM writes out/b and
    // removes out/old.
    ForwardingStore racing =
        new ForwardingStore(store) {
          @Override
          public List<String> listChildren(String prefix, int maxEntries) throws StoreException {
            List<String> answer = store.listChildren(prefix, maxEntries);
            change(
                List.of("out/b"),
                outcome -> {
                  outcome.wrote("out/b", null);
                  outcome.succeeded();
                });
            change(
                List.of("out/old"),
                outcome -> {
                  outcome.removed("out/old");
                  outcome.succeeded();
                });
            return answer;
          }
        };

    assertThat(known.listDirectory(racing, "out", 1000, counters)).isTrue();

    assertThat(known.answer("out/b").isFile()).as("written while the listing travelled").isTrue();
    assertThat(known.answer("out/old").isAbsent()).as("removed while it travelled").isTrue();
    assertThat(known.answer("out/a").isFile()).isTrue();
  }

  @Test
  void aDirectoryRemovedWhileAListingOfItsParentTravelledIsNotShownByIt() throws Exception {
    put("out/p=1/a");
    ForwardingStore racing =
        new ForwardingStore(store) {
          @Override
          public List<String> listChildren(String prefix, int maxEntries) throws StoreException {
            List<String> answer = store.listChildren(prefix, maxEntries);
            change(
                List.of("out/p=1"),
                outcome -> {
                  outcome.removed("out/p=1");
                  outcome.succeeded();
                });
            return answer;
          }
        };

    known.listDirectory(racing, "out", 1000, counters);

    assertThat(known.answer("out/p=1").isAbsent()).isTrue();
    assertThat(known.answer("out/p=1/a").isAbsent()).isTrue();
  }

  @Test
  void aKeyAnOperationIsChangingIsUnknownUntilItEndsAndUnknownAfterwardWhenItFailed()
      throws Exception {
    put("out/a");
    known.listDirectory(store, "out", 1000, counters);

    known.begin(List.of("out/b"));
    assertThat(known.answer("out/b").isUnknown()).as("changing").isTrue();
    known.end(List.of("out/b"), new KnownKeys.Report()); // failed: no outcome reported

    assertThat(known.answer("out/b").isUnknown()).as("an unknown outcome").isTrue();
    assertThat(known.answer("out/c").isAbsent()).as("the rest of the listing stands").isTrue();
  }

  @Test
  void aQueuedDestinationIsAFileWithDirectoriesAboveItUntilItsCompletionFails() throws Exception {
    known.listDirectory(store, "out", 1000, counters);

    known.promise("out/p=1/a");
    assertThat(known.answer("out/p=1/a").isFile()).isTrue();
    assertThat(known.answer("out/p=1").isDirectory()).isTrue();

    known.promiseEnded("out/p=1/a", false);
    assertThat(known.answer("out/p=1/a").isUnknown()).isTrue();
  }

  @Test
  void aQueuedDestinationIsShownByAListingSentBeforeItLanded() throws Exception {
    known.promise("out/a");
    known.listDirectory(store, "out", 1000, counters); // the store has nothing yet

    known.promiseEnded("out/a", true);
    assertThat(known.answer("out/a").isFile()).isTrue();
  }

  @Test
  void theStoreReportingAKeyAbsentAnswersForTheWindowUnlessThisJvmChangedItSince()
      throws Exception {
    KnownKeys.Ticket first = known.onTheWire();
    first.reportAbsent("out/a");
    first.close();
    assertThat(known.answer("out/a").isAbsent()).isTrue();

    KnownKeys.Ticket second = known.onTheWire();
    change(
        List.of("out/b"),
        outcome -> {
          outcome.wrote("out/b", null);
          outcome.succeeded();
        });
    second.reportAbsent("out/b");
    second.close();
    assertThat(known.answer("out/b").isFile()).as("written after the request was sent").isTrue();
  }

  @Test
  void whatThisJvmWroteIsNeverReportedAbsentPastTheWindow() throws Exception {
    change(
        List.of("out/a"),
        outcome -> {
          outcome.wrote("out/a", null);
          outcome.succeeded();
        });
    advanceMillis(10 * WINDOW_MILLIS);

    assertThat(known.answer("out/a").isFile()).isTrue();
    assertThat(known.answer("out").isDirectory()).isTrue();
  }

  @Test
  void aDirectoryRenamedIntoAnAbsentPlaceGetsListingsOfWhatItPutThere() throws Exception {
    put("out/x");
    known.listDirectory(store, "out", 1000, counters);

    change(
        List.of("out/_temporary/0/task_1/p=1", "out/p=1"),
        outcome -> {
          outcome.removed("out/_temporary/0/task_1/p=1");
          outcome.tree(
              "out/p=1",
              List.of(
                  new ObjectInfo("out/p=1/a", -1, null, 0),
                  new ObjectInfo("out/p=1/q=2/b", -1, null, 0)));
          outcome.succeeded();
        });

    assertThat(known.answer("out/p=1").isDirectory()).isTrue();
    assertThat(known.answer("out/p=1/a").isFile()).isTrue();
    assertThat(known.answer("out/p=1/c").isAbsent()).as("nothing else is there").isTrue();
    assertThat(known.answer("out/p=1/q=2/c").isAbsent()).isTrue();
  }

  @Test
  void aFlatListingGivesEveryDirectoryInItAListingAndSkipsTheTemporaryDirectory() throws Exception {
    put("out/p=1/a");
    put("out/p=2/q=1/b");
    put("out/_temporary/0/task_1/p=1/c");

    assertThat(known.listTree(store, "out", 100, "_temporary", List.of("out/p=3"), counters))
        .isTrue();

    assertThat(known.answer("out/p=2/q=1/b").isFile()).isTrue();
    assertThat(known.answer("out/p=1/z").isAbsent()).isTrue();
    assertThat(known.answer("out/p=3/z").isAbsent()).isTrue();
    assertThat(known.answer("out/_temporary").isUnknown()).as("skipped, not listed").isTrue();
    assertThat(known.answer("out/_temporary/0/task_1/p=1/c").isUnknown()).isTrue();
  }

  @Test
  void aRecordIsRememberedWithItsObjectAndRecognisedByItsEtag() throws Exception {
    PendingFile record = PendingFile.writing("b", "out/a", "upload-1", "attempt_1", 0);
    known.recordWritten("out/_temporary/0/task_1/a", record, new ObjectInfo("k", 10, "e1", 0));

    assertThat(known.record("out/_temporary/0/task_1/a")).contains(record);
    assertThat(known.record("out/_temporary/0/task_1/a", "e1")).contains(record);
    assertThat(known.record("out/_temporary/0/task_1/a", "other")).isEqualTo(Optional.empty());
    assertThat(known.answer("out/_temporary/0/task_1").isDirectory())
        .as("a directory holding a known record exists")
        .isTrue();
  }

  @Test
  void theBoundForgetsTheOldestKnowledgeAndKeepsAnswersRightOrUnknown() throws Exception {
    for (int i = 0; i < KnownKeys.MAX_ENTRIES + 10; i++) {
      String key = "out/f" + i;
      change(
          List.of(key),
          outcome -> {
            outcome.wrote(key, null);
            outcome.succeeded();
          });
    }

    assertThat(known.entries()).isLessThanOrEqualTo(KnownKeys.MAX_ENTRIES);
    assertThat(known.answer("out/f0").isAbsent()).as("forgotten, never absent").isFalse();
    assertThat(known.answer("out/f" + (KnownKeys.MAX_ENTRIES + 9)).isFile()).isTrue();
  }
}
