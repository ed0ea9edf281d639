package dev.writeonce.core.engine;

import java.util.concurrent.ExecutorService;

/** Bounded threads that {@link Tasks} runs work on: a job commit's, or a file system's. */
public interface WorkerPool {

  /** Whose work this is, for progress and failure lines: "Job job_1", "rename shim for s3a://b". */
  String owner();

  /** How many tasks may run at once. */
  int parallelism();

  ExecutorService pool();
}
