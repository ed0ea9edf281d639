package dev.writeonce.teststore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.writeonce.teststore.StoreRelay.Alteration;
import dev.writeonce.teststore.StoreRelay.Fault;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.ContentStreamProvider;
import software.amazon.awssdk.http.SdkHttpFullRequest;
import software.amazon.awssdk.http.SdkHttpMethod;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner;
import software.amazon.awssdk.http.auth.spi.signer.HttpSigner;
import software.amazon.awssdk.http.auth.spi.signer.SignedRequest;
import software.amazon.awssdk.identity.spi.AwsCredentialsIdentity;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

/** The relay's hooks against a small HTTP server that plays the store: no real store needed. */
class StoreRelayTest {

  private static final String ACCESS_KEY = "relay-test-key";
  private static final String SECRET_KEY = "relay-test-secret";
  private static final String REGION = "us-east-1";
  private static final String LISTING =
      "<ListBucketResult><IsTruncated>true</IsTruncated><Contents><Key>a</Key></Contents>"
          + "</ListBucketResult>";

  /** A request as the store received it; header names in lower case. */
  private record Received(
      String method, String rawPath, String rawQuery, Map<String, String> headers, byte[] body) {

    String header(String name) {
      return headers.get(name.toLowerCase(Locale.ROOT));
    }
  }

  private HttpServer upstream;
  private StoreRelay relay;
  private final AtomicLong bodyBytesSeen = new AtomicLong();
  private final List<Received> received = new CopyOnWriteArrayList<>();
  private final HttpClient http =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @BeforeEach
  void startUpstream() throws IOException {
    upstream = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    upstream.createContext("/", this::answer);
    upstream.start();
    relay = StoreRelay.start(URI.create("http://127.0.0.1:" + upstream.getAddress().getPort()));
  }

  private void answer(HttpExchange exchange) throws IOException {
    byte[] requestBody = exchange.getRequestBody().readAllBytes();
    bodyBytesSeen.addAndGet(requestBody.length);
    Map<String, String> headers = new TreeMap<>();
    exchange
        .getRequestHeaders()
        .forEach((name, values) -> headers.put(name.toLowerCase(Locale.ROOT), values.get(0)));
    String method = exchange.getRequestMethod();
    URI uri = exchange.getRequestURI();
    received.add(new Received(method, uri.getRawPath(), uri.getRawQuery(), headers, requestBody));
    String path = uri.getPath();
    if (method.equals("DELETE")) {
      exchange.sendResponseHeaders(204, -1);
    } else if (method.equals("HEAD")) {
      exchange.getResponseHeaders().set("Content-Length", "5000");
      exchange.sendResponseHeaders(200, -1);
    } else if (path.endsWith("/signed")) {
      exchange.getResponseHeaders().set("ETag", "\"etag\"");
      exchange.sendResponseHeaders(200, -1);
    } else if (method.equals("GET") && "list-type=2".equals(uri.getRawQuery())) {
      byte[] body = LISTING.getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", "application/xml");
      exchange.sendResponseHeaders(200, path.endsWith("/chunked") ? 0 : body.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    } else if (path.endsWith("/chunked")) {
      exchange.sendResponseHeaders(200, 0); // chunked
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(new byte[3000]);
        out.flush();
        out.write(new byte[1000]);
      }
    } else {
      byte[] body = new byte[method.equals("GET") ? 1234 : 10];
      exchange.sendResponseHeaders(200, body.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    }
    exchange.close();
  }

  @AfterEach
  void stop() throws IOException {
    relay.close();
    upstream.stop(0);
  }

  // ---- counting ----

  @Test
  void countsEachRequestAndTheBodyBytesEachWayAsTheyPassUnchanged() throws Exception {
    Traffic before = relay.read();

    HttpResponse<byte[]> put =
        send(
            HttpRequest.newBuilder(url("/b/k?partNumber=1&uploadId=u"))
                .PUT(HttpRequest.BodyPublishers.ofByteArray(new byte[100_000])));
    HttpResponse<byte[]> chunkedPut =
        send(
            HttpRequest.newBuilder(url("/b/k2"))
                .PUT(
                    HttpRequest.BodyPublishers.ofInputStream(
                        () -> new ByteArrayInputStream(new byte[70_000]))));
    HttpResponse<byte[]> get = send(HttpRequest.newBuilder(url("/b/k")).GET());
    HttpResponse<byte[]> head =
        send(
            HttpRequest.newBuilder(url("/b/k"))
                .method("HEAD", HttpRequest.BodyPublishers.noBody()));
    HttpResponse<byte[]> chunkedGet = send(HttpRequest.newBuilder(url("/b/chunked")).GET());
    HttpResponse<byte[]> delete = send(HttpRequest.newBuilder(url("/b/k")).DELETE());
    HttpResponse<byte[]> again = send(HttpRequest.newBuilder(url("/b/k")).GET());

    assertThat(put.statusCode()).isEqualTo(200);
    assertThat(chunkedPut.statusCode()).isEqualTo(200);
    assertThat(get.body()).hasSize(1234);
    assertThat(head.body()).isEmpty();
    assertThat(chunkedGet.body()).hasSize(4000);
    assertThat(delete.statusCode()).isEqualTo(204);
    assertThat(again.body()).hasSize(1234);
    assertThat(bodyBytesSeen.get()).isEqualTo(170_000);
    Traffic traffic = relay.read().minus(before);
    assertThat(traffic.requests(S3Api.UPLOAD_PART)).isEqualTo(1);
    assertThat(traffic.requests(S3Api.PUT_OBJECT)).isEqualTo(1);
    assertThat(traffic.requests(S3Api.GET_OBJECT)).isEqualTo(3);
    assertThat(traffic.requests(S3Api.HEAD_OBJECT)).isEqualTo(1);
    assertThat(traffic.requests(S3Api.DELETE_OBJECT)).isEqualTo(1);
    assertThat(traffic.totalRequests()).isEqualTo(7);
    assertThat(traffic.bytesReceived()).isEqualTo(170_000);
    assertThat(traffic.bytesSent()).isEqualTo(10 + 10 + 1234 + 4000 + 1234);
  }

  // ---- alterations ----

  @Test
  void aDroppedHeaderReachesTheStoreAsTheClientsOwnRequestWithoutItSignedAgain() {
    relay
        .signingWith(ACCESS_KEY, SECRET_KEY, REGION)
        .alter(StoreRelay.Request::isPutObject, new Alteration.DropHeader("If-None-Match"));

    try (S3Client s3 = client()) {
      s3.putObject(
          b -> b.bucket("b").key("signed").ifNoneMatch("*"), RequestBody.fromString("payload"));
    }

    assertThat(relay.altered()).isEqualTo(1);
    assertThat(received).hasSize(1);
    Received put = received.get(0);
    assertThat(put.header("If-None-Match")).isNull();
    assertThat(new String(put.body(), StandardCharsets.UTF_8)).isEqualTo("payload");
    assertSignedByTheStoresCredentials(put);
    assertThat(relay.read().requests(S3Api.PUT_OBJECT)).isEqualTo(1);
  }

  @Test
  void aRequestWithoutTheDroppedHeaderPassesUnaltered() {
    relay
        .signingWith(ACCESS_KEY, SECRET_KEY, REGION)
        .alter(StoreRelay.Request::isPutObject, new Alteration.DropHeader("If-Match"));

    try (S3Client s3 = client()) {
      s3.putObject(b -> b.bucket("b").key("signed"), RequestBody.fromString("payload"));
    }

    assertThat(relay.altered()).isZero();
    assertThat(received).hasSize(1);
  }

  @Test
  void aFakedAnswerNeverReachesTheStore() throws Exception {
    relay.alter(
        r -> r.operation() == S3Api.DELETE_OBJECT && r.path().endsWith("/kept"),
        new Alteration.FakeAnswer(204));

    HttpResponse<byte[]> faked = send(HttpRequest.newBuilder(url("/b/kept")).DELETE());
    HttpResponse<byte[]> real = send(HttpRequest.newBuilder(url("/b/gone")).DELETE());

    assertThat(faked.statusCode()).isEqualTo(204);
    assertThat(real.statusCode()).isEqualTo(204);
    assertThat(received).extracting(Received::rawPath).containsExactly("/b/gone");
    assertThat(relay.altered()).isEqualTo(1);
    assertThat(relay.read().requests(S3Api.DELETE_OBJECT)).isEqualTo(2);
  }

  @Test
  void aRewrittenAnswerReachesTheClientWithItsNewBodyWhetherTheStoreSentItChunkedOrNot()
      throws Exception {
    relay.alter(
        r -> r.operation() == S3Api.LIST_OBJECTS,
        new Alteration.RewriteAnswer(
            body -> body.replaceAll("(?s)<Contents>.*?</Contents>", "").replace("true", "false")));

    for (String bucket : List.of("/b", "/chunked")) {
      HttpResponse<byte[]> listing =
          send(HttpRequest.newBuilder(url(bucket + "?list-type=2")).GET());
      assertThat(listing.statusCode()).isEqualTo(200);
      assertThat(new String(listing.body(), StandardCharsets.UTF_8))
          .isEqualTo("<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>");
    }
    assertThat(received).hasSize(2);
    assertThat(relay.altered()).isEqualTo(2);
  }

  @Test
  void healedRequestsPassUntouched() throws Exception {
    relay.alter(r -> true, new Alteration.FakeAnswer(204));
    relay.inject(r -> true, Fault.STATUS_500, 10);
    relay.heal();

    HttpResponse<byte[]> get = send(HttpRequest.newBuilder(url("/b/k")).GET());

    assertThat(get.body()).hasSize(1234);
    assertThat(received).hasSize(1);
    assertThat(relay.altered()).isZero();
    assertThat(relay.injected()).isZero();
  }

  // ---- faults ----

  @Test
  void anInjectedStatusAnswersTheMatchingRequestsInsteadOfTheStoreAsManyTimesAsAsked()
      throws Exception {
    relay.inject(StoreRelay.Request::isUploadPart, Fault.STATUS_503, 1);

    HttpResponse<byte[]> first =
        send(
            HttpRequest.newBuilder(url("/b/k?partNumber=1&uploadId=u"))
                .PUT(HttpRequest.BodyPublishers.ofByteArray(new byte[10])));
    HttpResponse<byte[]> second =
        send(
            HttpRequest.newBuilder(url("/b/k?partNumber=1&uploadId=u"))
                .PUT(HttpRequest.BodyPublishers.ofByteArray(new byte[10])));

    assertThat(first.statusCode()).isEqualTo(503);
    assertThat(new String(first.body(), StandardCharsets.UTF_8)).contains("<Code>SlowDown</Code>");
    assertThat(second.statusCode()).isEqualTo(200);
    assertThat(received).hasSize(1);
    assertThat(relay.injected()).isEqualTo(1);
  }

  @Test
  void aResetBeforeTheStoreKeepsTheRequestFromItAndAResetAfterLosesOnlyTheAnswer() {
    relay.byOrdinal(n -> n == 1 ? Fault.RESET_BEFORE : Fault.RESET_AFTER_STORE_ACTED);

    assertThatThrownBy(() -> send(complete("/b/before"))).isInstanceOf(IOException.class);
    assertThat(received).isEmpty();
    assertThatThrownBy(() -> send(complete("/b/after"))).isInstanceOf(IOException.class);
    assertThat(received).extracting(Received::rawPath).containsExactly("/b/after");

    assertThat(relay.numbered())
        .containsExactly("1 POST /b/before?uploadId=u", "2 POST /b/after?uploadId=u");
    assertThat(relay.injected()).isEqualTo(2);
  }

  // ---- helpers ----

  private HttpRequest.Builder complete(String path) {
    return HttpRequest.newBuilder(url(path + "?uploadId=u"))
        .POST(HttpRequest.BodyPublishers.ofString("<CompleteMultipartUpload/>"));
  }

  private S3Client client() {
    return S3Client.builder()
        .endpointOverride(relay.endpoint())
        .region(Region.of(REGION))
        .forcePathStyle(true)
        .credentialsProvider(
            StaticCredentialsProvider.create(AwsBasicCredentials.create(ACCESS_KEY, SECRET_KEY)))
        .httpClientBuilder(ApacheHttpClient.builder())
        .build();
  }

  /** Signs what the store received again, at the time it says, and compares the signatures. */
  private static void assertSignedByTheStoresCredentials(Received request) {
    String authorization = request.header("Authorization");
    Matcher signedHeaders = Pattern.compile("SignedHeaders=([^,]+)").matcher(authorization);
    assertThat(signedHeaders.find()).as(authorization).isTrue();
    assertThat(signedHeaders.group(1).split(";")).doesNotContain("if-none-match");
    String host = request.header("Host");
    int colon = host.lastIndexOf(':');
    SdkHttpFullRequest.Builder unsigned =
        SdkHttpFullRequest.builder()
            .method(SdkHttpMethod.fromValue(request.method()))
            .protocol("http")
            .host(host.substring(0, colon))
            .port(Integer.parseInt(host.substring(colon + 1)))
            .encodedPath(request.rawPath());
    if (request.rawQuery() != null) {
      for (String pair : request.rawQuery().split("&")) {
        int eq = pair.indexOf('=');
        unsigned.appendRawQueryParameter(
            URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8),
            eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
      }
    }
    for (String name : signedHeaders.group(1).split(";")) {
      if (!name.equals("host") && !name.equals("x-amz-date")) {
        unsigned.putHeader(name, request.header(name));
      }
    }
    LocalDateTime signedAt =
        LocalDateTime.parse(
            request.header("X-Amz-Date"), DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'"));
    SdkHttpFullRequest built = unsigned.build();
    SignedRequest signed =
        AwsV4HttpSigner.create()
            .sign(
                r ->
                    r.identity(AwsCredentialsIdentity.create(ACCESS_KEY, SECRET_KEY))
                        .request(built)
                        .payload(ContentStreamProvider.fromByteArray(request.body()))
                        .putProperty(AwsV4HttpSigner.SERVICE_SIGNING_NAME, "s3")
                        .putProperty(AwsV4HttpSigner.REGION_NAME, REGION)
                        .putProperty(AwsV4HttpSigner.DOUBLE_URL_ENCODE, false)
                        .putProperty(AwsV4HttpSigner.NORMALIZE_PATH, false)
                        .putProperty(AwsV4HttpSigner.PAYLOAD_SIGNING_ENABLED, true)
                        .putProperty(
                            HttpSigner.SIGNING_CLOCK,
                            Clock.fixed(signedAt.toInstant(ZoneOffset.UTC), ZoneOffset.UTC)));
    assertThat(signed.request().firstMatchingHeader("Authorization")).contains(authorization);
  }

  private URI url(String target) {
    return relay.endpoint().resolve(target);
  }

  private HttpResponse<byte[]> send(HttpRequest.Builder request) throws Exception {
    return http.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
  }
}
