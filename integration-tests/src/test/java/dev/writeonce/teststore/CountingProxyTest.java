package dev.writeonce.teststore;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class CountingProxyTest {

  private HttpServer upstream;
  private CountingProxy proxy;
  private final AtomicLong bodyBytesSeen = new AtomicLong();
  private final HttpClient http =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @BeforeEach
  void startUpstream() throws IOException {
    upstream = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    upstream.createContext(
        "/",
        exchange -> {
          bodyBytesSeen.addAndGet(exchange.getRequestBody().readAllBytes().length);
          String method = exchange.getRequestMethod();
          String path = exchange.getRequestURI().getPath();
          if (method.equals("DELETE")) {
            exchange.sendResponseHeaders(204, -1);
          } else if (method.equals("HEAD")) {
            exchange.getResponseHeaders().set("Content-Length", "5000");
            exchange.sendResponseHeaders(200, -1);
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
        });
    upstream.start();
    proxy = CountingProxy.start(URI.create("http://127.0.0.1:" + upstream.getAddress().getPort()));
  }

  @AfterEach
  void stop() throws IOException {
    proxy.close();
    upstream.stop(0);
  }

  @Test
  void countsEachRequestAndTheBodyBytesEachWayAsTheyPassUnchanged() throws Exception {
    Traffic before = proxy.read();

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
    Traffic traffic = proxy.read().minus(before);
    assertThat(traffic.requests(S3Api.UPLOAD_PART)).isEqualTo(1);
    assertThat(traffic.requests(S3Api.PUT_OBJECT)).isEqualTo(1);
    assertThat(traffic.requests(S3Api.GET_OBJECT)).isEqualTo(3);
    assertThat(traffic.requests(S3Api.HEAD_OBJECT)).isEqualTo(1);
    assertThat(traffic.requests(S3Api.DELETE_OBJECT)).isEqualTo(1);
    assertThat(traffic.totalRequests()).isEqualTo(7);
    assertThat(traffic.bytesReceived()).isEqualTo(170_000);
    assertThat(traffic.bytesSent()).isEqualTo(10 + 10 + 1234 + 4000 + 1234);
  }

  private URI url(String target) {
    return proxy.endpoint().resolve(target);
  }

  private HttpResponse<byte[]> send(HttpRequest.Builder request) throws Exception {
    return http.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
  }
}
