package dev.writeonce.teststore;

import java.io.IOException;
import java.net.URI;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import org.apache.hadoop.conf.Configuration;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3ClientBuilder;

/** What every store shares: S3A settings, an admin client, bucket creation. */
abstract class AbstractTestStore implements TestStore {

  private final String name;
  private final URI endpoint;
  private final TrafficMeter meter;
  private final String region;
  private final String accessKey;
  private final String secretKey;
  private final S3Client admin;

  AbstractTestStore(
      String name,
      URI endpoint,
      TrafficMeter meter,
      String region,
      String accessKey,
      String secretKey) {
    this.name = name;
    this.endpoint = endpoint;
    this.meter = meter;
    this.region = region;
    this.accessKey = accessKey;
    this.secretKey = secretKey;
    S3ClientBuilder builder =
        S3Client.builder()
            .endpointOverride(endpoint)
            .region(Region.of(region))
            .forcePathStyle(true)
            .credentialsProvider(
                StaticCredentialsProvider.create(AwsBasicCredentials.create(accessKey, secretKey)))
            .httpClientBuilder(ApacheHttpClient.builder().maxConnections(64));
    this.admin = checksumsOnlyWhenRequired(builder).build();
  }

  /**
   * SDK 2.30 and later send checksum trailers with every upload, which RGW 16.2 refuses (400); S3A
   * 3.5 turns them off for its own client, and the admin client does the same. Reflection, because
   * the previous line's SDK (2.29) has no such setting, and sends none.
   */
  private static S3ClientBuilder checksumsOnlyWhenRequired(S3ClientBuilder builder) {
    setEnum(builder, "requestChecksumCalculation", "core.checksums.RequestChecksumCalculation");
    setEnum(builder, "responseChecksumValidation", "core.checksums.ResponseChecksumValidation");
    return builder;
  }

  private static void setEnum(S3ClientBuilder builder, String setter, String enumClass) {
    Class<?> type;
    try {
      type = Class.forName("software.amazon.awssdk." + enumClass);
    } catch (ClassNotFoundException e) {
      return; // an SDK before 2.30
    }
    try {
      Object whenRequired = type.getField("WHEN_REQUIRED").get(null);
      S3ClientBuilder.class.getMethod(setter, type).invoke(builder, whenRequired);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot set " + setter + " on the SDK's S3 client", e);
    }
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public TrafficMeter meter() {
    return meter;
  }

  @Override
  public URI endpoint() {
    return endpoint;
  }

  @Override
  public S3Client adminClient() {
    return admin;
  }

  @Override
  public String newBucket(String hint) throws IOException {
    // Jobs earlier tests left unended would renew their leases into this test's request counts.
    dev.writeonce.core.engine.JobRecords.releaseEveryLeaseOfThisProcess();
    String name =
        (hint + "-" + Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36))
            .toLowerCase(Locale.ROOT)
            .replaceAll("[^a-z0-9-]", "-");
    name = name.length() > 63 ? name.substring(0, 63) : name;
    try {
      String bucket = name;
      admin.createBucket(b -> b.bucket(bucket));
    } catch (SdkException e) {
      throw new IOException("could not create bucket " + name + " on " + this, e);
    }
    return name;
  }

  @Override
  public Configuration configure(Configuration conf) {
    conf.set("fs.s3a.endpoint", endpoint.toString());
    conf.set("fs.s3a.endpoint.region", region);
    conf.setBoolean("fs.s3a.path.style.access", true);
    conf.setBoolean("fs.s3a.connection.ssl.enabled", "https".equals(endpoint.getScheme()));
    conf.set(
        "fs.s3a.aws.credentials.provider", "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider");
    conf.set("fs.s3a.access.key", accessKey);
    conf.set("fs.s3a.secret.key", secretKey);
    conf.setInt("fs.s3a.bucket.probe", 0);
    return conf;
  }

  @Override
  public String toString() {
    return name() + " at " + endpoint;
  }
}
