package dev.writeonce.shim;

import dev.writeonce.core.work.WorkerPool;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;
import java.util.function.LongSupplier;
import org.apache.hadoop.conf.Configuration;

/**
 * The rename shim as a simulated process runs it: each process (named by {@link #PROCESS} in the
 * configuration) has its own bucket states, clocks and threads, as a JVM of its own would. Set
 * {@code fs.s3a.impl} to this class.
 */
public class SimulatedShimFileSystem extends RenameShimFileSystem {

  /** The configuration key naming the simulated process an instance belongs to. */
  public static final String PROCESS = "writeonce.simulation.process";

  private static final Map<String, ShimEnvironment> PROCESSES = new ConcurrentHashMap<>();

  /** The instances each process started, so that it can close them all, cached or not. */
  private static final Map<String, List<SimulatedShimFileSystem>> INSTANCES =
      new ConcurrentHashMap<>();

  /** The operations entered, by kind and keys; for the tests of the bracket. */
  public interface OperationListener extends BiConsumer<String, List<String>> {}

  /** Registers a simulated process whose shim takes S3's page size. */
  public static void register(
      String process,
      LongSupplier nanoClock,
      LongSupplier wallClock,
      BiFunction<String, Integer, WorkerPool> workers,
      OperationListener entered) {
    register(process, nanoClock, wallClock, workers, entered, -1);
  }

  /**
   * Registers a simulated process.
   *
   * @param workers the threads of one purpose: owner and parallelism to a pool
   * @param entered told of every operation entered, by kind name and keys
   * @param pageSize objects in one page of a listing and one bulk delete; -1 for S3's
   */
  public static void register(
      String process,
      LongSupplier nanoClock,
      LongSupplier wallClock,
      BiFunction<String, Integer, WorkerPool> workers,
      OperationListener entered,
      int pageSize) {
    BucketState.Registry registry = new BucketState.Registry();
    PROCESSES.put(
        process,
        new ShimEnvironment() {
          @Override
          public BucketState.Registry states() {
            return registry;
          }

          @Override
          public LongSupplier nanoClock() {
            return nanoClock;
          }

          @Override
          public LongSupplier wallClock() {
            return wallClock;
          }

          @Override
          public WorkerPool workers(String owner, int threads) {
            return workers.apply(owner, threads);
          }

          @Override
          public int pageSize() {
            return pageSize < 0 ? RenameShim.PAGE_SIZE : pageSize;
          }

          @Override
          public void entered(Operation.Kind kind, List<String> keys) {
            entered.accept(kind.name(), keys);
          }
        });
  }

  /** The instances a process started so far. */
  public static List<SimulatedShimFileSystem> instancesOf(String process) {
    List<SimulatedShimFileSystem> started = INSTANCES.get(process);
    return started == null ? List.of() : List.copyOf(started);
  }

  /** Forgets a process, returning the instances it started, for the caller to close. */
  public static List<SimulatedShimFileSystem> unregister(String process) {
    PROCESSES.remove(process);
    List<SimulatedShimFileSystem> started = INSTANCES.remove(process);
    return started == null ? List.of() : started;
  }

  @Override
  ShimEnvironment environment(Configuration conf) {
    INSTANCES
        .computeIfAbsent(
            conf.get(PROCESS, ""),
            p -> java.util.Collections.synchronizedList(new java.util.ArrayList<>()))
        .add(this);
    ShimEnvironment environment = PROCESSES.get(conf.get(PROCESS, ""));
    if (environment == null) {
      throw new IllegalStateException("no simulated process " + conf.get(PROCESS));
    }
    return environment;
  }
}
