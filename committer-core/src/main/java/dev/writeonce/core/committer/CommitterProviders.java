package dev.writeonce.core.committer;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.ServiceLoader;
import org.apache.hadoop.conf.Configuration;

/**
 * The one way to find a committer by name: the {@link CommitterProvider}s on the classpath, through
 * {@link ServiceLoader}. The Hadoop factory and the Spark protocol both find theirs here.
 */
public final class CommitterProviders {

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
    throw new IOException(
        WriteonceCommitterFactory.COMMITTER
            + "="
            + name
            + " names no committer on the classpath (found: "
            + (known.isEmpty() ? "none" : String.join(", ", known))
            + "); add the committer-staging jar (directory, partitioned) or the committer-magic"
            + " jar (magic), or pick one of those found");
  }
}
