package dev.writeonce.core.simulation;

import dev.writeonce.core.testing.simulation.Plan;
import dev.writeonce.core.testing.simulation.Scheduler;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;

/**
 * One schedule of statements publishing to one partitioned catalog table in metastore publish mode,
 * generated from a seed: Spark and Hive statements (appends, dynamic and static overwrites, Hive
 * loads in place) running at once, each possibly crashing at a store request, pausing past its
 * lease, losing the answer of its metastore call or failing it; renewals and other requests failing
 * with 503s or losing their answers; another table whose location is, or lies under, a location the
 * table supersedes; an outside writer adding files to live and superseded locations. The
 * interleaving comes from the same seed, in the {@link Scheduler}. Plans shrink: {@link #simpler}.
 *
 * @param owned whether the table owns its location (a managed table), or is external
 * @param other where another table of the metastore lies, if anywhere
 * @param outsideWrites files an outside writer adds while the statements run
 * @param deleteIfMatchIgnored whether the store ignores If-Match on DELETE (MinIO, Ceph RGW 16)
 */
record PublicationPlan(
    long seed,
    boolean owned,
    OtherTable other,
    List<StatementPlan> statements,
    int outsideWrites,
    double transientRate,
    double lostAnswerRate,
    boolean deleteIfMatchIgnored)
    implements Plan<PublicationPlan> {

  static final List<String> PARTITIONS = List.of("p=0", "p=1", "p=2", "p=3");

  /** Another table of the metastore, sharing names with this one. */
  enum OtherTable {
    NONE,
    /** An external table at the directory of the table's first partition, before any statement. */
    AT_FIRST_PARTITION,
    /** An external table at a directory inside the table's first partition. */
    UNDER_FIRST_PARTITION,
    /** Created while statements run, at the location the second partition has at that moment. */
    AT_LIVE_LOCATION
  }

  enum Engine {
    SPARK,
    HIVE
  }

  enum Verb {
    /** INSERT INTO: the partitions' current files are kept. */
    APPEND,
    /** Dynamic partition overwrite: the written partitions are replaced. */
    DYNAMIC,
    /** Static overwrite of the whole table: partitions not written are emptied. */
    STATIC,
    /** A Hive load the mode does in place (a conditional merge, LOAD DATA): one file added. */
    IN_PLACE
  }

  /** What the metastore does with a statement's publishing call. */
  enum CallFault {
    NONE,
    /** The call fails before it changes anything. */
    FAILS,
    /** The call lands and its answer is lost. */
    ANSWER_LOST,
    /** The process dies once the call landed. */
    CRASH_AFTER
  }

  /**
   * A statement: its engine and verb, the partitions it writes, how long after the schedule starts
   * it begins (store clock), the store request it crashes at and the one it pauses past its lease
   * at (0: never), what happens to its metastore call, and whether a failure is cleaned up by its
   * failure path (Hive's failure hook, Spark's abort) or left, as by a process that died.
   */
  record StatementPlan(
      int index,
      Engine engine,
      Verb verb,
      Set<String> partitions,
      long startAfterMillis,
      int crashAt,
      int pauseAt,
      CallFault callFault,
      boolean failsCleanly) {

    StatementPlan with(int crash, int pause, CallFault fault) {
      return new StatementPlan(
          index, engine, verb, partitions, startAfterMillis, crash, pause, fault, failsCleanly);
    }

    String run() {
      return "run-" + index;
    }
  }

  /** Simulated times: the publication lock's lease and the grace of superseded generations. */
  static final long LEASE_MILLIS = 20_000;

  static final long GRACE_MILLIS = 40_000;

  static PublicationPlan generate(long seed) {
    Random random = new Random(seed);
    int count = 2 + random.nextInt(3);
    List<StatementPlan> statements = new ArrayList<>();
    for (int s = 0; s < count; s++) {
      Engine engine = random.nextBoolean() ? Engine.SPARK : Engine.HIVE;
      Verb verb;
      int roll = random.nextInt(10);
      if (roll < 4) {
        verb = Verb.APPEND;
      } else if (roll < 6) {
        verb = Verb.DYNAMIC;
      } else if (roll < 8) {
        verb = Verb.STATIC;
      } else {
        verb = engine == Engine.HIVE ? Verb.IN_PLACE : Verb.APPEND;
      }
      Set<String> partitions = new TreeSet<>();
      int written = verb == Verb.IN_PLACE ? 1 : 1 + random.nextInt(3);
      while (partitions.size() < written) {
        partitions.add(PARTITIONS.get(random.nextInt(PARTITIONS.size())));
      }
      CallFault fault =
          random.nextInt(4) == 0
              ? CallFault.values()[1 + random.nextInt(CallFault.values().length - 1)]
              : CallFault.NONE;
      statements.add(
          new StatementPlan(
              s,
              engine,
              verb,
              partitions,
              random.nextInt(3) == 0 ? 0 : random.nextInt((int) (3 * GRACE_MILLIS)),
              random.nextInt(4) == 0 ? 1 + random.nextInt(30) : 0,
              random.nextInt(4) == 0 ? 1 + random.nextInt(25) : 0,
              fault,
              random.nextBoolean()));
    }
    OtherTable other = OtherTable.values()[random.nextInt(OtherTable.values().length)];
    return new PublicationPlan(
        seed,
        random.nextBoolean(),
        other,
        statements,
        random.nextInt(3) == 0 ? 1 + random.nextInt(4) : 0,
        random.nextInt(3) == 0 ? 0.04 : 0,
        random.nextInt(3) == 0 ? 0.04 : 0,
        random.nextBoolean());
  }

  /** Plans one step simpler than this one, for shrinking a failing schedule. */
  @Override
  public List<PublicationPlan> simpler() {
    List<PublicationPlan> simpler = new ArrayList<>();
    if (transientRate > 0) {
      simpler.add(with(statements, 0, lostAnswerRate, other, outsideWrites));
    }
    if (lostAnswerRate > 0) {
      simpler.add(with(statements, transientRate, 0, other, outsideWrites));
    }
    if (other != OtherTable.NONE) {
      simpler.add(with(statements, transientRate, lostAnswerRate, OtherTable.NONE, outsideWrites));
    }
    if (outsideWrites > 0) {
      simpler.add(with(statements, transientRate, lostAnswerRate, other, outsideWrites - 1));
    }
    for (int s = 0; s < statements.size(); s++) {
      StatementPlan statement = statements.get(s);
      if (statements.size() > 1) {
        List<StatementPlan> fewer = new ArrayList<>(statements);
        fewer.remove(s);
        simpler.add(with(fewer, transientRate, lostAnswerRate, other, outsideWrites));
      }
      if (statement.crashAt() != 0) {
        simpler.add(replace(s, statement.with(0, statement.pauseAt(), statement.callFault())));
      }
      if (statement.pauseAt() != 0) {
        simpler.add(replace(s, statement.with(statement.crashAt(), 0, statement.callFault())));
      }
      if (statement.callFault() != CallFault.NONE) {
        simpler.add(
            replace(s, statement.with(statement.crashAt(), statement.pauseAt(), CallFault.NONE)));
      }
      if (statement.startAfterMillis() != 0) {
        simpler.add(
            replace(
                s,
                new StatementPlan(
                    statement.index(),
                    statement.engine(),
                    statement.verb(),
                    statement.partitions(),
                    0,
                    statement.crashAt(),
                    statement.pauseAt(),
                    statement.callFault(),
                    statement.failsCleanly())));
      }
      if (statement.partitions().size() > 1) {
        for (String partition : statement.partitions()) {
          Set<String> fewer = new TreeSet<>(statement.partitions());
          fewer.remove(partition);
          simpler.add(
              replace(
                  s,
                  new StatementPlan(
                      statement.index(),
                      statement.engine(),
                      statement.verb(),
                      fewer,
                      statement.startAfterMillis(),
                      statement.crashAt(),
                      statement.pauseAt(),
                      statement.callFault(),
                      statement.failsCleanly())));
        }
      }
    }
    return simpler;
  }

  private PublicationPlan replace(int index, StatementPlan statement) {
    List<StatementPlan> changed = new ArrayList<>(statements);
    changed.set(index, statement);
    return with(changed, transientRate, lostAnswerRate, other, outsideWrites);
  }

  private PublicationPlan with(
      List<StatementPlan> newStatements,
      double transientRate,
      double lostRate,
      OtherTable newOther,
      int writes) {
    return new PublicationPlan(
        seed,
        owned,
        newOther,
        newStatements,
        writes,
        transientRate,
        lostRate,
        deleteIfMatchIgnored);
  }

  /** This plan as the Java that builds it, for keeping a shrunk schedule as a named test. */
  String toJava() {
    StringBuilder java = new StringBuilder("new PublicationPlan(\n    ");
    java.append(seed).append("L, ").append(owned).append(", OtherTable.").append(other);
    java.append(",\n    List.of(");
    for (int s = 0; s < statements.size(); s++) {
      StatementPlan statement = statements.get(s);
      java.append(s == 0 ? "\n        " : ",\n        ");
      java.append("new StatementPlan(")
          .append(statement.index())
          .append(", Engine.")
          .append(statement.engine())
          .append(", Verb.")
          .append(statement.verb())
          .append(", Set.of(");
      List<String> quoted = new ArrayList<>();
      statement.partitions().forEach(partition -> quoted.add('"' + partition + '"'));
      java.append(String.join(", ", quoted)).append("), ");
      java.append(statement.startAfterMillis()).append(", ");
      java.append(statement.crashAt()).append(", ").append(statement.pauseAt());
      java.append(", CallFault.").append(statement.callFault());
      java.append(", ").append(statement.failsCleanly()).append(')');
    }
    java.append("),\n    ").append(outsideWrites).append(", ").append(transientRate);
    java.append(", ").append(lostAnswerRate).append(", ").append(deleteIfMatchIgnored);
    return java.append(')').toString();
  }

  /** Readable steps, and the Java that builds the plan, for keeping it as a named test. */
  @Override
  public String printed() {
    return this + "\n" + toJava();
  }

  @Override
  public String toString() {
    StringBuilder text = new StringBuilder();
    text.append("seed ").append(seed);
    text.append(owned ? ", a managed table" : ", an external table");
    text.append(", transient ")
        .append(transientRate)
        .append(", lost answers ")
        .append(lostAnswerRate);
    text.append(deleteIfMatchIgnored ? ", DELETE If-Match ignored" : "");
    text.append(other != OtherTable.NONE ? ", another table " + other : "");
    text.append(outsideWrites > 0 ? ", " + outsideWrites + " files from an outside writer" : "");
    for (StatementPlan statement : statements) {
      text.append("\n  ").append(statement.run()).append(": ");
      text.append(statement.engine()).append(' ').append(statement.verb());
      text.append(' ').append(statement.partitions());
      text.append(", starts after ").append(statement.startAfterMillis()).append(" ms");
      text.append(statement.crashAt() > 0 ? ", crashes at request " + statement.crashAt() : "");
      text.append(
          statement.pauseAt() > 0
              ? ", pauses past its lease at request " + statement.pauseAt()
              : "");
      text.append(
          statement.callFault() != CallFault.NONE
              ? ", metastore call " + statement.callFault()
              : "");
      text.append(statement.failsCleanly() ? ", its failure path runs" : ", a failure kills it");
    }
    return text.toString();
  }
}
