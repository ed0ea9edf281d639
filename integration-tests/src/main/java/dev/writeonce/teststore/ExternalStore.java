package dev.writeonce.teststore;

import java.io.IOException;
import java.net.URI;

/**
 * An S3 endpoint given in the environment (a Ceph RGW, AWS S3, or a MinIO elsewhere):
 *
 * <pre>
 * WRITEONCE_S3_ENDPOINT    e.g. http://rgw.example:8080 or https://s3.eu-west-1.amazonaws.com
 * WRITEONCE_S3_REGION      default us-east-1
 * WRITEONCE_S3_ACCESS_KEY, WRITEONCE_S3_SECRET_KEY
 * WRITEONCE_S3_METRICS     how to read the store's own counters: "minio" (its Prometheus
 *                          endpoint, public) or "rgw-usage:&lt;uid&gt;" (radosgw-admin on this host)
 * </pre>
 */
public final class ExternalStore extends AbstractTestStore {

  private ExternalStore(
      URI endpoint, String region, String key, String secret, TrafficMeter meter) {
    super("external", endpoint, meter, region, key, secret);
  }

  static ExternalStore fromEnvironment() throws IOException {
    URI endpoint = URI.create(require("WRITEONCE_S3_ENDPOINT"));
    String region = System.getenv().getOrDefault("WRITEONCE_S3_REGION", "us-east-1");
    String metrics = require("WRITEONCE_S3_METRICS");
    TrafficMeter meter;
    if (metrics.equals("minio")) {
      meter = new MinioMetricsMeter(endpoint);
    } else if (metrics.startsWith("rgw-usage:")) {
      meter = new RgwUsageMeter(null, metrics.substring("rgw-usage:".length()));
    } else {
      throw new IOException(
          "WRITEONCE_S3_METRICS=" + metrics + " is not understood: use minio or rgw-usage:<uid>");
    }
    return new ExternalStore(
        endpoint,
        region,
        require("WRITEONCE_S3_ACCESS_KEY"),
        require("WRITEONCE_S3_SECRET_KEY"),
        meter);
  }

  private static String require(String name) throws IOException {
    String value = System.getenv(name);
    if (value == null || value.isBlank()) {
      throw new IOException(
          name
              + " is not set: the 'external' store runs the suite against the endpoint given by"
              + " WRITEONCE_S3_ENDPOINT, _ACCESS_KEY, _SECRET_KEY and _METRICS");
    }
    return value;
  }

  @Override
  public void close() {
    adminClient().close();
  }
}
