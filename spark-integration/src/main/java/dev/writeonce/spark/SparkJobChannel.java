package dev.writeonce.spark;

import dev.writeonce.core.store.check.JobVerdicts;
import java.util.Optional;
import org.apache.spark.SparkContext;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.SparkSession;
import scala.Option;

/**
 * Passes a driver's store verdict to its jobs' tasks in Spark's local properties: set on the driver
 * thread that runs the job's setup, they travel with every job that thread submits, and a task
 * reads them from its {@link TaskContext}. A job that keeps Spark's default protocol and writes
 * through the rename shim has no configuration of ours to carry it in.
 */
public final class SparkJobChannel implements JobVerdicts.Channel {

  @Override
  public Optional<String> read(String name) {
    TaskContext task = TaskContext.get();
    return task == null ? Optional.empty() : Optional.ofNullable(task.getLocalProperty(name));
  }

  @Override
  public void publish(String name, String value) {
    if (TaskContext.get() != null) {
      return;
    }
    Option<SparkSession> session = SparkSession.getActiveSession();
    if (session.isEmpty()) {
      session = SparkSession.getDefaultSession();
    }
    if (session.isDefined()) {
      SparkContext context = session.get().sparkContext();
      if (!context.isStopped()) {
        context.setLocalProperty(name, value);
      }
    }
  }
}
