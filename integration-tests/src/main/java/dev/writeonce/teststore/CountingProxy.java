package dev.writeonce.teststore;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.LongAdder;

/**
 * A pass-through HTTP proxy in front of a store's S3 port that counts what it forwards: requests by
 * S3 operation, request body bytes to the store and answer body bytes from it. It meters a store
 * whose own counters do not tell the operations apart: SeaweedFS counts its S3 requests by HTTP
 * method ({@code PUT} is PutObject and UploadPart alike, {@code POST} both starts and completes an
 * upload, {@code DELETE} is DeleteObject, AbortMultipartUpload and DeleteObjects).
 *
 * <p>Requests and answers pass byte for byte, so signatures stay valid; the proxy only reads the
 * message framing (heads, {@code Content-Length}, chunked bodies). Each client connection has one
 * connection to the store, and a close on either side is passed on to the other, so a client sees
 * the store's connection handling. A request is counted when its head reaches the proxy, before it
 * is forwarded, so a reading includes every request answered before it. Requests are classified by
 * {@link S3Api#classify}.
 */
final class CountingProxy implements TrafficMeter, AutoCloseable {

  /** How long a connection the client closed waits for the store's last answers. */
  private static final long ANSWER_WAIT_MILLIS = 120_000;

  private final URI upstream;
  private final ServerSocket server;
  private final Map<S3Api, LongAdder> requests = new EnumMap<>(S3Api.class);
  private final LongAdder bytesReceived = new LongAdder();
  private final LongAdder bytesSent = new LongAdder();
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();

  private CountingProxy(URI upstream) throws IOException {
    this.upstream = upstream;
    for (S3Api api : S3Api.values()) {
      requests.put(api, new LongAdder());
    }
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread acceptor = new Thread(this::acceptLoop, "counting-proxy-accept");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  /** A proxy on a free loopback port in front of the store whose S3 port is {@code upstream}. */
  static CountingProxy start(URI upstream) throws IOException {
    return new CountingProxy(upstream);
  }

  /** Where clients reach the store through the proxy. */
  URI endpoint() {
    return URI.create("http://127.0.0.1:" + server.getLocalPort());
  }

  @Override
  public Traffic read() {
    EnumMap<S3Api, Long> counts = new EnumMap<>(S3Api.class);
    requests.forEach((api, count) -> counts.put(api, count.sum()));
    return new Traffic(counts, bytesReceived.sum(), bytesSent.sum());
  }

  @Override
  public String source() {
    return "requests counted by a pass-through proxy in front of " + upstream;
  }

  private void acceptLoop() {
    while (!server.isClosed()) {
      Socket client;
      try {
        client = server.accept();
      } catch (IOException e) {
        return;
      }
      open.add(client);
      Thread connection = new Thread(() -> serve(client), "counting-proxy-conn");
      connection.setDaemon(true);
      connection.start();
    }
  }

  /** Forwards the requests of one client connection in order; a second thread relays answers. */
  private void serve(Socket client) {
    Socket store = new Socket();
    open.add(store);
    Thread answers = null;
    try {
      // Heads and bodies go out as separate writes: without this, Nagle's algorithm holds each
      // second write until the peer's delayed acknowledgement of the first.
      client.setTcpNoDelay(true);
      store.setTcpNoDelay(true);
      store.connect(new InetSocketAddress(upstream.getHost(), upstream.getPort()), 10_000);
      InputStream fromClient = new BufferedInputStream(client.getInputStream());
      OutputStream toStore = store.getOutputStream();
      BlockingQueue<String> methods = new LinkedBlockingQueue<>();
      InputStream fromStore = new BufferedInputStream(store.getInputStream());
      answers =
          new Thread(() -> relayAnswers(fromStore, client, methods), "counting-proxy-answers");
      answers.setDaemon(true);
      answers.start();
      while (true) {
        byte[] head = readHead(fromClient);
        if (head == null) {
          store.shutdownOutput(); // the client closed: the store sees it, and answers what it has
          answers.join(ANSWER_WAIT_MILLIS);
          return;
        }
        Head request = Head.parse(head);
        String[] line = request.startLine().split(" ");
        String method = line[0];
        String target = line.length > 1 ? line[1] : "/";
        requests
            .get(S3Api.classify(method, target, request.headers().containsKey("x-amz-copy-source")))
            .increment();
        methods.add(method);
        toStore.write(head);
        toStore.flush(); // before the body: a client that expects 100-continue waits for it
        bytesReceived.add(copyBody(fromClient, toStore, request, false));
      }
    } catch (IOException | RuntimeException e) {
      // the client or the store went away, or sent what is not HTTP: close both sides below
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      closeQuietly(store);
      closeQuietly(client);
      open.remove(store);
      open.remove(client);
    }
  }

  /** Relays the store's answers to the client, each framed by the request it answers. */
  private void relayAnswers(InputStream fromStore, Socket client, BlockingQueue<String> methods) {
    try {
      OutputStream toClient = client.getOutputStream();
      while (true) {
        byte[] head = readHead(fromStore);
        if (head == null) {
          break;
        }
        Head answer = Head.parse(head);
        toClient.write(head);
        toClient.flush();
        int status = answer.status();
        if (status >= 100 && status < 200) {
          continue; // an interim answer (100 Continue): the final one follows
        }
        String method = methods.poll();
        boolean noBody = "HEAD".equals(method) || status == 204 || status == 304;
        if (!noBody) {
          bytesSent.add(copyBody(fromStore, toClient, answer, true));
        }
      }
    } catch (IOException | RuntimeException e) {
      // the connection is gone, or the store sent what is not HTTP
    }
    try {
      client.shutdownOutput(); // the store closed: the client sees it as from the store itself
    } catch (IOException e) {
      // already gone
    }
  }

  /**
   * Copies one message body as its head frames it and returns the number of body bytes (chunk data,
   * without the chunk framing). An answer without length or chunking ends with the connection; a
   * request without either has no body.
   */
  private static long copyBody(InputStream in, OutputStream out, Head head, boolean isAnswer)
      throws IOException {
    String encoding = head.headers().getOrDefault("transfer-encoding", "");
    if (encoding.toLowerCase(Locale.ROOT).contains("chunked")) {
      return copyChunked(in, out);
    }
    String length = head.headers().get("content-length");
    if (length != null) {
      return copyExactly(in, out, Long.parseLong(length.trim()));
    }
    return isAnswer ? copyToEnd(in, out) : 0;
  }

  private static long copyExactly(InputStream in, OutputStream out, long length)
      throws IOException {
    byte[] buffer = new byte[64 * 1024];
    long left = length;
    while (left > 0) {
      int n = in.read(buffer, 0, (int) Math.min(buffer.length, left));
      if (n < 0) {
        throw new IOException("connection closed mid-body");
      }
      out.write(buffer, 0, n);
      out.flush();
      left -= n;
    }
    return length;
  }

  private static long copyToEnd(InputStream in, OutputStream out) throws IOException {
    byte[] buffer = new byte[64 * 1024];
    long copied = 0;
    int n;
    while ((n = in.read(buffer)) >= 0) {
      out.write(buffer, 0, n);
      out.flush();
      copied += n;
    }
    return copied;
  }

  private static long copyChunked(InputStream in, OutputStream out) throws IOException {
    long data = 0;
    while (true) {
      byte[] sizeLine = readLine(in);
      out.write(sizeLine);
      String size = new String(sizeLine, StandardCharsets.ISO_8859_1).trim();
      int semicolon = size.indexOf(';');
      long chunk = Long.parseLong(semicolon < 0 ? size : size.substring(0, semicolon).trim(), 16);
      if (chunk == 0) {
        byte[] trailer;
        do {
          trailer = readLine(in);
          out.write(trailer);
        } while (trailer.length > 2);
        out.flush();
        return data;
      }
      data += copyExactly(in, out, chunk);
      out.write(readLine(in)); // the CRLF after the chunk's data
      out.flush();
    }
  }

  /** One line with its line end, as read. */
  private static byte[] readLine(InputStream in) throws IOException {
    ByteArrayOutputStream line = new ByteArrayOutputStream();
    int b;
    while ((b = in.read()) >= 0) {
      line.write(b);
      if (b == '\n') {
        return line.toByteArray();
      }
    }
    throw new IOException("connection closed mid-line");
  }

  /** A message head up to and including its empty line, or null at the end of the stream. */
  private static byte[] readHead(InputStream in) throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    int last4 = 0;
    int b;
    while ((b = in.read()) >= 0) {
      head.write(b);
      last4 = (last4 << 8) | b;
      if (last4 == 0x0d0a0d0a) {
        return head.toByteArray();
      }
    }
    if (head.size() > 0) {
      throw new IOException("connection closed mid-head");
    }
    return null;
  }

  /** The start line and the headers (names in lower case) of a request or an answer. */
  private record Head(String startLine, Map<String, String> headers) {

    static Head parse(byte[] head) {
      String[] lines = new String(head, StandardCharsets.ISO_8859_1).split("\r\n");
      Map<String, String> headers = new HashMap<>();
      for (int i = 1; i < lines.length; i++) {
        int colon = lines[i].indexOf(':');
        if (colon > 0) {
          headers.put(
              lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT),
              lines[i].substring(colon + 1).trim());
        }
      }
      return new Head(lines[0], headers);
    }

    /** The status of an answer ({@code HTTP/1.1 200 OK}), or 0 when the line has none. */
    int status() {
      String[] parts = startLine.split(" ");
      try {
        return parts.length > 1 ? Integer.parseInt(parts[1]) : 0;
      } catch (NumberFormatException e) {
        return 0;
      }
    }
  }

  private static void closeQuietly(Socket socket) {
    try {
      socket.close();
    } catch (IOException e) {
      // already gone
    }
  }

  @Override
  public void close() throws IOException {
    server.close();
    for (Socket socket : open) {
      closeQuietly(socket);
    }
  }
}
