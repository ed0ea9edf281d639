package dev.writeonce.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.teststore.BucketView;
import dev.writeonce.teststore.EachStore;
import dev.writeonce.teststore.StoreLifecycle;
import dev.writeonce.teststore.TestStore;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The fault matrix with real process kills: a job driver runs in its own JVM and is killed with
 * SIGKILL at each point of the commit; then {@code writeonce recover} runs and the destination must
 * hold all of the job's output or none of it (all exactly when the commit point was reached), with
 * no upload of the job open and no record left.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@EachStore
class CrashRecoveryIT implements StoreLifecycle {

  /** Where the driver is killed, and whether the job had passed its commit point there. */
  enum Point {
    WHILE_TASKS_WRITE("while-tasks-write", "while tasks write (4 of 8 committed)", false),
    AFTER_TASK_COMMITS("after-task-commits", "after all task commits", false),
    BEFORE_COMMIT_POINT("before-commit-point", "just before the job manifest PUT", false),
    MID_COMPLETION("mid-completion", "after the commit point, 3 of 8 uploads completed", true),
    BEFORE_SUCCESS("before-success", "after every completion, before _SUCCESS", true);

    final String id;
    final String description;
    final boolean committed;

    Point(String id, String description, boolean committed) {
      this.id = id;
      this.description = description;
      this.committed = committed;
    }
  }

  /** The store of the current run, set by {@link #startOn}. */
  private TestStore store;

  private TestStore store() {
    return store;
  }

  @TempDir Path scratch;

  /** The crash matrix's rows for the current store, written out by {@link #stopOn}. */
  private final List<String> rows = new ArrayList<>();

  @Override
  public void startOn(TestStore store) {
    this.store = store;
    rows.clear();
  }

  private Map<String, String> storeSettings() {
    return StoreSettings.of(store());
  }

  private Process startDriver(String destination, Point point, Path dir) throws IOException {
    Properties settings = new Properties();
    settings.setProperty("destination", destination);
    settings.setProperty("point", point.id);
    storeSettings().forEach((key, value) -> settings.setProperty("conf." + key, value));
    settings.setProperty("conf.hadoop.tmp.dir", dir.resolve("hadoop").toString());
    settings.setProperty("conf.writeonce.staging.local-dir", dir.resolve("staging").toString());
    // One completion at a time, so that "3 of 8 completed" is exactly that when it is killed.
    settings.setProperty("conf.writeonce.commit.threads", "1");
    Path file = dir.resolve("driver.properties");
    try (Writer out = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
      settings.store(out, "crash driver");
    }
    ProcessBuilder builder =
        new ProcessBuilder(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx256m",
            "-XX:+UseSerialGC",
            "-cp",
            System.getProperty("java.class.path"),
            CommitCrashDriver.class.getName(),
            file.toString());
    builder.redirectErrorStream(true);
    return builder.start();
  }

  /** Reads the driver's output until it pauses; returns everything it printed. */
  private String awaitPause(Process driver) throws Exception {
    StringBuilder seen = new StringBuilder();
    BufferedReader in =
        new BufferedReader(new InputStreamReader(driver.getInputStream(), StandardCharsets.UTF_8));
    CompletableFuture<Boolean> paused = new CompletableFuture<>();
    // One reader thread for the driver's whole life: it marks the pause and keeps draining, so the
    // driver never blocks on a full pipe, and nothing closes the stream while it reads.
    Thread reader =
        new Thread(
            () -> {
              try {
                String line;
                while ((line = in.readLine()) != null) {
                  synchronized (seen) {
                    seen.append(line).append('\n');
                  }
                  if (line.contains(CommitCrashDriver.PAUSED)) {
                    paused.complete(true);
                  }
                }
              } catch (IOException e) {
                // the driver is gone
              }
              paused.complete(false);
            },
            "crash-driver-output");
    reader.setDaemon(true);
    reader.start();
    boolean reached;
    try {
      reached = paused.get(180, TimeUnit.SECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      reached = false;
    }
    synchronized (seen) {
      assertThat(reached).as("the driver reached its pause; it printed:%n%s", seen).isTrue();
      return seen.toString();
    }
  }

  private String cli(String... args) {
    List<String> all = new ArrayList<>(List.of(args));
    all.addAll(StoreSettings.arguments(storeSettings()));
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int exit =
        Main.run(
            new PrintWriter(out, true), new PrintWriter(err, true), all.toArray(new String[0]));
    return exit + "\n" + out + err;
  }

  @ParameterizedTest
  @EnumSource(Point.class)
  void aDriverKilledAtEachPointLeavesAllOrNothingAfterRecover(Point point) throws Exception {
    String bucket = store().newBucket("crash-" + point.id);
    BucketView view = new BucketView(store(), bucket);
    String destination = view.uri("out/");
    Path dir = Files.createDirectories(scratch.resolve(point.id));

    Process driver = startDriver(destination, point, dir);
    try {
      awaitPause(driver);
    } finally {
      driver.destroyForcibly(); // SIGKILL: no shutdown hook, no cleanup
      assertThat(driver.waitFor(60, TimeUnit.SECONDS)).isTrue();
    }
    List<String> expected = new ArrayList<>();
    for (int task = 0; task < CommitCrashDriver.TASKS; task++) {
      expected.add("out/" + CommitCrashDriver.fileName(task));
    }
    long visibleAfterCrash = view.keys("out/part-").size();

    String inspect = cli("inspect", destination);
    // The killed driver's lease is still fresh: the operator who saw it die says so.
    String recover =
        cli("recover", destination, "--min-age=0s", "--ignore-lease-of=job_2026112223_0001");
    assertThat(recover).as(recover).startsWith("0\n");

    List<String> visible = view.keys("out/part-");
    if (point.committed) {
      assertThat(visible).as("all of the job's output").containsExactlyElementsOf(expected);
      for (int task = 0; task < CommitCrashDriver.TASKS; task++) {
        assertThat(view.read(expected.get(task))).isEqualTo(CommitCrashDriver.content(task));
      }
      assertThat(view.keys("out/")).contains("out/_SUCCESS");
    } else {
      assertThat(visible).as("none of the job's output").isEmpty();
    }
    assertThat(view.openUploads(expected)).as("open uploads of the job").isEmpty();
    if (point.committed) {
      List<String> outputAndSuccess = new ArrayList<>(expected);
      outputAndSuccess.add("out/_SUCCESS");
      assertThat(view.keys("out/"))
          .as("the output and _SUCCESS, nothing else")
          .containsExactlyInAnyOrderElementsOf(outputAndSuccess);
    } else {
      // Recovery aborted the job: its abort fence stands for the retention, nothing else.
      assertThat(view.keys("out/_writeonce/"))
          .as("records left")
          .allMatch(key -> key.endsWith("/manifest.json"));
    }

    String state =
        inspect.contains("COMMITTED BUT UNFINISHED")
                || inspect.contains("committed, being finished by its driver")
            ? "committed, unfinished"
            : inspect.contains("uncommitted") || inspect.contains(": running (live")
                ? "uncommitted"
                : "no job records";
    String action =
        recover.contains("finish committed job")
            ? "rolled forward"
            : recover.contains("abort ") ? "uploads aborted" : "nothing to do";
    rows.add(
        String.format(
            Locale.ROOT,
            "| %s | %d of 8 | %s | %s | %s, no open upload, no record |",
            point.description,
            visibleAfterCrash,
            state,
            action,
            point.committed ? "all 8 files and _SUCCESS" : "no file"));
  }

  @Override
  public void stopOn(TestStore store) throws Exception {
    Path report =
        Path.of(System.getProperty("writeonce.project.root", ".."))
            .resolve("integration-tests/target/crash-matrix-" + store().name() + ".md");
    Files.createDirectories(report.getParent());
    Files.writeString(
        report,
        "| killed (SIGKILL) | files visible after the kill | inspect says | recover | after recover |\n"
            + "|---|---|---|---|---|\n"
            + String.join("\n", rows)
            + "\n");
  }
}
