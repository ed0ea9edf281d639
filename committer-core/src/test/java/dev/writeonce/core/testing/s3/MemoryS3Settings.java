package dev.writeonce.core.testing.s3;

import java.io.File;
import org.apache.hadoop.conf.Configuration;

/**
 * The {@code fs.s3a.*} settings that start a real S3A filesystem on a {@link MemoryS3}: no network,
 * no local disk, no sleeping retries, as few threads as S3A allows.
 */
public final class MemoryS3Settings {

  private MemoryS3Settings() {}

  /**
   * A configuration without Hadoop's default files (so nothing on the classpath changes it) that
   * binds {@code s3a://} to the store registered under {@code endpoint}.
   */
  public static Configuration s3aConfiguration(String endpoint) {
    Configuration conf = new Configuration(false);
    apply(conf, endpoint);
    return conf;
  }

  /** Sets the settings of {@link #s3aConfiguration} on an existing configuration. */
  public static void apply(Configuration conf, String endpoint) {
    conf.set("fs.s3a.impl", "org.apache.hadoop.fs.s3a.S3AFileSystem");
    conf.set("fs.s3a.s3.client.factory.impl", MemoryS3ClientFactory.class.getName());
    conf.set("fs.s3a.endpoint", endpoint);
    conf.set("fs.s3a.endpoint.region", MemoryS3.REGION);
    conf.setBoolean("fs.s3a.path.style.access", true);
    conf.setBoolean("fs.s3a.connection.ssl.enabled", false);
    conf.set(
        "fs.s3a.aws.credentials.provider", "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider");
    conf.set("fs.s3a.access.key", "memory-access-key");
    conf.set("fs.s3a.secret.key", "memory-secret-key");
    // The store check has suites of its own; here the requests counted are the protocol's alone.
    conf.setBoolean("writeonce.store.check", false);
    // No HeadBucket at start: buckets exist on first use.
    conf.setInt("fs.s3a.bucket.probe", 0);
    // Each simulated process needs an instance of its own; the cache keys on the bucket only.
    conf.setBoolean("fs.s3a.impl.disable.cache", true);
    conf.set("fs.s3a.input.stream.type", "classic");
    // Blocks in (direct) memory, never on local disk; uploads and copies go multipart
    // at S3's least part size.
    conf.set("fs.s3a.fast.upload.buffer", "bytebuffer");
    conf.set("fs.s3a.buffer.dir", new File(System.getProperty("java.io.tmpdir"), "s3a").getPath());
    conf.set("fs.s3a.multipart.size", "5M");
    conf.set("fs.s3a.multipart.threshold", "5M");
    // S3A's own retries stay, without sleeping; the double does no SDK retries (attempts).
    conf.setInt("fs.s3a.retry.limit", 3);
    conf.set("fs.s3a.retry.interval", "0ms");
    conf.setInt("fs.s3a.retry.throttle.limit", 3);
    conf.set("fs.s3a.retry.throttle.interval", "0ms");
    conf.setInt("fs.s3a.attempts.maximum", 0);
    // The fewest pool threads S3A accepts, and idle ones gone after a second.
    conf.setInt("fs.s3a.threads.max", 2);
    conf.setInt("fs.s3a.max.total.tasks", 1);
    conf.set("fs.s3a.threads.keepalivetime", "1s");
  }
}
