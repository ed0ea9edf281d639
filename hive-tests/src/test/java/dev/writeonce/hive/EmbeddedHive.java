package dev.writeonce.hive;

import java.io.IOException;
import java.io.StringWriter;
import java.net.MalformedURLException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.ql.DriverFactory;
import org.apache.hadoop.hive.ql.IDriver;
import org.apache.hadoop.hive.ql.processors.CommandProcessorException;
import org.apache.hadoop.hive.ql.session.SessionState;
import org.apache.hadoop.security.alias.CredentialProvider;
import org.apache.hadoop.security.alias.CredentialProviderFactory;

/**
 * Real Hive in the test JVM: the Driver API on an embedded Derby metastore, running its jobs on
 * Hadoop's local runner or on Tez in local mode ({@link #use(Engine)}). Hive reads its settings
 * from a generated {@code hive-site.xml}, because it builds configuration objects of its own in
 * helper threads. Hive keeps that location and its sessions in static state, so a JVM holds one
 * embedded Hive at a time: a suite starts it once per store and closes it before the next, each
 * time with a new scratch directory.
 */
final class EmbeddedHive implements AutoCloseable {

  /** The engines Hive runs a statement's jobs on here, both in local mode in the test JVM. */
  enum Engine {
    /** Hadoop's local job runner. */
    MR,
    /** Tez in local mode. */
    TEZ;

    /** The value of {@code hive.execution.engine}. */
    String setting() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  private final HiveConf conf;
  private final SessionState session;
  private final Path scratch;

  private EmbeddedHive(HiveConf conf, SessionState session, Path scratch) {
    this.conf = conf;
    this.session = session;
    this.scratch = scratch;
  }

  /**
   * Starts Hive with the store's settings, the local runner, a Derby metastore in a new scratch
   * directory (removed by {@link #close}) and the given extra settings (the module's recommended
   * Hive settings, the shim).
   */
  static EmbeddedHive start(Configuration storeSettings, Map<String, String> settings)
      throws IOException {
    Path scratch = Files.createTempDirectory("writeonce-hive");
    // Derby logs to its working directory unless told otherwise.
    System.setProperty("derby.stream.error.file", scratch.resolve("derby.log").toString());
    Configuration site = new Configuration(false);
    storeSettings.forEach(entry -> site.set(entry.getKey(), entry.getValue()));
    keepSecretsInCredentialStore(site, scratch.resolve("s3a.jceks"));
    site.set(
        "javax.jdo.option.ConnectionURL",
        "jdbc:derby:;databaseName=" + scratch.resolve("metastore_db") + ";create=true");
    site.set("datanucleus.schema.autoCreateAll", "true");
    site.set("hive.metastore.schema.verification", "false");
    site.set("metastore.schema.verification", "false");
    site.set("hive.metastore.warehouse.dir", scratch.resolve("warehouse").toUri().toString());
    site.set(
        "hive.metastore.warehouse.external.dir",
        scratch.resolve("warehouse-external").toUri().toString());
    site.set("hive.execution.engine", Engine.MR.setting());
    site.set("mapreduce.framework.name", "local");
    // Tez in local mode, for statements run with hive.execution.engine=tez: the DAG's app master
    // and its tasks run in this JVM, shuffle reads the local disk, and Hive's jars are not
    // uploaded.
    site.set("tez.local.mode", "true");
    site.set("tez.runtime.optimize.local.fetch", "true");
    site.set("tez.ignore.lib.uris", "true");
    site.set("tez.staging-dir", scratch.resolve("tez-staging").toString());
    site.set("hive.jar.directory", scratch.resolve("hive-jars").toString());
    site.set("hive.user.install.directory", scratch.resolve("hive-install").toString());
    site.set("fs.defaultFS", "file:///");
    site.set("hive.exec.submitviachild", "false");
    site.set("hive.exec.submit.local.task.via.child", "false");
    site.set("hive.exec.scratchdir", scratch.resolve("hive-scratch").toString());
    site.set("hive.exec.local.scratchdir", scratch.resolve("hive-local-scratch").toString());
    site.set("hive.downloaded.resources.dir", scratch.resolve("hive-resources").toString());
    site.set("hive.querylog.location", scratch.resolve("hive-querylog").toString());
    site.set("hadoop.tmp.dir", scratch.resolve("hadoop").toString());
    site.set("mapreduce.jobtracker.staging.root.dir", scratch.resolve("mr-staging").toString());
    site.set("mapreduce.cluster.local.dir", scratch.resolve("mr-local").toString());
    site.set("hive.stats.autogather", "false");
    site.set("hive.stats.column.autogather", "false");
    site.set("hive.server2.logging.operation.enabled", "false");
    site.set("hive.metastore.event.db.notification.api.auth", "false");
    settings.forEach(site::set);

    Path siteFile = scratch.resolve("hive-site.xml");
    StringWriter xml = new StringWriter();
    site.writeXml(xml);
    Files.writeString(siteFile, xml.toString(), StandardCharsets.UTF_8);
    try {
      HiveConf.setHiveSiteLocation(siteFile.toUri().toURL());
    } catch (MalformedURLException e) {
      throw new IOException(e);
    }
    HiveConf conf = new HiveConf(SessionState.class);
    SessionState session = new SessionState(conf);
    SessionState.start(session);
    return new EmbeddedHive(conf, session, scratch);
  }

  /**
   * Moves the S3A keys out of the settings into a Hadoop credential store that the settings name,
   * as a cluster keeps them. Hive strips the keys named in {@code hive.conf.hidden.list}, S3A's
   * among them, from the configuration it gives a Tez DAG, so tasks on Tez read them from there.
   */
  private static void keepSecretsInCredentialStore(Configuration site, Path store)
      throws IOException {
    String location = "jceks://file" + store.toAbsolutePath();
    Configuration providerSettings = new Configuration(false);
    providerSettings.set(CredentialProviderFactory.CREDENTIAL_PROVIDER_PATH, location);
    CredentialProvider provider = CredentialProviderFactory.getProviders(providerSettings).get(0);
    for (String key : SECRET_KEYS) {
      String value = site.get(key);
      if (value != null) {
        provider.createCredentialEntry(key, value.toCharArray());
        site.unset(key);
      }
    }
    provider.flush();
    site.set(CredentialProviderFactory.CREDENTIAL_PROVIDER_PATH, location);
  }

  private static final List<String> SECRET_KEYS =
      List.of("fs.s3a.access.key", "fs.s3a.secret.key", "fs.s3a.session.token");

  /** Runs the next statements on the given engine. */
  void use(Engine engine) {
    conf.set("hive.execution.engine", engine.setting());
  }

  HiveConf conf() {
    return conf;
  }

  /** Runs one statement; fails with Hive's message when Hive refuses or fails it. */
  void execute(String sql) {
    query(sql);
  }

  /**
   * Runs one statement in a session of its own, started in the calling thread (Hive keeps its
   * session per thread), as a second client of the same HiveServer2 would; with the given settings
   * on top of this Hive's.
   */
  void executeInNewSession(String sql, Map<String, String> settings) throws IOException {
    HiveConf own = new HiveConf(conf);
    // A session takes the id its configuration names: without this, the copy would share this
    // session's id, and so its scratch directories, which the first session to close deletes.
    own.unset("hive.session.id");
    settings.forEach(own::set);
    SessionState other = new SessionState(own);
    SessionState.start(other);
    try {
      query(own, sql);
    } finally {
      other.close();
      SessionState.detachSession();
    }
  }

  /** Runs one statement and returns its rows, tab-separated as Hive prints them. */
  List<String> query(String sql) {
    return query(conf, sql);
  }

  private static List<String> query(HiveConf conf, String sql) {
    IDriver driver = DriverFactory.newDriver(conf);
    try {
      driver.run(sql);
      List<String> rows = new ArrayList<>();
      List<String> batch = new ArrayList<>();
      while (driver.getResults(batch)) {
        rows.addAll(batch);
        batch.clear();
      }
      return rows;
    } catch (CommandProcessorException | IOException e) {
      throw new IllegalStateException("Hive failed: " + sql + ": " + e.getMessage(), e);
    } finally {
      driver.close();
      driver.destroy();
    }
  }

  @Override
  public void close() throws IOException {
    try {
      session.close();
    } finally {
      try (var paths = Files.walk(scratch)) {
        paths.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
      }
    }
  }
}
