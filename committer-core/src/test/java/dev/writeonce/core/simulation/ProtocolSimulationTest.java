package dev.writeonce.core.simulation;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.testing.simulation.Simulation;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The protocol under the seeded simulation harness ({@link Simulation}): thousands of random
 * schedules of jobs, task attempts, commits, aborts, repeated calls, recovery at any moment,
 * crashes at any store request, lost answers and transient errors, each checked against the
 * protocol's invariants. A failing seed is shrunk to a short schedule and printed; each bug found
 * this way keeps its schedule below as a named regression test.
 */
class ProtocolSimulationTest {

  /** Schedules per build; {@code -Dwriteonce.simulation.schedules=N} runs more or fewer. */
  private static final int SCHEDULES = Integer.getInteger("writeonce.simulation.schedules", 10_000);

  /** The first seed; {@code -Dwriteonce.simulation.seed=S} replays from another. */
  private static final long FIRST_SEED = Long.getLong("writeonce.simulation.seed", 20_261_123L);

  private static org.apache.log4j.Level libraryLevel;

  /** Thousands of schedules would log every commit and abort: the assertions say what failed. */
  @org.junit.jupiter.api.BeforeAll
  static void quietLibraryLogs() {
    org.apache.log4j.Logger library = org.apache.log4j.Logger.getLogger("dev.writeonce");
    libraryLevel = library.getLevel();
    library.setLevel(org.apache.log4j.Level.OFF);
  }

  @org.junit.jupiter.api.AfterAll
  static void restoreLibraryLogs() {
    org.apache.log4j.Logger.getLogger("dev.writeonce").setLevel(libraryLevel);
  }

  @Test
  void everyScheduleKeepsTheInvariants() throws Exception {
    new Simulation<>("the protocol", ProtocolPlan::generate, ProtocolSimulation::new)
        .schedules(SCHEDULES)
        .firstSeed(FIRST_SEED)
        .shrinkBudget(Boolean.getBoolean("writeonce.simulation.no-shrink") ? 0 : 2_000)
        .replayedWith("-Dwriteonce.simulation.seed=%d -Dwriteonce.simulation.schedules=1")
        .run();
  }

  @Test
  void aShrunkScheduleIsPrintedAsReadableSteps() {
    String text = ProtocolPlan.generate(7).toString();
    assertThat(text).startsWith("seed 7").contains("job 0: job_sim_000");
  }

  // Schedules the simulation found, shrunk, each kept with the bug it showed.

  private static ProtocolPlan.AttemptPlan commits(int task, int attempt) {
    return new ProtocolPlan.AttemptPlan(task, attempt, ProtocolPlan.AttemptEnd.COMMIT, true, 0);
  }

  private static ProtocolPlan.JobPlan job(
      int index,
      int jobId,
      int destination,
      String mode,
      boolean recoverOnSetup,
      int retryOf,
      int driverCrashAt,
      ProtocolPlan.AttemptPlan... attempts) {
    return new ProtocolPlan.JobPlan(
        index,
        destination,
        jobId,
        mode,
        List.of(attempts),
        false,
        false,
        driverCrashAt,
        recoverOnSetup,
        retryOf);
  }

  /**
   * Seed 20261194: recovery aborted a running job and removed its abort fence; the job's driver
   * then wrote its manifest, naming uploads that were gone. Abort fences now stand.
   */
  @Test
  void recoveryAbortingARunningJobNeverLetsItsDriverCommitAbortedUploads() throws Exception {
    ProtocolPlan plan =
        new ProtocolPlan(
            20261194L,
            List.of(
                job(0, 1, 0, "append", true, -1, 0, commits(0, 0), commits(1, 0)),
                job(
                    1,
                    0,
                    1,
                    "replace",
                    false,
                    -1,
                    0,
                    new ProtocolPlan.AttemptPlan(0, 0, ProtocolPlan.AttemptEnd.ABORT, true, 0),
                    commits(0, 1))),
            List.of(0),
            0,
            0,
            new boolean[] {false, false});
    assertThat(new ProtocolSimulation(plan).run()).isEmpty();
  }

  /**
   * Seed 20261278: a replace job deleted the completed files of a job whose driver died before its
   * _SUCCESS; recovery could then never confirm them. A replace job now finishes such a job first.
   */
  @Test
  void aReplaceJobNeverStrandsAnotherJobThatIsCommittedButUnfinished() throws Exception {
    ProtocolPlan plan =
        new ProtocolPlan(
            20261278L,
            List.of(
                job(0, 1, 1, "replace", true, -1, 0, commits(0, 0), commits(1, 0)),
                job(1, 1, 1, "append", false, 0, 0, commits(0, 0), commits(1, 0)),
                job(2, 0, 1, "replace", false, -1, 11, commits(0, 0))),
            List.of(),
            0,
            0,
            new boolean[] {false, true});
    assertThat(new ProtocolSimulation(plan).run()).isEmpty();
  }

  /**
   * Seed 20261345: a driver whose setup was refused before it claimed the job id then aborted the
   * job id's records, which belonged to another run, and destroyed that run's uploads.
   */
  @Test
  void aDriverRefusedAtSetupNeverAbortsAnotherRunOfTheSameJobId() throws Exception {
    ProtocolPlan plan =
        new ProtocolPlan(
            20261345L,
            List.of(
                job(
                    0,
                    1,
                    1,
                    "append",
                    false,
                    -1,
                    0,
                    commits(0, 0),
                    new ProtocolPlan.AttemptPlan(0, 1, ProtocolPlan.AttemptEnd.VANISH, false, 0),
                    commits(1, 0),
                    commits(2, 1)),
                job(1, 0, 0, "replace", true, -1, 0, commits(0, 0), commits(1, 0)),
                job(2, 0, 0, "fail", false, -1, 0, commits(0, 0))),
            List.of(),
            0,
            0,
            new boolean[] {true, true});
    assertThat(new ProtocolSimulation(plan).run()).isEmpty();
  }

  /**
   * Seed 20262303: recovery read the chunked manifest of a job whose driver then finished it and
   * removed its records; recovery found a chunk gone and reported the job damaged. A vanished chunk
   * of a job that has since finished now means the job is finished.
   */
  @Test
  void aRecoveryReadingAChunkedManifestWhileTheDriverFinishesTheJobSeesItFinished()
      throws Exception {
    ProtocolPlan plan =
        new ProtocolPlan(
            20262303L,
            List.of(
                job(0, 0, 0, "replace", false, -1, 0, commits(0, 0)),
                job(1, 1, 0, "append", false, -1, 0, commits(0, 0)),
                job(2, 0, 0, "append", true, -1, 0, commits(0, 0), commits(1, 0))),
            List.of(0, 0),
            0,
            0,
            new boolean[] {false, false});
    assertThat(new ProtocolSimulation(plan).run()).isEmpty();
  }

  /**
   * Seed 20261196: two append jobs on one destination name their files part-r-0000T, as MapReduce
   * does. An attempt of the first lost the answer to its upload and aborted it, leaving an intent
   * without a task manifest; the first job's cleanup then aborted every open upload of that key,
   * the second job's among them, and the second job committed with a file lost. A stray scan now
   * aborts only uploads that no other job, not ended, may own.
   */
  @Test
  void aStrayScanNeverAbortsTheUploadOfAnotherJobThatSharesTheFileName() throws Exception {
    ProtocolPlan plan =
        new ProtocolPlan(
            20261196L,
            List.of(
                job(0, 0, 0, "append", true, -1, 0, commits(0, 0)),
                job(1, 1, 0, "append", true, -1, 0, commits(0, 0), commits(1, 1))),
            List.of(),
            0.03,
            0.03,
            new boolean[] {true, true});
    assertThat(plan.sharedNames()).isTrue();
    assertThat(new ProtocolSimulation(plan).run()).isEmpty();
  }

  /**
   * Seed 20262861: a driver crashed while its manifest PUT was on the wire; its restarted
   * application master took the job over, aborted the uploads and released the fence, and the late
   * manifest then committed uploads that were gone. A committing earlier attempt is now aborted
   * with its fence kept, and the restart refused.
   */
  @Test
  void aRestartedDriverNeverLetsTheLateManifestOfItsCommittingEarlierAttemptLand()
      throws Exception {
    ProtocolPlan plan =
        new ProtocolPlan(
            20262861L,
            List.of(
                job(0, 1, 0, "replace", true, -1, 3, commits(0, 0)),
                job(1, 1, 0, "replace", true, 0, 0, commits(0, 0), commits(1, 0), commits(2, 0)),
                job(2, 0, 0, "fail", false, -1, 11, commits(0, 0))),
            List.of(),
            0,
            0,
            new boolean[] {false, true});
    assertThat(plan.restarts(plan.jobs().get(2))).isTrue();
    assertThat(new ProtocolSimulation(plan).run()).isEmpty();
  }

  /**
   * Seed 20294932: three runs of one job id in turn on one destination. A job's setup recovery
   * finished the first run's leftovers and deleted its job record after the next run had created
   * its own there, so two runs of the job id ran at once. The outcome record is now deleted only
   * while it is still that record.
   */
  @Test
  void aSecondCleanerOfAFinishedJobNeverDeletesTheRecordOfTheNextRunOfItsJobId() throws Exception {
    ProtocolPlan plan =
        new ProtocolPlan(
            20294932L,
            List.of(
                job(0, 1, 1, "append", true, -1, 0, commits(0, 0), commits(1, 0)),
                job(1, 1, 1, "append", false, -1, 0, commits(0, 0)),
                job(2, 1, 1, "append", true, 1, 0, commits(0, 0), commits(1, 0), commits(2, 0))),
            List.of(),
            0,
            0,
            new boolean[] {false, true});
    assertThat(new ProtocolSimulation(plan).run()).isEmpty();
  }

  /**
   * Seed 20292537: a recovery read a finished job's chunked manifest while the driver removed its
   * records, and another recovery then fenced the job id; the first took the fence for a manifest
   * still standing and reported the job damaged. A manifest no longer at its key now means the job
   * finished.
   */
  @Test
  void aFenceRaisedAfterAFinishedJobsCleanupIsNotTakenForItsManifest() throws Exception {
    ProtocolPlan plan =
        new ProtocolPlan(
            20292537L,
            List.of(
                job(
                    0,
                    1,
                    0,
                    "append",
                    false,
                    -1,
                    0,
                    commits(0, 0),
                    new ProtocolPlan.AttemptPlan(1, 0, ProtocolPlan.AttemptEnd.ABORT, true, 0),
                    new ProtocolPlan.AttemptPlan(1, 1, ProtocolPlan.AttemptEnd.COMMIT, true, 3)),
                job(
                    1,
                    0,
                    0,
                    "append",
                    true,
                    -1,
                    0,
                    commits(0, 0),
                    commits(1, 0),
                    new ProtocolPlan.AttemptPlan(1, 1, ProtocolPlan.AttemptEnd.COMMIT, false, 0)),
                new ProtocolPlan.JobPlan(
                    2,
                    1,
                    0,
                    "append",
                    List.of(commits(0, 0), commits(1, 0)),
                    false,
                    true,
                    0,
                    false,
                    -1)),
            List.of(0, 0),
            0,
            0,
            new boolean[] {true, false});
    assertThat(new ProtocolSimulation(plan).run()).isEmpty();
  }

  /**
   * Seed 50044693: a recovery set out to remove the records of a finished run; by the time it
   * listed them, that run's own cleanup had ended and a rerun of the job id had begun, which
   * another recovery then fenced. The late cleaner deleted the rerun's fence with the listing, and
   * the other recovery's abort then looked undecided. A cleaner of a finished run now removes
   * records only while the job record is still that run's FINISHED record.
   */
  @Test
  void aLateCleanerOfAFinishedRunNeverDeletesTheRecordsOfTheRerunOfItsJobId() throws Exception {
    ProtocolPlan plan =
        new ProtocolPlan(
            50044693L,
            List.of(
                job(0, 1, 1, "append", true, -1, 0, commits(0, 0)),
                job(
                    1,
                    1,
                    1,
                    "replace",
                    false,
                    0,
                    0,
                    new ProtocolPlan.AttemptPlan(0, 0, ProtocolPlan.AttemptEnd.ABORT, true, 0),
                    commits(0, 1),
                    commits(1, 0)),
                job(
                    2,
                    0,
                    0,
                    "append",
                    true,
                    -1,
                    0,
                    commits(0, 0),
                    new ProtocolPlan.AttemptPlan(0, 1, ProtocolPlan.AttemptEnd.ABORT, false, 0))),
            List.of(0, 0),
            0,
            0,
            new boolean[] {false, true});
    assertThat(new ProtocolSimulation(plan).run()).isEmpty();
  }

  /**
   * Seed 50089756: a recovery aborting a job listed a task manifest that its attempt then removed
   * (its write's answer was lost, so it took the manifest back before aborting its uploads) and
   * died before aborting. The recovery counted the attempt as handled and deleted its intent, the
   * one record still naming the upload. An attempt whose listed manifest is gone when read is now
   * treated as one without a manifest: its intent is scanned and kept.
   */
  @Test
  void anAbortThatFindsATaskManifestGoneScansTheAttemptsIntentInstead() throws Exception {
    ProtocolPlan plan =
        new ProtocolPlan(
            50089756L,
            List.of(
                job(
                    0,
                    0,
                    1,
                    "append",
                    true,
                    -1,
                    0,
                    commits(0, 0),
                    new ProtocolPlan.AttemptPlan(1, 0, ProtocolPlan.AttemptEnd.COMMIT, true, 6),
                    commits(2, 1)),
                job(
                    2,
                    0,
                    0,
                    "append",
                    false,
                    -1,
                    0,
                    commits(0, 0),
                    new ProtocolPlan.AttemptPlan(1, 0, ProtocolPlan.AttemptEnd.ABORT, true, 0),
                    commits(1, 1))),
            List.of(0),
            0,
            0.03,
            new boolean[] {false, true});
    assertThat(new ProtocolSimulation(plan).run()).isEmpty();
  }

  /**
   * Seed 60044727, every job naming its files part-r-0000T: while a driver completed its committed
   * job, another job's setup finished that job for it, removed its records and began a new run of
   * the job id. The first driver then wrote its FINISHED record over the new run's and, taking the
   * new run's intents for strays of its own, aborted one of its uploads. A job is now marked
   * finished only over its own run's record (If-Match), and otherwise left to whoever owns it.
   */
  @Test
  void aDriverWhoseJobAnotherProcessFinishedNeverTakesOverTheRecordsOfTheNextRun()
      throws Exception {
    ProtocolPlan plan =
        new ProtocolPlan(
            60044727L,
            List.of(
                job(0, 0, 1, "append", false, -1, 0, commits(0, 0)),
                job(1, 0, 1, "append", true, 0, 0, commits(0, 0)),
                job(2, 0, 1, "replace", true, -1, 0, commits(0, 0), commits(1, 0), commits(2, 0))),
            List.of(),
            0,
            0,
            new boolean[] {true, true});
    assertThat(new ProtocolSimulation(plan).run()).isEmpty();
  }

  /**
   * Seed 60082060: a driver crashed after its commit point; a replace job's setup finished the job
   * and removed its records, and the replace job's _SUCCESS then named itself. The restarted
   * application master found nothing that said its job had finished and ran it again, publishing
   * its rows beside the replace job's. {@code _SUCCESS} now names the jobs that finished before its
   * own, and the restart finds its job there. (The crash is at request 18 here, the driver's read
   * of the {@code _SUCCESS} it was about to replace.)
   */
  @Test
  void aRestartedDriverNeverRunsAgainAJobThatAnotherProcessFinishedAndALaterJobReplaced()
      throws Exception {
    ProtocolPlan plan =
        new ProtocolPlan(
            60082060L,
            List.of(
                job(
                    0,
                    1,
                    0,
                    "append",
                    true,
                    -1,
                    18,
                    commits(0, 0),
                    new ProtocolPlan.AttemptPlan(0, 1, ProtocolPlan.AttemptEnd.VANISH, false, 0),
                    commits(1, 0)),
                job(1, 0, 0, "replace", false, -1, 0, commits(0, 0), commits(1, 0))),
            List.of(1),
            0,
            0,
            new boolean[] {false, false});
    assertThat(plan.restarts(plan.jobs().get(0))).isTrue();
    assertThat(new ProtocolSimulation(plan).run()).isEmpty();
  }
}
