package dev.writeonce.core.committer;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeSet;
import org.apache.hadoop.conf.Configuration;

/**
 * The one way to find a committer by name: the {@link CommitterProvider}s on the classpath, through
 * {@link ServiceLoader}. The Hadoop factory and the Spark protocol both find theirs here.
 */
public final class CommitterProviders {

  /** The committers this library ships, and the jar that holds each. */
  private static final Map<String, String> SHIPPED =
      Map.of(
          "directory",
          "committer-staging",
          "partitioned",
          "committer-staging",
          "magic",
          "committer-magic");

  private CommitterProviders() {}

  /** The committer {@link WriteonceCommitterFactory#COMMITTER} names, in lower case. */
  public static String nameIn(Configuration conf) {
    return conf.getTrimmed(
            WriteonceCommitterFactory.COMMITTER, WriteonceCommitterFactory.COMMITTER_DEFAULT)
        .toLowerCase(Locale.ROOT);
  }

  /**
   * The provider of the named committer.
   *
   * @param loader where to look: the job's class loader
   * @throws IOException naming the committers found, and the jars that hold the others
   */
  public static CommitterProvider find(String name, ClassLoader loader) throws IOException {
    List<String> known = new ArrayList<>();
    for (CommitterProvider provider : ServiceLoader.load(CommitterProvider.class, loader)) {
      if (provider.name().equals(name)) {
        return provider;
      }
      known.add(provider.name());
    }
    throw new IOException(notFound(name, known));
  }

  static String notFound(String name, List<String> found) {
    String setting = WriteonceCommitterFactory.COMMITTER + " = '" + name + "'";
    if (!SHIPPED.containsKey(name)) {
      Set<String> names = new TreeSet<>(SHIPPED.keySet());
      names.addAll(found);
      String message =
          setting + " is not a committer's name: use one of " + String.join(", ", names);
      if (name.indexOf('#') >= 0 || name.chars().anyMatch(Character::isWhitespace)) {
        message +=
            ". A comment after a value in a properties file becomes part of the value: put"
                + " comments on lines of their own";
      }
      return message;
    }
    return setting
        + " is a committer of this library, but its jar, "
        + SHIPPED.get(name)
        + ", is not on the job's class path (committers found: "
        + (found.isEmpty() ? "none" : String.join(", ", found))
        + "). Ship the engine's bundle (writeonce-spark_2.13, writeonce-hadoop or writeonce-hive),"
        + " which holds every committer";
  }
}
