package dev.writeonce.teststore;

import java.io.ByteArrayOutputStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import software.amazon.awssdk.http.ContentStreamProvider;
import software.amazon.awssdk.http.SdkHttpFullRequest;
import software.amazon.awssdk.http.SdkHttpMethod;
import software.amazon.awssdk.http.SdkHttpRequest;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner;
import software.amazon.awssdk.http.auth.spi.signer.SignedRequest;
import software.amazon.awssdk.identity.spi.AwsCredentialsIdentity;

/**
 * Signs a request again after the {@link StoreRelay} removed one of its headers: the store then
 * takes it as the client's own request without that header. An {@code aws-chunked} body (signed
 * chunks, checksum trailers) is sent as its plain payload, with the payload's hash signed.
 */
final class RequestSigner {

  /** Headers the new signature replaces, or that belong to the chunked encoding dropped here. */
  private static final Set<String> REPLACED =
      Set.of(
          "authorization",
          "x-amz-date",
          "x-amz-content-sha256",
          "content-length",
          "content-encoding",
          "transfer-encoding",
          "x-amz-decoded-content-length",
          "x-amz-trailer",
          "x-amz-sdk-checksum-algorithm",
          "expect");

  private RequestSigner() {}

  static byte[] withoutHeader(
      StoreRelay.Request request, byte[] body, String dropped, String[] signing) {
    if (signing == null) {
      throw new IllegalStateException("the relay drops a header only after signingWith(...)");
    }
    String sha = request.headers().getOrDefault("x-amz-content-sha256", "");
    byte[] payload = sha.startsWith("STREAMING-") ? dechunk(body) : body;
    String host = request.headers().get("host");
    int colon = host.lastIndexOf(':');
    SdkHttpFullRequest.Builder builder =
        SdkHttpFullRequest.builder()
            .method(SdkHttpMethod.fromValue(request.method()))
            .protocol("http")
            .host(colon > 0 ? host.substring(0, colon) : host)
            .port(colon > 0 ? Integer.parseInt(host.substring(colon + 1)) : 80)
            .encodedPath(request.path());
    int q = request.target().indexOf('?');
    if (q >= 0) {
      for (String pair : request.target().substring(q + 1).split("&")) {
        if (pair.isEmpty()) {
          continue;
        }
        int eq = pair.indexOf('=');
        String name = decode(eq < 0 ? pair : pair.substring(0, eq));
        String value = eq < 0 ? "" : decode(pair.substring(eq + 1));
        builder.appendRawQueryParameter(name, value);
      }
    }
    String droppedLower = dropped.toLowerCase(Locale.ROOT);
    for (Map.Entry<String, String> header : request.headers().entrySet()) {
      String name = header.getKey();
      if (!name.equals(droppedLower)
          && !REPLACED.contains(name)
          && !name.startsWith("x-amz-checksum-")) {
        builder.putHeader(name, header.getValue());
      }
    }
    builder.putHeader("Content-Length", Integer.toString(payload.length));
    SdkHttpRequest unsigned = builder.build();
    SignedRequest signed =
        AwsV4HttpSigner.create()
            .sign(
                r ->
                    r.identity(AwsCredentialsIdentity.create(signing[0], signing[1]))
                        .request(unsigned)
                        .payload(ContentStreamProvider.fromByteArray(payload))
                        .putProperty(AwsV4HttpSigner.SERVICE_SIGNING_NAME, "s3")
                        .putProperty(AwsV4HttpSigner.REGION_NAME, signing[2])
                        .putProperty(AwsV4HttpSigner.DOUBLE_URL_ENCODE, false)
                        .putProperty(AwsV4HttpSigner.NORMALIZE_PATH, false)
                        .putProperty(AwsV4HttpSigner.PAYLOAD_SIGNING_ENABLED, true));
    StringBuilder head =
        new StringBuilder(request.method())
            .append(' ')
            .append(request.target())
            .append(" HTTP/1.1\r\n");
    signed
        .request()
        .headers()
        .forEach(
            (name, values) ->
                values.forEach(v -> head.append(name).append(": ").append(v).append("\r\n")));
    head.append("\r\n");
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.writeBytes(head.toString().getBytes(StandardCharsets.ISO_8859_1));
    out.writeBytes(payload);
    return out.toByteArray();
  }

  private static String decode(String encoded) {
    return URLDecoder.decode(encoded.replace("+", "%2B"), StandardCharsets.UTF_8);
  }

  /** The payload of an aws-chunked body: each chunk is {@code hex-size[;ext]\r\ndata\r\n}. */
  private static byte[] dechunk(byte[] body) {
    ByteArrayOutputStream payload = new ByteArrayOutputStream();
    int at = 0;
    while (at < body.length) {
      int lineEnd = indexOfCrlf(body, at);
      String sizeLine = new String(body, at, lineEnd - at, StandardCharsets.ISO_8859_1);
      int semicolon = sizeLine.indexOf(';');
      int size =
          Integer.parseInt(
              (semicolon < 0 ? sizeLine : sizeLine.substring(0, semicolon)).trim(), 16);
      at = lineEnd + 2;
      if (size == 0) {
        break; // trailers follow: dropped with the encoding
      }
      payload.write(body, at, size);
      at += size + 2;
    }
    return payload.toByteArray();
  }

  private static int indexOfCrlf(byte[] body, int from) {
    for (int i = from; i + 1 < body.length; i++) {
      if (body[i] == '\r' && body[i + 1] == '\n') {
        return i;
      }
    }
    return body.length;
  }
}
