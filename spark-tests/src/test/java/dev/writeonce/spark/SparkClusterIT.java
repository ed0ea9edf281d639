package dev.writeonce.spark;

import static org.assertj.core.api.Assertions.assertThat;

import dev.writeonce.core.store.check.StoreTrust;
import dev.writeonce.shim.RenameShimFileSystem;
import dev.writeonce.teststore.BucketView;
import dev.writeonce.teststore.EachStore;
import dev.writeonce.teststore.S3Api;
import dev.writeonce.teststore.StoreLifecycle;
import dev.writeonce.teststore.TestStore;
import dev.writeonce.teststore.Traffic;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import org.apache.spark.SparkConf;
import org.apache.spark.TaskContext;
import org.apache.spark.deploy.master.Master;
import org.apache.spark.deploy.worker.Worker;
import org.apache.spark.rpc.RpcEnv;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerJobStart;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.execution.datasources.SQLHadoopMapReduceCommitProtocol;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import scala.Option;
import scala.Tuple3;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Spark with executors in JVMs of their own: a standalone master and two workers started in the
 * test JVM, the workers on two loopback addresses (127.0.0.2 and 127.0.0.3) so that Spark sees two
 * hosts, each worker starting an executor process. Commit messages cross processes, the executors'
 * filesystems are not the driver's, and speculation can run a task's copy on the other host (Spark
 * never speculates on a host already running the task).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@EachStore
class SparkClusterIT implements StoreLifecycle {

  /** The store of the current run, set by {@link #startOn}. */
  private TestStore store;

  private TestStore store() {
    return store;
  }

  @TempDir static Path scratch;

  private SparkSession spark;
  private final List<RpcEnv> cluster = new ArrayList<>();

  @Override
  public void startOn(TestStore store) throws Exception {
    this.store = store;
    Files.createDirectories(Path.of(System.getProperty("spark.test.home")));
    SparkConf daemons = new SparkConf(false).set("spark.ui.enabled", "false");
    Tuple3<RpcEnv, Object, Option<Object>> master =
        Master.startRpcEnvAndEndpoint("127.0.0.1", 0, 0, daemons);
    cluster.add(master._1());
    String masterUrl = "spark://127.0.0.1:" + master._1().address().port();
    for (int worker = 1; worker <= 2; worker++) {
      cluster.add(
          Worker.startRpcEnvAndEndpoint(
              "127.0.0." + (worker + 1),
              0,
              0,
              1,
              1024,
              new String[] {masterUrl},
              Files.createDirectories(scratch.resolve("worker-" + worker)).toString(),
              Option.apply(worker),
              daemons,
              Option.empty()));
    }
    spark =
        SparkSessions.builder(masterUrl, store(), scratch)
            .config("spark.cores.max", "2")
            .config("spark.speculation", "true")
            .config("spark.speculation.interval", "100ms")
            .config("spark.speculation.quantile", "0.5")
            .config("spark.speculation.multiplier", "1.5")
            .config("spark.speculation.minTaskRuntime", "500ms")
            .config("spark.executor.memory", "1g")
            .config("spark.task.maxFailures", "2")
            .getOrCreate();
    spark
        .udf()
        .register(
            "failFirstAttemptOfPartition0",
            (UDF1<Long, Long>)
                id -> {
                  TaskContext task = TaskContext.get();
                  if (task.partitionId() == 0 && task.attemptNumber() == 0 && id > 200) {
                    throw new IllegalStateException("injected failure of an executor's attempt");
                  }
                  return id;
                },
            DataTypes.LongType);
    spark
        .udf()
        .register(
            "slowFirstAttemptOfPartition0",
            (UDF1<Long, Long>)
                id -> {
                  TaskContext task = TaskContext.get();
                  if (task.partitionId() == 0 && task.attemptNumber() == 0 && id % 50 == 0) {
                    Thread.sleep(500);
                  }
                  return id;
                },
            DataTypes.LongType);
    awaitExecutors(2);
  }

  private void awaitExecutors(int count) throws InterruptedException {
    for (int wait = 0; wait < 600; wait++) {
      // The status tracker lists the driver too.
      if (spark.sparkContext().statusTracker().getExecutorInfos().length > count) {
        return;
      }
      Thread.sleep(100);
    }
    throw new IllegalStateException("the workers started no " + count + " executors in 60 s");
  }

  @Override
  public void stopOn(TestStore store) throws Exception {
    if (spark != null) {
      spark.stop();
    }
    cluster.forEach(RpcEnv::shutdown);
  }

  /**
   * Writes the data as Parquet while counting the task attempts of its jobs only. A task killed
   * after its job ended (the loser of a speculative race, in an earlier write or a read-back) can
   * report its end while this write runs, so attempts are counted by the write's job group.
   */
  private AttemptListener writeWatched(Dataset<Row> data, String uri) throws Exception {
    String group = "watched-" + UUID.randomUUID();
    AttemptListener listener = new AttemptListener(group);
    spark.sparkContext().addSparkListener(listener);
    spark.sparkContext().setJobGroup(group, "write to " + uri, false);
    try {
      data.write().parquet(uri);
      spark.sparkContext().listenerBus().waitUntilEmpty();
    } finally {
      spark.sparkContext().clearJobGroup();
      spark.sparkContext().removeSparkListener(listener);
    }
    assertThat(listener.stages).as("the write's stages were seen").isNotEmpty();
    return listener;
  }

  /** Eight files, and each of the 4,000 ids once; returns the files. */
  private List<String> assertEveryRowOnce(BucketView view) {
    List<String> files = view.keys("out/").stream().filter(k -> k.endsWith(".parquet")).toList();
    assertThat(files).as("one file per partition").hasSize(8);
    List<Row> back = spark.read().parquet(view.uri("out/")).collectAsList();
    assertThat(back).hasSize(4000);
    assertThat(back.stream().map(r -> r.getLong(0)).distinct().count()).isEqualTo(4000);
    return files;
  }

  /** Counts the failed task attempts of one job group's jobs, and the executors they ran on. */
  static final class AttemptListener extends SparkListener {
    private final String group;
    final Set<Integer> stages = ConcurrentHashMap.newKeySet();

    final LongAdder failed = new LongAdder();
    final LongAdder speculative = new LongAdder();

    /** First attempts of partition 0 that ended without success: failed, or killed by a copy. */
    final LongAdder firstAttemptsOfPartition0Lost = new LongAdder();

    final Set<String> executors = ConcurrentHashMap.newKeySet();
    final Set<String> hosts = ConcurrentHashMap.newKeySet();

    AttemptListener(String group) {
      this.group = group;
    }

    @Override
    public void onJobStart(SparkListenerJobStart start) {
      if (start.properties() != null
          && group.equals(start.properties().getProperty("spark.jobGroup.id"))) {
        CollectionConverters.asJava(start.stageIds()).forEach(id -> stages.add((Integer) id));
      }
    }

    @Override
    public void onTaskEnd(SparkListenerTaskEnd end) {
      if (!stages.contains(end.stageId())) {
        return;
      }
      if (end.taskInfo().failed()) {
        failed.increment();
      }
      if (end.taskInfo().speculative()) {
        speculative.increment();
      }
      if (end.taskInfo().index() == 0
          && end.taskInfo().attemptNumber() == 0
          && !end.taskInfo().successful()) {
        firstAttemptsOfPartition0Lost.increment();
      }
      executors.add(end.taskInfo().executorId());
      hosts.add(end.taskInfo().host());
    }
  }

  @Test
  void executorsInTheirOwnJvmsCommitThroughTheDriverAndARetriedAttemptWritesOnce()
      throws Exception {
    for (String committer : List.of("directory", "magic")) {
      String bucket = store().newBucket("cluster-" + committer);
      BucketView view = new BucketView(store(), bucket);
      spark.conf().set("writeonce.committer", committer);
      Dataset<Row> data =
          spark
              .range(0, 4000, 1, 8)
              .selectExpr("failFirstAttemptOfPartition0(id) AS id", "concat('row-', id) AS name");

      Traffic before = store().meter().read();
      AttemptListener listener = writeWatched(data, view.uri("out/"));
      Traffic write = store().meter().read().minus(before);

      assertThat(listener.executors)
          .as("tasks ran in executor JVMs")
          .hasSize(2)
          .doesNotContain("driver");
      assertThat(listener.hosts).containsExactlyInAnyOrder("127.0.0.2", "127.0.0.3");
      // The first attempt of partition 0 fails, unless a speculative copy launched while it ran
      // slowly wins first and it is killed: either way it is retried and writes nothing.
      assertThat(listener.failed.sum()).as("failed attempts").isLessThanOrEqualTo(1);
      assertThat(listener.firstAttemptsOfPartition0Lost.sum())
          .as("first attempt of partition 0 lost")
          .isEqualTo(1);
      List<String> files = assertEveryRowOnce(view);
      assertThat(write.requests(S3Api.COPY_OBJECT)).isZero();
      assertThat(write.requests(S3Api.COMPLETE_MULTIPART_UPLOAD)).isEqualTo(8);
      // A speculative copy of the slow first attempt may be killed once the stage finishes, and
      // a kill is asynchronous: its abort may land after the job returns.
      assertThat(uploadsLeftOpen(view, files))
          .as("the failed attempt aborted its upload")
          .isEmpty();
    }
  }

  @Test
  void aSpeculativeCopyOfASlowTaskLeavesItsRowsExactlyOnce() throws Exception {
    for (String committer : List.of("directory", "magic")) {
      String bucket = store().newBucket("speculation-" + committer);
      BucketView view = new BucketView(store(), bucket);
      spark.conf().set("writeonce.committer", committer);
      Dataset<Row> data =
          spark
              .range(0, 4000, 1, 8)
              .selectExpr("slowFirstAttemptOfPartition0(id) AS id", "concat('row-', id) AS name");

      AttemptListener listener = writeWatched(data, view.uri("out/"));

      assertThat(listener.speculative.sum()).as("%s: speculative attempts", committer).isPositive();
      List<String> files = assertEveryRowOnce(view);
      // The losing attempt is killed asynchronously; its abort may land after the job returns.
      assertThat(uploadsLeftOpen(view, files)).as("the losing attempt left no upload").isEmpty();
    }
  }

  @Test
  void theExecutorsOfAShimJobTakeTheDriversStoreVerdictAndSendNoCheckRequest() throws Exception {
    String bucket = store().newBucket("cluster-shim-verdict");
    BucketView view = new BucketView(store(), bucket);
    Map<String, String> shimJob = new java.util.HashMap<>(store().emptyObjectSettings());
    shimJob.put("fs.s3a.impl", RenameShimFileSystem.class.getName());
    shimJob.put(
        "spark.sql.sources.commitProtocolClass", SQLHadoopMapReduceCommitProtocol.class.getName());
    // No verdict kept on the executors' host: only the job can spare them the check.
    shimJob.put(StoreTrust.CACHE_TTL, "0");
    Map<String, String> before = new java.util.HashMap<>();
    shimJob.keySet().forEach(key -> before.put(key, spark.conf().get(key, null)));
    shimJob.forEach((key, value) -> spark.conf().set(key, value));
    try {
      Dataset<Row> data = spark.range(0, 4000, 1, 8).selectExpr("id", "concat('row-', id) AS name");

      Traffic start = store().meter().read();
      AttemptListener listener = writeWatched(data, view.uri("out/"));
      Traffic write = store().meter().read().minus(start);

      assertThat(listener.executors).as("tasks ran in executor JVMs").hasSize(2);
      assertEveryRowOnce(view);
      // A store check completes uploads of its own (a completion after an abort, a repeated
      // one) and lists open uploads: the job's eight completions and no listing of uploads
      // mean that no process checked the store during the job.
      assertThat(write.requests(S3Api.COMPLETE_MULTIPART_UPLOAD)).isEqualTo(8);
      assertThat(write.requests(S3Api.LIST_MULTIPART_UPLOADS)).isZero();
      assertThat(write.requests(S3Api.COPY_OBJECT)).isZero();
    } finally {
      before.forEach(
          (key, value) -> {
            if (value == null) {
              spark.conf().unset(key);
            } else {
              spark.conf().set(key, value);
            }
          });
    }
  }

  /** The uploads still open at the files' keys once killed attempts had 10 s to abort theirs. */
  private static List<String> uploadsLeftOpen(BucketView view, List<String> files)
      throws InterruptedException {
    List<String> open = view.openUploads(files);
    for (int wait = 0; wait < 100 && !open.isEmpty(); wait++) {
      Thread.sleep(100);
      open = view.openUploads(files);
    }
    return open;
  }
}
