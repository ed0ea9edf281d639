package dev.writeonce.teststore;

import dev.writeonce.core.store.check.StoreTrust;
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
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntFunction;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;

/**
 * An HTTP relay between S3 clients and a test store's S3 port, with hooks:
 *
 * <ul>
 *   <li>it counts what it forwards ({@link #read}): requests by {@link S3Api} operation, request
 *       body bytes to the store and answer body bytes from it. It meters a store whose own counters
 *       do not tell the operations apart: SeaweedFS counts its S3 requests by HTTP method ({@code
 *       PUT} is PutObject and UploadPart alike, {@code POST} both starts and completes an upload,
 *       {@code DELETE} is DeleteObject, AbortMultipartUpload and DeleteObjects);
 *   <li>it injects store faults into chosen requests ({@link #inject}, {@link #byOrdinal}): a 500
 *       or 503 answer instead of forwarding, a connection reset before forwarding, a reset after
 *       the store acted but before its answer reaches the client (a lost answer), or a delay;
 *   <li>it plays a store that silently ignores a condition ({@link #alter}): a header dropped and
 *       the request signed again, an answer faked without the store, or the store's answer
 *       rewritten.
 * </ul>
 *
 * <p>Requests and answers nothing alters pass byte for byte, so signatures stay valid; the relay
 * only reads the message framing (heads, {@code Content-Length}, chunked bodies). Each client
 * connection has one connection to the store, requests on it are handled in order, as HTTP/1.1
 * clients send them, and a close on either side is passed on to the other, so a client sees the
 * store's connection handling. A request is counted when its head reaches the relay, before any
 * hook acts on it, so a reading includes every request answered before it.
 */
public final class StoreRelay implements TrafficMeter, AutoCloseable {

  /** What to do to a matching request. */
  public enum Fault {
    STATUS_500,
    STATUS_503,
    RESET_BEFORE,
    RESET_AFTER_STORE_ACTED,
    DELAY_2S
  }

  /** The head of one request, as the relay parsed it; header names are in lower case. */
  public record Request(String method, String target, Map<String, String> headers) {

    public boolean has(String queryParameter) {
      int q = target.indexOf('?');
      return q >= 0 && ("&" + target.substring(q + 1)).contains("&" + queryParameter);
    }

    /** The S3 operation of the request, as the meters count it. */
    public S3Api operation() {
      return S3Api.classify(method, target, headers.containsKey("x-amz-copy-source"));
    }

    /** CompleteMultipartUpload. */
    public boolean isCompleteUpload() {
      return operation() == S3Api.COMPLETE_MULTIPART_UPLOAD;
    }

    /** UploadPart. */
    public boolean isUploadPart() {
      return operation() == S3Api.UPLOAD_PART;
    }

    /** PutObject: a PUT of an object without upload parameters or a copy source. */
    public boolean isPutObject() {
      return operation() == S3Api.PUT_OBJECT;
    }

    public String path() {
      int q = target.indexOf('?');
      return q < 0 ? target : target.substring(0, q);
    }
  }

  /**
   * How a store that silently ignores a condition is played: the request is changed on its way, or
   * answered by the relay, and the client cannot tell.
   */
  public sealed interface Alteration
      permits Alteration.DropHeader, Alteration.FakeAnswer, Alteration.RewriteAnswer {

    /**
     * The header is removed and the request signed again with the store's credentials, as if the
     * client had never sent it: the store acts unconditionally and answers as for a plain request.
     */
    record DropHeader(String name) implements Alteration {}

    /** The request never reaches the store; the relay answers with this status and no body. */
    record FakeAnswer(int status) implements Alteration {}

    /** The request reaches the store; its answer's body is rewritten before the client sees it. */
    record RewriteAnswer(UnaryOperator<String> body) implements Alteration {}
  }

  private record Rule(Predicate<Request> matches, Fault fault, AtomicInteger remaining) {}

  private record Altering(Predicate<Request> matches, Alteration alteration) {}

  /** A request forwarded on a connection, awaiting its answer. */
  private record Forwarded(String method, boolean loseAnswer) {}

  /** How long a connection the client closed waits for the store's last answers. */
  private static final long ANSWER_WAIT_MILLIS = 120_000;

  private final URI upstream;
  private final ServerSocket server;
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();

  // Counting: every request, from the start.
  private final Map<S3Api, LongAdder> requests = new EnumMap<>(S3Api.class);
  private final LongAdder bytesReceived = new LongAdder();
  private final LongAdder bytesSent = new LongAdder();

  // Faults and alterations: set by the test thread, read by the connection threads.
  private final List<Rule> rules = new CopyOnWriteArrayList<>();
  private final List<Altering> alterations = new CopyOnWriteArrayList<>();
  private final AtomicInteger injected = new AtomicInteger();
  private final AtomicInteger altered = new AtomicInteger();
  private volatile IntFunction<Fault> byOrdinal;
  private final AtomicInteger ordinal = new AtomicInteger();
  private final List<String> seen = new CopyOnWriteArrayList<>();

  /** Credentials to sign altered requests with: access key, secret key, region. */
  private volatile String[] signing;

  private StoreRelay(URI upstream) throws IOException {
    this.upstream = upstream;
    for (S3Api api : S3Api.values()) {
      requests.put(api, new LongAdder());
    }
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread acceptor = new Thread(this::acceptLoop, "store-relay-accept");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  /** A relay on a free loopback port in front of the store whose S3 port is {@code upstream}. */
  public static StoreRelay start(URI upstream) throws IOException {
    StoreRelay relay = new StoreRelay(upstream);
    // A store behind it that was checked when it started: the relay is that store to the
    // committers, until a test that plays a store ignoring a condition forgets it.
    StoreTrust.known(upstream.toString())
        .ifPresent(report -> StoreTrust.remember(relay.endpoint().toString(), report));
    return relay;
  }

  /** Where clients reach the store through the relay. */
  public URI endpoint() {
    return URI.create("http://127.0.0.1:" + server.getLocalPort());
  }

  // ---- counting ----

  @Override
  public Traffic read() {
    EnumMap<S3Api, Long> counts = new EnumMap<>(S3Api.class);
    requests.forEach((api, count) -> counts.put(api, count.sum()));
    return new Traffic(counts, bytesReceived.sum(), bytesSent.sum());
  }

  @Override
  public String source() {
    return "requests counted by a pass-through relay in front of " + upstream;
  }

  // ---- faults ----

  /** Injects the fault into the next {@code times} requests that match. */
  public StoreRelay inject(Predicate<Request> matches, Fault fault, int times) {
    rules.add(new Rule(matches, fault, new AtomicInteger(times)));
    return this;
  }

  /**
   * Numbers the requests from now on, 1 for the next, and gives each the fault {@code plan} names
   * for its number ({@code null}: none). The rules of {@link #inject} apply to requests it spares.
   */
  public StoreRelay byOrdinal(IntFunction<Fault> plan) {
    seen.clear();
    ordinal.set(0);
    byOrdinal = plan;
    return this;
  }

  /**
   * A client that dies at its {@code n}th request: that request, and every one after it, is reset
   * before it reaches the store.
   */
  public StoreRelay crashAt(int n) {
    return byOrdinal(i -> i >= n ? Fault.RESET_BEFORE : null);
  }

  /**
   * A client that dies just after its {@code n}th request reached the store: the store acts on it,
   * its answer is lost, and every later request is reset before it reaches the store.
   */
  public StoreRelay crashAfter(int n) {
    return byOrdinal(
        i -> i == n ? Fault.RESET_AFTER_STORE_ACTED : i > n ? Fault.RESET_BEFORE : null);
  }

  /** A client whose {@code n}th request reaches the store and loses its answer; nothing else. */
  public StoreRelay loseAnswerOf(int n) {
    return byOrdinal(i -> i == n ? Fault.RESET_AFTER_STORE_ACTED : null);
  }

  /**
   * The requests numbered since {@link #byOrdinal}: {@code "N METHOD target"}, in arrival order.
   */
  public List<String> numbered() {
    return List.copyOf(seen);
  }

  /** Faults injected so far. */
  public int injected() {
    return injected.get();
  }

  // ---- alterations ----

  /** Signs altered requests with these credentials: those of the store behind the relay. */
  public StoreRelay signingWith(String accessKey, String secretKey, String region) {
    signing = new String[] {accessKey, secretKey, region};
    return this;
  }

  /** Alters every request that matches, from now on, until {@link #heal}. */
  public StoreRelay alter(Predicate<Request> matches, Alteration alteration) {
    alterations.add(new Altering(matches, alteration));
    return this;
  }

  /** Requests altered so far. */
  public int altered() {
    return altered.get();
  }

  /** Removes every fault rule, plan and alteration; requests pass untouched from now on. */
  public StoreRelay heal() {
    rules.clear();
    alterations.clear();
    byOrdinal = null;
    return this;
  }

  private Fault faultFor(Request request) {
    IntFunction<Fault> plan = byOrdinal;
    if (plan != null) {
      int n = ordinal.incrementAndGet();
      seen.add(n + " " + request.method() + " " + request.target());
      Fault fault = plan.apply(n);
      if (fault != null) {
        injected.incrementAndGet();
        return fault;
      }
    }
    for (Rule rule : rules) {
      if (rule.matches().test(request) && rule.remaining().getAndDecrement() > 0) {
        injected.incrementAndGet();
        return rule.fault();
      }
    }
    return null;
  }

  private Alteration alterationFor(Request request) {
    for (Altering altering : alterations) {
      if (altering.matches().test(request)) {
        if (altering.alteration() instanceof Alteration.DropHeader drop
            && !request.headers().containsKey(drop.name().toLowerCase(Locale.ROOT))) {
          continue;
        }
        altered.incrementAndGet();
        return altering.alteration();
      }
    }
    return null;
  }

  // ---- the relay ----

  private void acceptLoop() {
    while (!server.isClosed()) {
      Socket client;
      try {
        client = server.accept();
      } catch (IOException e) {
        return;
      }
      open.add(client);
      Thread connection = new Thread(() -> serve(client), "store-relay-conn");
      connection.setDaemon(true);
      connection.start();
    }
  }

  /** Handles the requests of one client connection in order; a second thread relays answers. */
  private void serve(Socket client) {
    Socket store = new Socket();
    open.add(store);
    try {
      // Heads and bodies go out as separate writes: without this, Nagle's algorithm holds each
      // second write until the peer's delayed acknowledgement of the first.
      client.setTcpNoDelay(true);
      store.setTcpNoDelay(true);
      store.connect(new InetSocketAddress(upstream.getHost(), upstream.getPort()), 10_000);
      InputStream fromClient = new BufferedInputStream(client.getInputStream());
      OutputStream toStore = store.getOutputStream();
      BlockingQueue<Forwarded> forwarded = new LinkedBlockingQueue<>();
      InputStream fromStore = new BufferedInputStream(store.getInputStream());
      Thread answers =
          new Thread(() -> relayAnswers(fromStore, client, forwarded), "store-relay-answers");
      answers.setDaemon(true);
      answers.start();
      while (true) {
        byte[] head = readHead(fromClient);
        if (head == null) {
          store.shutdownOutput(); // the client closed: the store sees it, and answers what it has
          answers.join(ANSWER_WAIT_MILLIS);
          return;
        }
        Head parsed = Head.parse(head);
        Request request = parsed.request();
        requests.get(request.operation()).increment();
        Fault fault = faultFor(request);
        if (fault == Fault.RESET_BEFORE) {
          reset(client);
          return;
        }
        if (fault == Fault.STATUS_500 || fault == Fault.STATUS_503) {
          answerError(client, fault == Fault.STATUS_500 ? 500 : 503);
          return;
        }
        if (fault == Fault.DELAY_2S) {
          Thread.sleep(2_000);
        }
        Alteration alteration = fault == null ? alterationFor(request) : null;
        if (alteration != null) {
          if (!forwardAltered(
              request, parsed, alteration, fromClient, toStore, client, forwarded)) {
            return;
          }
          continue;
        }
        forwarded.add(new Forwarded(request.method(), fault == Fault.RESET_AFTER_STORE_ACTED));
        toStore.write(head);
        toStore.flush(); // before the body: a client that expects 100-continue waits for it
        bytesReceived.add(copyBody(fromClient, toStore, parsed, false));
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

  /**
   * Handles a request an alteration applies to, with its whole body read first. Returns whether the
   * client's connection stays open.
   */
  private boolean forwardAltered(
      Request request,
      Head head,
      Alteration alteration,
      InputStream fromClient,
      OutputStream toStore,
      Socket client,
      BlockingQueue<Forwarded> forwarded)
      throws IOException {
    if ("100-continue".equalsIgnoreCase(request.headers().getOrDefault("expect", ""))) {
      // The body is read here, before any store answers: the client need not wait for a 100.
      OutputStream toClient = client.getOutputStream();
      toClient.write("HTTP/1.1 100 Continue\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
      toClient.flush();
    }
    byte[] body = readBody(fromClient, head);
    if (alteration instanceof Alteration.FakeAnswer fake) {
      answerEmpty(client, fake.status());
      return false;
    }
    if (alteration instanceof Alteration.DropHeader drop) {
      byte[] resigned = RequestSigner.withoutHeader(request, body, drop.name(), signing);
      forwarded.add(new Forwarded(request.method(), false));
      toStore.write(resigned);
      toStore.flush();
      bytesReceived.add(body.length);
      return true;
    }
    Alteration.RewriteAnswer rewrite = (Alteration.RewriteAnswer) alteration;
    rewriteExchange(head.bytes(), body, client, rewrite.body());
    return false;
  }

  /** Relays the store's answers to the client, each framed by the request it answers. */
  private void relayAnswers(
      InputStream fromStore, Socket client, BlockingQueue<Forwarded> forwarded) {
    try {
      OutputStream toClient = client.getOutputStream();
      while (true) {
        byte[] head = readHead(fromStore);
        if (head == null) {
          break;
        }
        Head answer = Head.parse(head);
        int status = answer.status();
        if (status >= 100 && status < 200) {
          toClient.write(head);
          toClient.flush();
          continue; // an interim answer (100 Continue): the final one follows
        }
        Forwarded request = forwarded.poll();
        if (request != null && request.loseAnswer()) {
          reset(client); // the store acted; the client never learns of it
          return;
        }
        toClient.write(head);
        toClient.flush();
        String method = request == null ? null : request.method();
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
   * Sends one request to the store on a connection of its own, reads its whole answer and gives the
   * client the answer with its body rewritten; the client's connection closes after it.
   */
  private void rewriteExchange(
      byte[] head, byte[] body, Socket client, UnaryOperator<String> rewrite) throws IOException {
    try (Socket store = new Socket()) {
      store.connect(new InetSocketAddress(upstream.getHost(), upstream.getPort()), 10_000);
      store.getOutputStream().write(head);
      store.getOutputStream().write(body);
      store.getOutputStream().flush();
      InputStream in = new BufferedInputStream(store.getInputStream());
      byte[] answerHead = readHead(in);
      while (answerHead != null && Head.parse(answerHead).status() / 100 == 1) {
        answerHead = readHead(in);
      }
      if (answerHead == null) {
        reset(client);
        return;
      }
      Head answer = Head.parse(answerHead);
      String original = new String(readBody(in, answer), StandardCharsets.UTF_8);
      byte[] rewritten = rewrite.apply(original).getBytes(StandardCharsets.UTF_8);
      String[] lines = new String(answerHead, StandardCharsets.ISO_8859_1).split("\r\n");
      StringBuilder kept = new StringBuilder(lines[0]).append("\r\n");
      for (int i = 1; i < lines.length; i++) {
        String lower = lines[i].toLowerCase(Locale.ROOT);
        if (!lower.startsWith("content-length:")
            && !lower.startsWith("transfer-encoding:")
            && !lower.startsWith("connection:")
            && !lines[i].isEmpty()) {
          kept.append(lines[i]).append("\r\n");
        }
      }
      kept.append("Content-Length: ").append(rewritten.length).append("\r\n");
      kept.append("Connection: close\r\n\r\n");
      OutputStream out = client.getOutputStream();
      out.write(kept.toString().getBytes(StandardCharsets.ISO_8859_1));
      out.write(rewritten);
      out.flush();
    }
  }

  /** An S3 error answer made by the relay; the connection closes after it. */
  private static void answerError(Socket client, int status) throws IOException {
    String code = status == 503 ? "SlowDown" : "InternalError";
    String reason = status == 503 ? "Slow Down" : "Internal Server Error";
    byte[] body =
        ("<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>"
                + code
                + "</Code><Message>injected by the test relay</Message></Error>")
            .getBytes(StandardCharsets.UTF_8);
    String head =
        "HTTP/1.1 "
            + status
            + " "
            + reason
            + "\r\nContent-Type: application/xml\r\nContent-Length: "
            + body.length
            + "\r\nConnection: close\r\n\r\n";
    OutputStream out = client.getOutputStream();
    out.write(head.getBytes(StandardCharsets.ISO_8859_1));
    out.write(body);
    out.flush();
  }

  /** An answer made by the relay, with no body; the connection closes after it. */
  private static void answerEmpty(Socket client, int status) throws IOException {
    String head =
        "HTTP/1.1 " + status + " Altered\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    OutputStream out = client.getOutputStream();
    out.write(head.getBytes(StandardCharsets.ISO_8859_1));
    out.flush();
  }

  // ---- message framing ----

  /**
   * Copies one message body as its head frames it and returns the number of body bytes (chunk data,
   * without the chunk framing). An answer without length or chunking ends with the connection; a
   * request without either has no body.
   */
  private static long copyBody(InputStream in, OutputStream out, Head head, boolean isAnswer)
      throws IOException {
    if (head.chunked()) {
      return copyChunked(in, out);
    }
    String length = head.headers().get("content-length");
    if (length != null) {
      return copyExactly(in, out, Long.parseLong(length.trim()));
    }
    return isAnswer ? copyToEnd(in, out) : 0;
  }

  /**
   * One message body, whole: chunked data decoded, or as many bytes as its length says; none when
   * its head gives neither (the store's XML answers always give one).
   */
  private static byte[] readBody(InputStream in, Head head) throws IOException {
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    if (head.chunked()) {
      copyChunked(in, body, false);
    } else {
      String length = head.headers().get("content-length");
      if (length != null) {
        copyExactly(in, body, Long.parseLong(length.trim()));
      }
    }
    return body.toByteArray();
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
    return copyChunked(in, out, true);
  }

  /**
   * Copies a chunked body and returns the number of data bytes: the whole message, framing
   * included, or with {@code framing} false the chunks' data alone.
   */
  private static long copyChunked(InputStream in, OutputStream out, boolean framing)
      throws IOException {
    long data = 0;
    while (true) {
      byte[] sizeLine = readLine(in);
      if (framing) {
        out.write(sizeLine);
      }
      String size = new String(sizeLine, StandardCharsets.ISO_8859_1).trim();
      int semicolon = size.indexOf(';');
      long chunk = Long.parseLong(semicolon < 0 ? size : size.substring(0, semicolon).trim(), 16);
      if (chunk == 0) {
        byte[] trailer;
        do {
          trailer = readLine(in);
          if (framing) {
            out.write(trailer);
          }
        } while (trailer.length > 2);
        out.flush();
        return data;
      }
      data += copyExactly(in, out, chunk);
      byte[] end = readLine(in); // the CRLF after the chunk's data
      if (framing) {
        out.write(end);
      }
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

  /** The head of a request or an answer, as read, with its start line and headers. */
  private record Head(byte[] bytes, String startLine, Map<String, String> headers) {

    static Head parse(byte[] head) {
      String[] lines = new String(head, StandardCharsets.ISO_8859_1).split("\r\n");
      Map<String, String> headers = new TreeMap<>();
      for (int i = 1; i < lines.length; i++) {
        int colon = lines[i].indexOf(':');
        if (colon > 0) {
          headers.put(
              lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT),
              lines[i].substring(colon + 1).trim());
        }
      }
      return new Head(head, lines[0], headers);
    }

    /** The request this head starts ({@code PUT /b/k HTTP/1.1}). */
    Request request() {
      String[] line = startLine.split(" ");
      return new Request(line[0], line.length > 1 ? line[1] : "/", headers);
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

    boolean chunked() {
      return headers
          .getOrDefault("transfer-encoding", "")
          .toLowerCase(Locale.ROOT)
          .contains("chunked");
    }
  }

  private static void reset(Socket socket) {
    try {
      socket.setSoLinger(true, 0);
      socket.close();
    } catch (IOException e) {
      // already gone
    }
  }

  private static void closeQuietly(Socket socket) {
    try {
      socket.close();
    } catch (IOException e) {
      // already gone
    }
  }

  /** Stops accepting and resets every open connection, as a store that goes away. */
  @Override
  public void close() throws IOException {
    server.close();
    for (Socket socket : open) {
      reset(socket);
    }
  }
}
