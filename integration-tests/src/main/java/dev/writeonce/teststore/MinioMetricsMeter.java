package dev.writeonce.teststore;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * MinIO's server-side counters, from its Prometheus endpoint {@code /minio/metrics/v3/api/requests}
 * (the server must run with {@code MINIO_PROMETHEUS_AUTH_TYPE=public}).
 */
public final class MinioMetricsMeter implements TrafficMeter {

  private static final Pattern REQUESTS =
      Pattern.compile("^minio_api_requests_total\\{name=\"([A-Za-z0-9]+)\"[^}]*}\\s+(\\S+)$");
  private static final Pattern RECEIVED =
      Pattern.compile(
          "^minio_api_requests_traffic_received_bytes\\{[^}]*type=\"s3\"[^}]*}\\s+(\\S+)$");
  private static final Pattern SENT =
      Pattern.compile("^minio_api_requests_traffic_sent_bytes\\{[^}]*type=\"s3\"[^}]*}\\s+(\\S+)$");

  private static final Map<String, S3Api> NAMES =
      Map.ofEntries(
          Map.entry("PutObject", S3Api.PUT_OBJECT),
          Map.entry("CopyObject", S3Api.COPY_OBJECT),
          Map.entry("NewMultipartUpload", S3Api.CREATE_MULTIPART_UPLOAD),
          Map.entry("PutObjectPart", S3Api.UPLOAD_PART),
          Map.entry("CompleteMultipartUpload", S3Api.COMPLETE_MULTIPART_UPLOAD),
          Map.entry("AbortMultipartUpload", S3Api.ABORT_MULTIPART_UPLOAD),
          Map.entry("ListMultipartUploads", S3Api.LIST_MULTIPART_UPLOADS),
          Map.entry("ListObjectParts", S3Api.LIST_PARTS),
          Map.entry("GetObject", S3Api.GET_OBJECT),
          Map.entry("HeadObject", S3Api.HEAD_OBJECT),
          Map.entry("ListObjectsV2", S3Api.LIST_OBJECTS),
          Map.entry("ListObjectsV1", S3Api.LIST_OBJECTS),
          Map.entry("DeleteObject", S3Api.DELETE_OBJECT),
          Map.entry("DeleteMultipleObjects", S3Api.DELETE_OBJECTS));

  private final URI metrics;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

  public MinioMetricsMeter(URI endpoint) {
    this.metrics = endpoint.resolve("/minio/metrics/v3/api/requests");
  }

  @Override
  public String source() {
    return "MinIO server metrics " + metrics;
  }

  @Override
  public Traffic read() throws IOException {
    String body;
    try {
      HttpResponse<String> response =
          http.send(
              HttpRequest.newBuilder(metrics).timeout(Duration.ofSeconds(30)).GET().build(),
              HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() != 200) {
        throw new IOException(
            metrics
                + " answered HTTP "
                + response.statusCode()
                + ": start MinIO with"
                + " MINIO_PROMETHEUS_AUTH_TYPE=public");
      }
      body = response.body();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("reading " + metrics);
    }
    return parse(body);
  }

  static Traffic parse(String body) {
    EnumMap<S3Api, Long> requests = new EnumMap<>(S3Api.class);
    long received = 0;
    long sent = 0;
    for (String line : body.split("\n")) {
      Matcher m = REQUESTS.matcher(line);
      if (m.matches()) {
        S3Api api = NAMES.getOrDefault(m.group(1), S3Api.OTHER);
        requests.merge(api, (long) Double.parseDouble(m.group(2)), Long::sum);
        continue;
      }
      m = RECEIVED.matcher(line);
      if (m.matches()) {
        received += (long) Double.parseDouble(m.group(1));
        continue;
      }
      m = SENT.matcher(line);
      if (m.matches()) {
        sent += (long) Double.parseDouble(m.group(1));
      }
    }
    return new Traffic(requests, received, sent);
  }
}
