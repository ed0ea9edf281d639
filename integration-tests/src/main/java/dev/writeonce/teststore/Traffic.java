package dev.writeonce.teststore;

import java.util.EnumMap;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Requests by operation and bytes in and out, as the store itself counted them.
 *
 * @param requests requests by operation
 * @param bytesReceived request body bytes the store received
 * @param bytesSent response bytes the store sent
 */
public record Traffic(Map<S3Api, Long> requests, long bytesReceived, long bytesSent) {

  public Traffic {
    EnumMap<S3Api, Long> copy = new EnumMap<>(S3Api.class);
    for (S3Api api : S3Api.values()) {
      copy.put(api, requests.getOrDefault(api, 0L));
    }
    requests = copy;
  }

  public long requests(S3Api api) {
    return requests.get(api);
  }

  public long totalRequests() {
    return requests.values().stream().mapToLong(Long::longValue).sum();
  }

  /** What happened between an earlier reading and this one. */
  public Traffic minus(Traffic earlier) {
    EnumMap<S3Api, Long> delta = new EnumMap<>(S3Api.class);
    requests.forEach((api, count) -> delta.put(api, count - earlier.requests(api)));
    return new Traffic(
        delta, bytesReceived - earlier.bytesReceived(), bytesSent - earlier.bytesSent());
  }

  @Override
  public String toString() {
    String counts =
        requests.entrySet().stream()
            .filter(e -> e.getValue() != 0)
            .map(e -> e.getKey() + "=" + e.getValue())
            .collect(Collectors.joining(", "));
    return "Traffic{" + counts + "; in=" + bytesReceived + " B, out=" + bytesSent + " B}";
  }
}
