package dev.writeonce.shim.simulation;

import dev.writeonce.core.testing.s3.Handling;
import dev.writeonce.core.testing.s3.MemoryS3ClientFactory;
import dev.writeonce.core.testing.s3.MemoryS3Settings;
import dev.writeonce.core.testing.s3.RequestHook;
import dev.writeonce.core.testing.s3.StoreRequest;
import dev.writeonce.core.testing.simulation.Crash;
import dev.writeonce.core.testing.simulation.FaultRelay;
import dev.writeonce.core.testing.simulation.Faults;
import dev.writeonce.core.testing.simulation.Scheduler;
import dev.writeonce.core.testing.simulation.SimProcess;
import dev.writeonce.shim.SimulatedShimFileSystem;
import java.io.IOException;
import java.security.PrivilegedExceptionAction;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.function.Predicate;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;

/**
 * A simulated JVM: its own user (so that Hadoop's file system cache gives it instances of its own,
 * shared by its threads as in a real process), its own shim registry, threads and clock readings,
 * and its own connection to the store, a {@link FaultRelay} through which its faults are injected
 * and at which it may die. After it died, each of its requests fails with {@link Crash}.
 */
final class Process {

  private final String name;
  private final SharedS3 world;
  private final SimProcess process;
  private final FaultRelay relay;
  private final Predicate<StoreRequest> failAlways;
  private final String endpoint;
  private final UserGroupInformation user;
  private final Configuration conf;
  private final List<String> trace = new ArrayList<>();
  private final java.util.Set<String> createdKeys = new java.util.HashSet<>();
  private final java.util.Set<String> lostCreates = new java.util.HashSet<>();
  private final java.util.Set<String> failedAborts = new java.util.HashSet<>();

  /**
   * @param failAlways requests that fail every time they are sent (a 5xx past the retries)
   * @param pageSize objects in one page of a listing and one bulk delete; -1 for S3's
   */
  Process(
      String name,
      SharedS3 world,
      Faults faults,
      Predicate<StoreRequest> failAlways,
      long seed,
      int pageSize) {
    this.name = name;
    this.world = world;
    this.process = new SimProcess(name);
    this.relay =
        new FaultRelay(world.scheduler(), null, process, world.clock(), faults, seed, null);
    this.failAlways = failAlways;
    this.endpoint = MemoryS3ClientFactory.register(world.store(), new Hook());
    this.user = UserGroupInformation.createRemoteUser(name);
    this.conf = new Configuration(false);
    MemoryS3Settings.apply(conf, endpoint);
    conf.set("fs.s3a.impl", SimulatedShimFileSystem.class.getName());
    conf.set(SimulatedShimFileSystem.PROCESS, name);
    // Hadoop's cache, as in a real process: one instance per user and bucket, whatever the
    // configuration a later caller passes (a job's own settings do not reach it).
    conf.setBoolean("fs.s3a.impl.disable.cache", false);
    conf.setInt("writeonce.commit.threads", 2);
    conf.setInt("writeonce.magic.upload-threads", 2);
    SimulatedShimFileSystem.register(
        name,
        world::nanos,
        world::millis,
        (owner, threads) -> new SimWorkers(world.scheduler(), this, owner, threads),
        // Every file system call is a scheduling point too: a reader may come between two calls
        // of a job commit that send no request.
        (kind, keys) -> world.scheduler().yieldTurn(),
        pageSize);
  }

  String name() {
    return name;
  }

  /** The process's session configuration: what its file system instances start with. */
  Configuration conf() {
    return conf;
  }

  boolean crashed() {
    return process.dead();
  }

  /** Keys this process started uploads for. */
  synchronized java.util.Set<String> createdKeys() {
    return new java.util.HashSet<>(createdKeys);
  }

  /** Keys whose upload this process created without learning its id (the answer was lost). */
  synchronized java.util.Set<String> lostCreates() {
    return new java.util.HashSet<>(lostCreates);
  }

  /** Uploads this process tried to abort and the store refused. */
  synchronized java.util.Set<String> failedAborts() {
    return new java.util.HashSet<>(failedAborts);
  }

  /** Every request this process sent, in order, when tracing. */
  List<String> trace() {
    return trace;
  }

  /**
   * Closes every file system instance the process started, one by one (Hadoop's own closeAll closes
   * them while holding its cache's lock, which a scheduled close must not do).
   */
  void closeFileSystems() throws IOException {
    for (SimulatedShimFileSystem instance : SimulatedShimFileSystem.instancesOf(name)) {
      instance.close();
    }
  }

  /** Runs work as this process's user. */
  <T> T call(Callable<T> work) throws Exception {
    return user.doAs((PrivilegedExceptionAction<T>) work::call);
  }

  /** Adds an actor of this process. */
  Scheduler.Actor spawn(String actor, ThrowingRunnable body) {
    return world
        .scheduler()
        .spawn(
            name + "/" + actor,
            () -> {
              try {
                call(
                    () -> {
                      body.run();
                      return null;
                    });
              } catch (Crash crash) {
                // the process died under this actor
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            });
  }

  /** A body that may fail. */
  @FunctionalInterface
  interface ThrowingRunnable {
    void run() throws Exception;
  }

  /**
   * Ends the process: every file system instance it started is closed (a crashed process's close
   * reaches nothing: its requests fail), its registrations dropped.
   */
  void end() {
    process.die();
    for (SimulatedShimFileSystem instance : SimulatedShimFileSystem.unregister(name)) {
      try {
        instance.close();
      } catch (Throwable ignored) {
        // as above
      }
    }
    MemoryS3ClientFactory.unregister(endpoint);
  }

  private final class Hook implements RequestHook {
    @Override
    public Handling before(StoreRequest request) {
      FaultRelay.Request next = relay.next();
      if (next.fate() == FaultRelay.Fate.DEAD) {
        throw new Crash(name);
      }
      int number = next.number();
      synchronized (Process.this) {
        if (world.tracing()) {
          Scheduler.Actor actor = world.scheduler().current();
          trace.add(
              number
                  + (actor == null ? "" : " (" + actor.name().substring(name.length() + 1) + ")")
                  + " "
                  + request.operation()
                  + " "
                  + (request.key() == null ? request.keys() : request.key())
                  + (request.uploadId() == null ? "" : " " + request.uploadId()));
        }
      }
      world.sent(Process.this, request);
      boolean creates = request.operation().equals("CreateMultipartUpload");
      if (creates) {
        synchronized (Process.this) {
          createdKeys.add(request.key());
        }
      }
      Handling outcome =
          switch (next.fate()) {
            case CRASH, CRASH_LANDS_LATE, DEAD -> throw new Crash(name);
            case CRASH_APPLIED -> Handling.LOSE_ANSWER;
            case FAIL_UNSENT -> Handling.FAIL_UNSENT;
            case LOSE_ANSWER ->
                failAlways.test(request) ? Handling.FAIL_UNSENT : Handling.LOSE_ANSWER;
            case PROCEED -> failAlways.test(request) ? Handling.FAIL_UNSENT : Handling.PROCEED;
          };
      synchronized (Process.this) {
        if (world.tracing() && outcome != Handling.PROCEED) {
          trace.add(number + " was " + outcome);
        }
        if (creates && outcome == Handling.LOSE_ANSWER) {
          lostCreates.add(request.key());
        }
        if (request.operation().equals("AbortMultipartUpload") && outcome == Handling.FAIL_UNSENT) {
          failedAborts.add(request.uploadId());
        }
      }
      return outcome;
    }

    @Override
    public int pageSize(StoreRequest request, int requested) {
      return relay.pageSize(requested);
    }
  }
}
