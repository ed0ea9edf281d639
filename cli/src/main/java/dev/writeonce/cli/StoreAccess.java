package dev.writeonce.cli;

import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.engine.JobLayout;
import dev.writeonce.core.errors.ErrorKind;
import dev.writeonce.core.errors.StoreException;
import dev.writeonce.core.model.Destination;
import dev.writeonce.core.store.S3StoreGateway;
import dev.writeonce.core.store.StoreGateway;
import dev.writeonce.core.store.check.StoreTrust;
import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * The destination a command works on and how to reach it: Hadoop settings from {@code
 * HADOOP_CONF_DIR}, {@code --conf-file} and {@code --conf}, so endpoint and credentials are those
 * of the jobs ({@code fs.s3a.*}). Setting values are never printed.
 */
final class StoreAccess implements AutoCloseable {

  static final class Options {
    @Parameters(index = "0", paramLabel = "DESTINATION", description = "s3a://bucket/path/")
    String destination;

    @Option(
        names = "--conf",
        paramLabel = "KEY=VALUE",
        description = "a Hadoop setting, for example fs.s3a.endpoint=http://rgw:7480 (repeatable)")
    List<String> settings = new ArrayList<>();

    @Option(
        names = "--conf-file",
        paramLabel = "FILE",
        description = "a Hadoop configuration file such as core-site.xml (repeatable)")
    List<File> files = new ArrayList<>();
  }

  private final FileSystem fs;
  final StoreGateway gateway;
  final Destination destination;
  final JobLayout layout;
  final CommitterConfig config;

  private StoreAccess(FileSystem fs, Destination destination, CommitterConfig config) {
    this.fs = fs;
    this.gateway = S3StoreGateway.forFileSystem(fs);
    this.destination = destination;
    this.layout = new JobLayout(destination);
    this.config = config;
  }

  static StoreAccess open(Options options) throws IOException {
    Destination destination;
    try {
      destination = Destination.of(options.destination);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "'" + options.destination + "' is not a destination: " + e.getMessage(), e);
    }
    Configuration conf = new Configuration();
    String confDir = System.getenv("HADOOP_CONF_DIR");
    if (confDir != null) {
      File site = new File(confDir, "core-site.xml");
      if (site.isFile()) {
        conf.addResource(new org.apache.hadoop.fs.Path(site.toURI()));
      }
    }
    for (File file : options.files) {
      if (!file.isFile()) {
        throw new IllegalArgumentException("--conf-file " + file + ": no such file");
      }
      conf.addResource(new org.apache.hadoop.fs.Path(file.toURI()));
    }
    for (String setting : options.settings) {
      int equals = setting.indexOf('=');
      if (equals <= 0) {
        throw new IllegalArgumentException(
            "--conf expects KEY=VALUE, got a setting without '=' (" + setting.length() + " chars)");
      }
      conf.set(setting.substring(0, equals).trim(), setting.substring(equals + 1));
    }
    CommitterConfig config = CommitterConfig.from(conf);
    FileSystem fs = FileSystem.newInstance(URI.create(destination.toString()), conf);
    StoreAccess access = new StoreAccess(fs, destination, config);
    access.checkReachable();
    return access;
  }

  /**
   * Refuses a command that writes when the store does not honour what the library's guarantees rest
   * on ({@link StoreTrust}); the check runs once per store per process.
   */
  void requireTrustedStore(String command) throws IOException {
    StoreTrust.require(
        fs, destination.prefix(), fs.getConf(), "writeonce " + command + " on " + destination);
  }

  FileSystem fileSystem() {
    return fs;
  }

  /** One LIST, so that a missing bucket or refused credentials fail with a clear message. */
  private void checkReachable() throws IOException {
    try {
      gateway.listChildren(destination.prefix(), 1);
    } catch (StoreException e) {
      String reason =
          e.is(ErrorKind.NOT_FOUND) || e.statusCode() == 404
              ? "the bucket does not exist (check the bucket name and fs.s3a.endpoint)"
              : e.statusCode() == 403
                  ? "access denied: check the credentials (fs.s3a.access.key and fs.s3a.secret.key,"
                      + " or fs.s3a.aws.credentials.provider) and the bucket policy"
                  : e.getMessage();
      // The store's own message is in the reason; the SDK's exception stays for a debugger.
      IOException failure = new IOException("cannot read " + destination + ": " + reason);
      failure.addSuppressed(e);
      close();
      throw failure;
    }
  }

  @Override
  public void close() throws IOException {
    fs.close();
  }
}
