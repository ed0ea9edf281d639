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
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import java.util.function.Predicate;

/**
 * An HTTP proxy between S3 clients and a test store that injects store faults into chosen requests:
 * a 500 or 503 answer instead of forwarding, a connection reset before forwarding, a reset after
 * the store acted but before its answer reaches the client (a lost answer), or a delay. Requests
 * pass byte for byte otherwise, so signatures stay valid. One upstream connection per client
 * connection; requests on a connection are handled in order, as HTTP/1.1 clients send them.
 */
public final class FaultProxy implements AutoCloseable {

  /** What to do to a matching request. */
  public enum Fault {
    STATUS_500,
    STATUS_503,
    RESET_BEFORE,
    RESET_AFTER_STORE_ACTED,
    DELAY_2S
  }

  /** The head of one request, as the proxy parsed it. */
  public record Request(String method, String target, Map<String, String> headers) {

    public boolean has(String queryParameter) {
      int q = target.indexOf('?');
      return q >= 0 && ("&" + target.substring(q + 1)).contains("&" + queryParameter);
    }

    /** CompleteMultipartUpload: POST with uploadId. */
    public boolean isCompleteUpload() {
      return method.equals("POST") && has("uploadId=");
    }

    /** UploadPart: PUT with partNumber and uploadId. */
    public boolean isUploadPart() {
      return method.equals("PUT") && has("partNumber=") && has("uploadId=");
    }

    /** PutObject: PUT without upload parameters or a copy source. */
    public boolean isPutObject() {
      return method.equals("PUT") && !has("uploadId=") && !headers.containsKey("x-amz-copy-source");
    }

    public String path() {
      int q = target.indexOf('?');
      return q < 0 ? target : target.substring(0, q);
    }
  }

  private record Rule(Predicate<Request> matches, Fault fault, AtomicInteger remaining) {}

  /**
   * How a store that silently ignores a condition is played: the request is changed on its way, or
   * answered by the proxy, and the client cannot tell.
   */
  public sealed interface Alteration
      permits Alteration.DropHeader, Alteration.FakeAnswer, Alteration.RewriteAnswer {

    /**
     * The header is removed and the request signed again with the store's credentials, as if the
     * client had never sent it: the store acts unconditionally and answers as for a plain request.
     */
    record DropHeader(String name) implements Alteration {}

    /** The request never reaches the store; the proxy answers with this status and no body. */
    record FakeAnswer(int status) implements Alteration {}

    /** The request reaches the store; its answer's body is rewritten before the client sees it. */
    record RewriteAnswer(java.util.function.UnaryOperator<String> body) implements Alteration {}
  }

  private record Altering(Predicate<Request> matches, Alteration alteration) {}

  /** Credentials to sign altered requests with: access key, secret key, region. */
  private volatile String[] signing;

  private final List<Altering> alterations = new CopyOnWriteArrayList<>();

  private final URI upstream;
  private final ServerSocket server;
  private final List<Rule> rules = new CopyOnWriteArrayList<>();
  private final List<Socket> open = new CopyOnWriteArrayList<>();
  private final AtomicInteger injected = new AtomicInteger();
  private volatile IntFunction<Fault> byOrdinal;
  private final AtomicInteger ordinal = new AtomicInteger();
  private final List<String> seen = new CopyOnWriteArrayList<>();
  private final Thread acceptor;

  private FaultProxy(URI upstream) throws IOException {
    this.upstream = upstream;
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    this.acceptor = new Thread(this::acceptLoop, "fault-proxy-accept");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  /** A proxy on a free loopback port in front of the store at {@code upstream}. */
  public static FaultProxy start(URI upstream) throws IOException {
    FaultProxy proxy = new FaultProxy(upstream);
    // The store behind it was checked when it started: the proxy is that store to the committers,
    // until a test that plays a store ignoring a condition forgets it.
    dev.writeonce.core.store.check.StoreTrust.known(upstream.toString())
        .ifPresent(
            report ->
                dev.writeonce.core.store.check.StoreTrust.remember(
                    proxy.endpoint().toString(), report));
    return proxy;
  }

  public URI endpoint() {
    return URI.create("http://127.0.0.1:" + server.getLocalPort());
  }

  /** Injects the fault into the next {@code times} requests that match. */
  public FaultProxy inject(Predicate<Request> matches, Fault fault, int times) {
    rules.add(new Rule(matches, fault, new AtomicInteger(times)));
    return this;
  }

  /**
   * Numbers the requests from now on, 1 for the next, and gives each the fault {@code plan} names
   * for its number ({@code null}: none). The rules of {@link #inject} apply to requests it spares.
   */
  public FaultProxy byOrdinal(IntFunction<Fault> plan) {
    seen.clear();
    ordinal.set(0);
    byOrdinal = plan;
    return this;
  }

  /**
   * A client that dies at its {@code n}th request: that request, and every one after it, is reset
   * before it reaches the store.
   */
  public FaultProxy crashAt(int n) {
    return byOrdinal(i -> i >= n ? Fault.RESET_BEFORE : null);
  }

  /**
   * A client that dies just after its {@code n}th request reached the store: the store acts on it,
   * its answer is lost, and every later request is reset before it reaches the store.
   */
  public FaultProxy crashAfter(int n) {
    return byOrdinal(
        i -> i == n ? Fault.RESET_AFTER_STORE_ACTED : i > n ? Fault.RESET_BEFORE : null);
  }

  /** A client whose {@code n}th request reaches the store and loses its answer; nothing else. */
  public FaultProxy loseAnswerOf(int n) {
    return byOrdinal(i -> i == n ? Fault.RESET_AFTER_STORE_ACTED : null);
  }

  /**
   * The requests numbered since {@link #byOrdinal}: {@code "N METHOD target"}, in arrival order.
   */
  public List<String> numbered() {
    return List.copyOf(seen);
  }

  /** Removes every rule and plan; requests pass untouched from now on. */
  public FaultProxy heal() {
    rules.clear();
    alterations.clear();
    byOrdinal = null;
    return this;
  }

  /** Signs altered requests with these credentials: those of the store behind the proxy. */
  public FaultProxy signingWith(String accessKey, String secretKey, String region) {
    signing = new String[] {accessKey, secretKey, region};
    return this;
  }

  /** Alters every request that matches, from now on, until {@link #heal}. */
  public FaultProxy alter(Predicate<Request> matches, Alteration alteration) {
    alterations.add(new Altering(matches, alteration));
    return this;
  }

  /** Requests altered so far. */
  public int altered() {
    return alteredCount.get();
  }

  private final AtomicInteger alteredCount = new AtomicInteger();

  private Alteration alterationFor(Request request) {
    for (Altering altering : alterations) {
      if (altering.matches().test(request)) {
        if (altering.alteration() instanceof Alteration.DropHeader drop
            && !request.headers().containsKey(drop.name().toLowerCase(Locale.ROOT))) {
          continue;
        }
        alteredCount.incrementAndGet();
        return altering.alteration();
      }
    }
    return null;
  }

  /** Faults injected so far. */
  public int injected() {
    return injected.get();
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

  private void acceptLoop() {
    while (!server.isClosed()) {
      try {
        Socket client = server.accept();
        open.add(client);
        Thread handler = new Thread(() -> serve(client), "fault-proxy-conn");
        handler.setDaemon(true);
        handler.start();
      } catch (IOException e) {
        return;
      }
    }
  }

  private void serve(Socket client) {
    try (client;
        Socket store = new Socket()) {
      store.connect(new InetSocketAddress(upstream.getHost(), upstream.getPort()), 10_000);
      open.add(store);
      InputStream fromClient = new BufferedInputStream(client.getInputStream());
      OutputStream toStore = store.getOutputStream();
      Relay answers = new Relay(store.getInputStream(), client);
      Thread relay = new Thread(answers, "fault-proxy-relay");
      relay.setDaemon(true);
      relay.start();
      while (true) {
        byte[] head = readHead(fromClient);
        if (head == null) {
          return;
        }
        Request request = parse(head);
        Fault fault = faultFor(request);
        if (fault == Fault.RESET_BEFORE) {
          reset(client);
          return;
        }
        if (fault == Fault.STATUS_500 || fault == Fault.STATUS_503) {
          answer(client, fault == Fault.STATUS_500 ? 500 : 503);
          return;
        }
        if (fault == Fault.DELAY_2S) {
          Thread.sleep(2_000);
        }
        if (fault == Fault.RESET_AFTER_STORE_ACTED) {
          answers.dropNextAnswer();
        }
        long length = Long.parseLong(request.headers().getOrDefault("content-length", "0"));
        Alteration alteration = fault == null ? alterationFor(request) : null;
        if (alteration != null) {
          byte[] body = fromClient.readNBytes((int) length);
          if (alteration instanceof Alteration.FakeAnswer fake) {
            answerEmpty(client, fake.status());
            return;
          }
          if (alteration instanceof Alteration.DropHeader drop) {
            byte[] resigned = RequestSigner.withoutHeader(request, body, drop.name(), signing);
            toStore.write(resigned);
            toStore.flush();
            continue;
          }
          Alteration.RewriteAnswer rewrite = (Alteration.RewriteAnswer) alteration;
          rewriteExchange(head, body, client, rewrite.body());
          return;
        }
        toStore.write(head);
        copyExactly(fromClient, toStore, length);
        toStore.flush();
      }
    } catch (IOException | InterruptedException e) {
      // The client or the store went away: nothing to report.
    } finally {
      open.remove(client);
    }
  }

  private static void copyExactly(InputStream in, OutputStream out, long length)
      throws IOException {
    byte[] buffer = new byte[64 * 1024];
    long left = length;
    while (left > 0) {
      int n = in.read(buffer, 0, (int) Math.min(buffer.length, left));
      if (n < 0) {
        throw new IOException("client closed mid-body");
      }
      out.write(buffer, 0, n);
      left -= n;
    }
  }

  /** Relays the store's answers to the client; can drop one answer by resetting the client. */
  private static final class Relay implements Runnable {
    private final InputStream fromStore;
    private final Socket client;
    private volatile boolean dropNext;

    Relay(InputStream fromStore, Socket client) {
      this.fromStore = fromStore;
      this.client = client;
    }

    void dropNextAnswer() {
      dropNext = true;
    }

    @Override
    public void run() {
      byte[] buffer = new byte[64 * 1024];
      try {
        OutputStream toClient = client.getOutputStream();
        int n;
        while ((n = fromStore.read(buffer)) >= 0) {
          if (dropNext && !isInterim(buffer, n)) {
            reset(client);
            return;
          }
          toClient.write(buffer, 0, n);
          toClient.flush();
        }
      } catch (IOException e) {
        // connection gone
      }
    }

    /** A "100 Continue" interim answer belongs to the request, not to its final answer. */
    private static boolean isInterim(byte[] buffer, int n) {
      String start = new String(buffer, 0, Math.min(n, 12), StandardCharsets.ISO_8859_1);
      return start.startsWith("HTTP/1.1 100");
    }
  }

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
    return null;
  }

  private static Request parse(byte[] head) {
    String[] lines = new String(head, StandardCharsets.ISO_8859_1).split("\r\n");
    String[] requestLine = lines[0].split(" ");
    Map<String, String> headers = new TreeMap<>();
    for (int i = 1; i < lines.length; i++) {
      int colon = lines[i].indexOf(':');
      if (colon > 0) {
        headers.put(
            lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT),
            lines[i].substring(colon + 1).trim());
      }
    }
    return new Request(requestLine[0], requestLine.length > 1 ? requestLine[1] : "/", headers);
  }

  private static void answer(Socket client, int status) throws IOException {
    String code = status == 503 ? "SlowDown" : "InternalError";
    String reason = status == 503 ? "Slow Down" : "Internal Server Error";
    byte[] body =
        ("<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>"
                + code
                + "</Code><Message>injected by the test proxy</Message></Error>")
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

  /** An answer made by the proxy, with no body; the connection closes after it. */
  private static void answerEmpty(Socket client, int status) throws IOException {
    String head =
        "HTTP/1.1 " + status + " Altered\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    OutputStream out = client.getOutputStream();
    out.write(head.getBytes(StandardCharsets.ISO_8859_1));
    out.flush();
  }

  /**
   * Sends one request to the store on a connection of its own, reads its whole answer (the store's
   * XML answers carry a Content-Length) and gives the client the answer with its body rewritten;
   * the client's connection closes after it.
   */
  private void rewriteExchange(
      byte[] head, byte[] body, Socket client, java.util.function.UnaryOperator<String> rewrite)
      throws IOException {
    try (Socket store = new Socket()) {
      store.connect(new InetSocketAddress(upstream.getHost(), upstream.getPort()), 10_000);
      store.getOutputStream().write(head);
      store.getOutputStream().write(body);
      store.getOutputStream().flush();
      InputStream in = new BufferedInputStream(store.getInputStream());
      byte[] answerHead = readHead(in);
      while (answerHead != null
          && new String(answerHead, 0, 12, StandardCharsets.ISO_8859_1)
              .startsWith("HTTP/1.1 100")) {
        answerHead = readHead(in);
      }
      if (answerHead == null) {
        reset(client);
        return;
      }
      String[] lines = new String(answerHead, StandardCharsets.ISO_8859_1).split("\r\n");
      long length = 0;
      boolean chunked = false;
      StringBuilder kept = new StringBuilder(lines[0]).append("\r\n");
      for (int i = 1; i < lines.length; i++) {
        String lower = lines[i].toLowerCase(Locale.ROOT);
        if (lower.startsWith("content-length:")) {
          length = Long.parseLong(lines[i].substring(lines[i].indexOf(':') + 1).trim());
        } else if (lower.startsWith("transfer-encoding:")) {
          chunked = lower.contains("chunked");
        } else if (!lower.startsWith("connection:") && !lines[i].isEmpty()) {
          kept.append(lines[i]).append("\r\n");
        }
      }
      String original =
          new String(
              chunked ? readChunked(in) : in.readNBytes((int) length), StandardCharsets.UTF_8);
      byte[] altered = rewrite.apply(original).getBytes(StandardCharsets.UTF_8);
      kept.append("Content-Length: ").append(altered.length).append("\r\n");
      kept.append("Connection: close\r\n\r\n");
      OutputStream out = client.getOutputStream();
      out.write(kept.toString().getBytes(StandardCharsets.ISO_8859_1));
      out.write(altered);
      out.flush();
    }
  }

  /** A body sent with {@code Transfer-Encoding: chunked} (Ceph RGW's listings), decoded. */
  private static byte[] readChunked(InputStream in) throws IOException {
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    while (true) {
      String sizeLine = readLine(in);
      int semicolon = sizeLine.indexOf(';');
      int size =
          Integer.parseInt(
              (semicolon < 0 ? sizeLine : sizeLine.substring(0, semicolon)).trim(), 16);
      if (size == 0) {
        while (!readLine(in).isEmpty()) {
          // trailers
        }
        return body.toByteArray();
      }
      body.write(in.readNBytes(size));
      readLine(in);
    }
  }

  private static String readLine(InputStream in) throws IOException {
    ByteArrayOutputStream line = new ByteArrayOutputStream();
    int b;
    while ((b = in.read()) >= 0 && b != '\n') {
      if (b != '\r') {
        line.write(b);
      }
    }
    return line.toString(StandardCharsets.ISO_8859_1);
  }

  private static void reset(Socket socket) {
    try {
      socket.setSoLinger(true, 0);
      socket.close();
    } catch (IOException e) {
      // already gone
    }
  }

  @Override
  public void close() throws IOException {
    server.close();
    for (Socket socket : open) {
      reset(socket);
    }
  }
}
