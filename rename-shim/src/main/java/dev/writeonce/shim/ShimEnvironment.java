package dev.writeonce.shim;

import dev.writeonce.core.upload.UploadPool;
import dev.writeonce.core.work.WorkerPool;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * What the shim takes from the process it runs in: the registry of bucket states, the clocks and
 * the threads. A real process uses {@link #JVM}; a simulation gives each simulated process its own,
 * so that it can drive time and the order in which threads run.
 */
interface ShimEnvironment {

  /** The bucket states shared by the shim's instances in this process. */
  BucketState.Registry states();

  /** A monotonic clock, for the listing window. */
  LongSupplier nanoClock();

  /** The wall clock, for the times written into records. */
  LongSupplier wallClock();

  /** Bounded threads for one purpose of one file system or bucket state. */
  WorkerPool workers(String owner, int threads);

  /**
   * The objects one request takes: a page of a listing (a job attempt's directory holding more is
   * listed task by task) and a bulk delete of records (deleted beside the merge once that many
   * wait). S3's is 1,000; a simulation lowers it, so that its small jobs take both ways.
   */
  default int pageSize() {
    return RenameShim.PAGE_SIZE;
  }

  /** Told of every operation as it is entered; for the tests of the bracket. */
  default void entered(Operation.Kind kind, List<String> keys) {}

  /** This JVM: one registry, the system's clocks, real threads. */
  ShimEnvironment JVM =
      new ShimEnvironment() {
        @Override
        public BucketState.Registry states() {
          return BucketState.Registry.JVM;
        }

        @Override
        public LongSupplier nanoClock() {
          return System::nanoTime;
        }

        @Override
        public LongSupplier wallClock() {
          return System::currentTimeMillis;
        }

        @Override
        public WorkerPool workers(String owner, int threads) {
          return new UploadPool(owner, threads);
        }
      };
}
