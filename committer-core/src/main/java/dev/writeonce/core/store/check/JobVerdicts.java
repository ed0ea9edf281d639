package dev.writeonce.core.store.check;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import org.apache.hadoop.conf.Configuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A driver's store verdict travelling with its job, so that the job's tasks take it instead of
 * checking the store again: in the job's configuration (the committers put it there at job setup)
 * and through each engine's own way of passing values from a driver to its tasks ({@link Channel},
 * found with {@link ServiceLoader}; Spark's passes it in the job's local properties, which reach
 * the tasks of a job that keeps Spark's default protocol and writes through the rename shim).
 *
 * <p>A verdict is carried under a name that holds its endpoint, and taken only for that endpoint.
 */
public final class JobVerdicts {

  private static final Logger LOG = LoggerFactory.getLogger(JobVerdicts.class);

  /** The configuration key (and local property) prefix; the endpoint and bucket follow it. */
  public static final String PREFIX = "writeonce.store.check.verdict.";

  /**
   * An engine's way of passing a value from the driver of a job to the job's tasks. {@link
   * #publish} is called where a verdict was taken (in a driver: before its job's tasks are sent);
   * {@link #read} where a verdict is needed (in a task).
   */
  public interface Channel {

    /** The value the driver passed under this name to the task running on this thread. */
    Optional<String> read(String name);

    /** Passes a value to the tasks of the jobs this thread submits next; nothing in a task. */
    void publish(String name, String value);
  }

  private static final List<Channel> CHANNELS = load();

  private JobVerdicts() {}

  /** The name a verdict for a bucket of an endpoint travels under. */
  static String nameOf(String endpoint, String bucket) {
    return PREFIX + StoreCheck.normalized(endpoint) + "/" + bucket;
  }

  private static String nameOf(StoreReport report) {
    return nameOf(report.endpoint(), report.bucket());
  }

  /** Puts a verdict into a job's configuration, for the job's tasks; it ages from its check. */
  static void carry(Configuration jobConf, StoreVerdicts.Taken verdict) {
    jobConf.set(
        nameOf(verdict.report()),
        VerdictFormat.write(verdict.report(), verdict.recordedAtMillis(), false));
  }

  /**
   * Passes a verdict through the engine's channels to the tasks of the next jobs of this thread.
   */
  static void publish(StoreVerdicts.Taken verdict) {
    if (CHANNELS.isEmpty()) {
      return;
    }
    String value = VerdictFormat.write(verdict.report(), verdict.recordedAtMillis(), false);
    for (Channel channel : CHANNELS) {
      try {
        channel.publish(nameOf(verdict.report()), value);
      } catch (RuntimeException | LinkageError e) {
        LOG.debug("Store verdict not passed through {}: {}", channel.getClass(), e.toString());
      }
    }
  }

  /**
   * The verdict the job carries for a bucket of an endpoint: its configuration's first, else a
   * channel's.
   */
  static Optional<VerdictFormat.Recorded> carried(
      Configuration conf, String endpoint, String bucket) {
    String name = nameOf(endpoint, bucket);
    Optional<VerdictFormat.Recorded> fromConf = parse(conf.getRaw(name), endpoint, bucket);
    if (fromConf.isPresent()) {
      return fromConf;
    }
    for (Channel channel : CHANNELS) {
      try {
        Optional<VerdictFormat.Recorded> passed =
            parse(channel.read(name).orElse(null), endpoint, bucket);
        if (passed.isPresent()) {
          return passed;
        }
      } catch (RuntimeException | LinkageError e) {
        LOG.debug("Store verdict not read through {}: {}", channel.getClass(), e.toString());
      }
    }
    return Optional.empty();
  }

  private static Optional<VerdictFormat.Recorded> parse(
      String text, String endpoint, String bucket) {
    if (text == null) {
      return Optional.empty();
    }
    return VerdictFormat.read(text)
        .filter(
            recorded ->
                recorded.report().endpoint().equals(StoreCheck.normalized(endpoint))
                    && recorded.report().bucket().equals(bucket));
  }

  private static List<Channel> load() {
    List<Channel> found = new ArrayList<>();
    try {
      for (Channel channel :
          ServiceLoader.load(Channel.class, JobVerdicts.class.getClassLoader())) {
        found.add(channel);
      }
    } catch (ServiceConfigurationError | LinkageError e) {
      // An engine whose classes are missing here (a bundle on another engine's classpath).
      LOG.debug("A store verdict channel could not be loaded: {}", e.toString());
    }
    return List.copyOf(found);
  }
}
