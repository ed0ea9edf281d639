package dev.writeonce.teststore;

import java.io.IOException;
import java.net.URI;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import software.amazon.awssdk.services.s3.S3Client;

/** A real S3 endpoint the suite runs against, with a meter of its own counters. */
public interface TestStore extends AutoCloseable {

  /** A short name for reports: minio, ceph-rgw, seaweedfs, external. */
  String name();

  URI endpoint();

  /** Reads the store's own request and traffic counters. */
  TrafficMeter meter();

  /** A client for test set-up and checks, outside the code under test. */
  S3Client adminClient();

  /** Creates a new empty bucket whose name starts with the hint. */
  String newBucket(String hint) throws IOException;

  /** Adds the {@code fs.s3a.*} settings that reach this store to a Hadoop configuration. */
  Configuration configure(Configuration conf);

  /**
   * The {@code fs.s3a.*} settings this store needs when commit code writes empty objects through
   * S3A (directory markers, {@code _SUCCESS}), as FileOutputCommitter and Hive do, with or without
   * the shim. None for most stores.
   */
  default Map<String, String> emptyObjectSettings() {
    return Map.of();
  }

  /** Stops the store, if this process started it, and frees its resources. */
  @Override
  void close() throws IOException;
}
