package dev.writeonce.core.model;

import java.util.List;
import java.util.Objects;

/**
 * What a statement in metastore publish mode recorded for removal, in {@code
 * <table>/_generations/_retired/<run>}: objects by key and ETag, as the statement wrote or read
 * them, never a directory another statement or table could share. A later statement acts on the
 * record once it is older than the grace period on the store's clock.
 *
 * @param run the run the record belongs to: its generation is {@code _generations/<run>/}
 * @param table the table, {@code database.table}, for operators
 * @param state what the record says
 * @param own the run's own objects: its files, copies and empty directories (pending records); in a
 *     superseded record, objects another table named when last seen, held until none does
 * @param superseded the objects the run's metastore call takes, or took, out of the table
 * @param leaseMillis for a claim: how long after its last write (the store's time) it lapses; the
 *     statement rewrites it every quarter of that while it runs. 0 for the other states
 * @param renewal how often a claim was rewritten: every write changes the record, so that a removal
 *     conditional on the version it read fails once the statement has renewed it
 * @param graceMillis the grace period of the statement that wrote the record: a removal waits the
 *     longer of it and its own, so that a writer with a shorter setting does not cut it short
 */
public record RetireRecord(
    String run,
    String table,
    State state,
    List<RetiredObject> own,
    List<RetiredObject> superseded,
    long leaseMillis,
    long renewal,
    long graceMillis) {

  /** What a record says, and so what a later statement does once it is due. */
  public enum State {
    /**
     * Written when the statement starts, before anything lands in its generation, and renewed under
     * a lease while it runs: the directory {@code _generations/<run>/} is the run's. Once lapsed
     * and older than the grace period, and named by no location, what that directory holds then
     * (its statement died before publishing) is recorded as superseded.
     */
    CLAIMED,
    /**
     * Written right before the run's metastore call: its own objects, and those its call takes out
     * of the table. While a location names any of its own objects it waits (the call landed and its
     * statement never wrote its end); once none does, all of them become superseded and the grace
     * starts again, since readers may have read them until then.
     */
    PENDING,
    /** Objects out of the table: removed once due, each only while its ETag still matches. */
    SUPERSEDED
  }

  /** One object of a record: its key in the table's bucket and its ETag, unquoted. */
  public record RetiredObject(String key, String etag) {
    public RetiredObject {
      Objects.requireNonNull(key, "key");
      Objects.requireNonNull(etag, "etag");
    }
  }

  public RetireRecord {
    Objects.requireNonNull(run, "run");
    Objects.requireNonNull(table, "table");
    Objects.requireNonNull(state, "state");
    own = List.copyOf(own);
    superseded = List.copyOf(superseded);
  }

  /** A record of one of the states that hold objects, not a claim. */
  public RetireRecord(
      String run,
      String table,
      State state,
      List<RetiredObject> own,
      List<RetiredObject> superseded,
      long graceMillis) {
    this(run, table, state, own, superseded, 0, 0, graceMillis);
  }
}
