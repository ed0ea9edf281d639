package dev.writeonce.spark;

import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.json.SuccessDataFormat;
import dev.writeonce.core.model.SuccessData;
import dev.writeonce.magic.MagicS3AFileSystem;
import dev.writeonce.teststore.BucketView;
import dev.writeonce.teststore.TestStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.sql.SparkSession;

/** What every Spark test session shares: loopback only, the protocol, the store's settings. */
final class SparkSessions {

  private SparkSessions() {}

  static SparkSession.Builder builder(String master, TestStore store, Path scratch) {
    return plainBuilder(master, store)
        .config("spark.sql.sources.commitProtocolClass", WriteonceCommitProtocol.class.getName())
        .config("spark.hadoop.fs.s3a.impl", MagicS3AFileSystem.class.getName())
        .config(
            "spark.hadoop." + CommitterConfig.STAGING_DIR, scratch.resolve("staging").toString());
  }

  /** A session with Spark's own commit protocol: no setting of this library. */
  static SparkSession.Builder plainBuilder(String master, TestStore store) {
    SparkSession.Builder builder =
        SparkSession.builder()
            .master(master)
            .appName("writeonce-it")
            .config("spark.ui.enabled", "false")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1");
    for (Map.Entry<String, String> setting : store.configure(new Configuration(false))) {
      builder.config("spark.hadoop." + setting.getKey(), setting.getValue());
    }
    return builder;
  }

  /** The {@code _SUCCESS} under a directory of the bucket. */
  static SuccessData success(BucketView view, String dir) throws IOException {
    return SuccessDataFormat.fromJson(
        view.read(dir + "_SUCCESS").getBytes(StandardCharsets.UTF_8), view.uri(dir + "_SUCCESS"));
  }
}
