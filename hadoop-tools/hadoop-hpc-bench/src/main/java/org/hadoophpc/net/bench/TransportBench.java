/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.apache.hadoop.conf.Configuration;
import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.BufferPool;
import org.hadoophpc.net.Completion;
import org.hadoophpc.net.Connection;
import org.hadoophpc.net.Listener;
import org.hadoophpc.net.RegisteredMemory;
import org.hadoophpc.net.RequestHandler;
import org.hadoophpc.net.Transport;
import org.hadoophpc.net.TransportConf;
import org.hadoophpc.net.TransportConfigKeys;
import org.hadoophpc.net.TransportFactory;
import org.hadoophpc.net.tcp.TcpTransport;
import org.hadoophpc.net.verbs.VerbsTransport;

/**
 * Transport macro benchmark: for each message size, ping-pong latency (median and p99 of round
 * trips, same size both ways) and streaming bandwidth ({@code --window} requests in flight,
 * 8-byte responses), measured over a {@link Transport} and, as the baseline in the same run, over
 * plain blocking {@link Socket}s with one thread per side and the same message pattern
 * (4-byte length prefix). Both sides run in this JVM, over {@code --bind} (loopback by default).
 *
 * <p>The transport side runs as an application that cares about garbage would: the client uses
 * the {@link Completion} forms with one reusable completion per request in flight, and the
 * server's handlers answer by request id ({@link RequestHandler#onRequest(Connection, Buffer,
 * long)}), so that what the allocation columns show is the transport's own.
 *
 * <p>Prints a header (JVM, CPU, kernel, Hadoop version), a table, then per size
 * {@code RESULT transport-bw-<size> raw=<MB/s> hpc=<MB/s> ratio=<hpc/raw>} and
 * {@code RESULT transport-lat-<size> raw=<us> hpc=<us> ratio=<hpc/raw>} (median latency), plus
 * the bytes the transport's event threads and the client thread allocated per message in the
 * measured phases ({@code RESULT transport-alloc-<size> loop=<B/msg> client=<B/msg>},
 * ThreadMXBean), and each side's registered memory with its connections still open
 * ({@code RESULT transport-memory-<server|client> reserved=.. used=.. rings=.. max=..}, bytes).
 * Every phase is bounded in time.
 *
 * <p>Usage: {@code TransportBench [--transport tcp|verbs] [--bind ADDRESS] [--seconds S]
 * [--window N] [--rounds R] [--sizes 4k,64k,...]}: each phase runs {@code --seconds} after a
 * quarter of that as warm-up, raw and hpc alternating, {@code --rounds} times; the best round
 * counts (the least disturbed by other load on the machine).
 */
public final class TransportBench {
  static final int RESPONSE_BYTES = 8;
  static final int MAX_SAMPLES = 1 << 20;

  private final String transportKind;
  private final InetAddress bind;
  private final long measureNanos;
  private final long warmupNanos;
  private final int window;
  private final int rounds;
  private final int[] sizes;
  private final com.sun.management.ThreadMXBean threads =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
  private final long[] samples = new long[MAX_SAMPLES];

  private TransportBench(String transportKind, InetAddress bind, double seconds, int window,
      int rounds, int[] sizes) {
    this.transportKind = transportKind;
    this.bind = bind;
    this.measureNanos = (long) (seconds * 1e9);
    this.warmupNanos = measureNanos / 4;
    this.window = window;
    this.rounds = rounds;
    this.sizes = sizes;
  }

  /** One size's numbers. */
  private record Row(int size, double rawLatP50, double rawLatP99, double hpcLatP50,
      double hpcLatP99, double rawBw, double hpcBw, double allocLoop, double allocClient) {
  }

  public static void main(String[] args) throws Exception {
    String kind = "tcp";
    String bindAddress = "127.0.0.1";
    double seconds = 0.5;
    int window = 16;
    int rounds = 3;
    int[] sizes = {4 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20};
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (i + 1 >= args.length && !a.equals("--help")) {
        usage("missing value after " + a);
      }
      switch (a) {
        case "--transport" -> kind = args[++i];
        case "--bind" -> bindAddress = args[++i];
        case "--seconds" -> seconds = Double.parseDouble(args[++i]);
        case "--window" -> window = Integer.parseInt(args[++i]);
        case "--rounds" -> rounds = Integer.parseInt(args[++i]);
        case "--sizes" -> sizes = Arrays.stream(args[++i].split(",")).mapToInt(
            TransportBench::parseSize).toArray();
        case "--help" -> usage(null);
        default -> usage("unknown option " + a);
      }
    }
    if (!kind.equals("tcp") && !kind.equals("verbs")) {
      usage("--transport must be tcp or verbs, not " + kind);
    }
    new TransportBench(kind, InetAddress.getByName(bindAddress), seconds, window, rounds,
        sizes).run();
  }

  private static void usage(String error) {
    if (error != null) {
      System.err.println("ERROR: " + error);
    }
    System.err.println("usage: TransportBench [--transport tcp|verbs] [--bind ADDRESS]"
        + " [--seconds S] [--window N] [--rounds R] [--sizes 4k,64k,256k,1m,4m]");
    System.exit(error == null ? 0 : 2);
  }

  private static int parseSize(String s) {
    String t = s.trim().toLowerCase(Locale.ROOT);
    int shift = t.endsWith("k") ? 10 : t.endsWith("m") ? 20 : 0;
    return Integer.parseInt(shift == 0 ? t : t.substring(0, t.length() - 1)) << shift;
  }

  private static String sizeName(int size) {
    return size % (1 << 20) == 0 ? (size >> 20) + "m"
        : size % (1 << 10) == 0 ? (size >> 10) + "k" : String.valueOf(size);
  }

  private void run() throws Exception {
    printHeader();
    List<Row> rows = new ArrayList<>();
    long reserved;
    long maxBytes;
    RegisteredMemory serverMemory;
    RegisteredMemory clientMemory;
    TransportConf tconf = TransportConf.from(new Configuration());
    try (Transport server = newTransport(tconf); Transport client = newTransport(tconf);
         Listener echo = server.listen(new InetSocketAddress(bind, 0), new EchoHandler());
         Listener sink = server.listen(new InetSocketAddress(bind, 0),
             new SinkHandler(server.bufferPool()));
         Connection toEcho = client.connect(echo.address()).get(30, TimeUnit.SECONDS);
         Connection toSink = client.connect(sink.address()).get(30, TimeUnit.SECONDS)) {
      Thread[] loops = eventThreads(server, client);
      RawSocketBaseline raw = new RawSocketBaseline(bind, warmupNanos, measureNanos, window,
          Arrays.stream(sizes).max().orElse(0), samples);
      for (int size : sizes) {
        // Raw and hpc alternate, best of the rounds: other load on the machine hits both.
        double[] rawLat = {Double.MAX_VALUE, 0};
        double[] hpcLat = {Double.MAX_VALUE, 0};
        double rawBw = 0;
        double hpcBw = 0;
        long[] alloc = new long[2];
        long messages = 0;
        for (int round = 0; round < rounds; round++) {
          rawLat = better(rawLat, raw.latency(size));
          double[] l = hpcLatency(toEcho, client.bufferPool(), size, loops, alloc);
          messages += (long) l[2];
          hpcLat = better(hpcLat, l);
          rawBw = Math.max(rawBw, raw.bandwidth(size));
          double[] b = hpcBandwidth(toSink, client.bufferPool(), size, loops, alloc);
          messages += (long) b[1];
          hpcBw = Math.max(hpcBw, b[0]);
        }
        rows.add(new Row(size, rawLat[0], rawLat[1], hpcLat[0], hpcLat[1], rawBw, hpcBw,
            (double) alloc[0] / messages, (double) alloc[1] / messages));
      }
      reserved = Math.max(client.bufferPool().reservedBytes(),
          server.bufferPool().reservedBytes());
      maxBytes = client.bufferPool().maxBytes();
      serverMemory = server.registeredMemory();
      clientMemory = client.registeredMemory();
    }
    printTable(rows, reserved, maxBytes);
    printMemory("server", serverMemory);
    printMemory("client", clientMemory);
  }

  /** The round with the lower median. */
  private static double[] better(double[] a, double[] b) {
    return b[0] < a[0] ? b : a;
  }

  /**
   * The transport under test: tcp directly; verbs through {@link TransportFactory} with
   * {@code hadoop.hpc.transport=verbs} and strict, so a benchmark never measures a silent
   * fallback to tcp.
   */
  private Transport newTransport(TransportConf conf) throws IOException {
    if (transportKind.equals("verbs")) {
      Configuration c = new Configuration();
      c.set(TransportConfigKeys.TRANSPORT_KEY, "verbs");
      c.setBoolean(TransportConfigKeys.OPEN_FAILS_WITHOUT_VERBS_KEY, true);
      return TransportFactory.create(c);
    }
    return new TcpTransport(conf);
  }

  private static Thread[] eventThreads(Transport... transports) {
    List<Thread> all = new ArrayList<>();
    for (Transport t : transports) {
      if (t instanceof TcpTransport tcp) {
        all.addAll(Arrays.asList(tcp.eventThreads()));
      } else if (t instanceof VerbsTransport verbs) {
        all.addAll(Arrays.asList(verbs.eventThreads()));
      }
    }
    return all.toArray(new Thread[0]);
  }

  private long allocated(Thread[] loops) {
    long sum = 0;
    for (Thread t : loops) {
      sum += threads.getThreadAllocatedBytes(t.getId());
    }
    return sum;
  }

  private long allocatedHere() {
    return threads.getThreadAllocatedBytes(Thread.currentThread().getId());
  }

  // ------------------------------------------------------------------ transport

  /** Answers with the request itself, by id: no object per request. */
  private static final class EchoHandler implements RequestHandler {
    @Override
    public void onRequest(Connection conn, Buffer request, long requestId) {
      conn.respond(requestId, request);
    }

    @Override
    public void onRequest(Connection conn, Buffer request, Responder responder) {
      responder.respond(request); // not called: transports use the form above
    }
  }

  /** Drops the request and answers with 8 bytes, by id. */
  private static final class SinkHandler implements RequestHandler {
    private final BufferPool pool;

    SinkHandler(BufferPool pool) {
      this.pool = pool;
    }

    @Override
    public void onRequest(Connection conn, Buffer request, long requestId) {
      request.release();
      Buffer response = pool.allocate(RESPONSE_BYTES);
      if (response == null) {
        conn.fail(requestId, "benchmark server out of buffers");
        return;
      }
      response.nio().putLong(0, 1L);
      conn.respond(requestId, response);
    }

    @Override
    public void onRequest(Connection conn, Buffer request, Responder responder) {
      throw new UnsupportedOperationException("transports deliver requests by id");
    }
  }

  /**
   * A reusable completion the client thread waits on: set by the event thread, which then
   * unparks the waiter. Allocation-free, unlike a future's get.
   */
  private static final class Handoff implements Completion<Buffer> {
    private final Thread waiter = Thread.currentThread();
    private volatile boolean done;
    private Buffer result;
    private Throwable failure;

    void reset() {
      result = null;
      failure = null;
      done = false;
    }

    @Override
    public void completed(Buffer response) {
      result = response;
      done = true;
      LockSupport.unpark(waiter);
    }

    @Override
    public void failed(Throwable cause) {
      failure = cause;
      done = true;
      LockSupport.unpark(waiter);
    }

    /** The response, waiting up to 30 s. */
    Buffer await() throws IOException {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (!done) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new IOException("no response within 30 s");
        }
        LockSupport.parkNanos(this, left);
      }
      if (failure != null) {
        throw new IOException("request failed: " + failure, failure);
      }
      return result;
    }
  }

  /** {p50 us, p99 us, messages}; adds allocation of the measured phase to {@code alloc}. */
  private double[] hpcLatency(Connection c, BufferPool pool, int size, Thread[] loops,
      long[] alloc) throws Exception {
    Handoff h = new Handoff();
    long end = System.nanoTime() + warmupNanos;
    while (System.nanoTime() < end) {
      hpcRoundTrip(c, pool, size, h);
    }
    long loop0 = allocated(loops);
    long here0 = allocatedHere();
    int n = 0;
    end = System.nanoTime() + measureNanos;
    while (n < MAX_SAMPLES && System.nanoTime() < end) {
      samples[n++] = hpcRoundTrip(c, pool, size, h);
    }
    alloc[0] += allocated(loops) - loop0;
    alloc[1] += allocatedHere() - here0;
    return percentiles(n);
  }

  private static long hpcRoundTrip(Connection c, BufferPool pool, int size, Handoff h)
      throws Exception {
    long t0 = System.nanoTime();
    send(c, pool, size, h);
    Buffer response = h.await();
    long t = System.nanoTime() - t0;
    if (response.readableBytes() != size) {
      throw new IllegalStateException("echo of " + size + " bytes came back with "
          + response.readableBytes());
    }
    response.release();
    return t;
  }

  /** {MB/s, messages}. */
  private double[] hpcBandwidth(Connection c, BufferPool pool, int size, Thread[] loops,
      long[] alloc) throws Exception {
    Handoff[] ring = new Handoff[window];
    for (int i = 0; i < window; i++) {
      ring[i] = new Handoff();
      send(c, pool, size, ring[i]);
    }
    long warmEnd = System.nanoTime() + warmupNanos;
    int head = 0;
    while (System.nanoTime() < warmEnd) {
      ring[head].await().release();
      send(c, pool, size, ring[head]);
      head = (head + 1) % window;
    }
    long loop0 = allocated(loops);
    long here0 = allocatedHere();
    long t0 = System.nanoTime();
    long end = t0 + measureNanos;
    long done = 0;
    while (System.nanoTime() < end) {
      ring[head].await().release();
      done++;
      send(c, pool, size, ring[head]);
      head = (head + 1) % window;
    }
    long elapsed = System.nanoTime() - t0;
    alloc[0] += allocated(loops) - loop0;
    alloc[1] += allocatedHere() - here0;
    for (int i = 0; i < window; i++) {
      ring[(head + i) % window].await().release();
    }
    return new double[] {done * (double) size / elapsed * 1e3, done};
  }

  /** Sends a request of {@code size} bytes whose response {@code h} receives. */
  private static void send(Connection c, BufferPool pool, int size, Handoff h) {
    Buffer request = pool.allocate(size);
    if (request == null) {
      throw new IllegalStateException("client pool exhausted: " + pool);
    }
    h.reset();
    if (!c.request(request, h)) {
      request.release();
      throw new IllegalStateException("back-pressure with a window of a few requests: raise "
          + "hadoop.hpc.transport.max.inflight above --window");
    }
  }

  // ------------------------------------------------------------------ output

  private double[] percentiles(int n) {
    return percentiles(samples, n);
  }

  /** {p50 us, p99 us, n} of the first {@code n} of {@code samples} (ns). */
  static double[] percentiles(long[] samples, int n) {
    if (n == 0) {
      return new double[] {Double.NaN, Double.NaN, 0};
    }
    long[] s = Arrays.copyOf(samples, n);
    Arrays.sort(s);
    return new double[] {s[(n - 1) / 2] / 1e3, s[Math.min(n - 1, (int) (n * 0.99))] / 1e3, n};
  }

  private void printHeader() {
    Runtime rt = Runtime.getRuntime();
    System.out.println("# hadoop-hpc transport benchmark");
    System.out.println("# jvm:       " + System.getProperty("java.vm.name") + " "
        + System.getProperty("java.runtime.version") + " (" + rt.availableProcessors()
        + " cpus, max heap " + (rt.maxMemory() >> 20) + " MiB)");
    System.out.println("# cpu:       " + cpuModel());
    System.out.println("# kernel:    " + System.getProperty("os.name") + " "
        + System.getProperty("os.version") + " " + System.getProperty("os.arch"));
    System.out.println("# hadoop:    " + hadoopVersion());
    System.out.println("# transport: " + transportKind + " on " + bind.getHostAddress()
        + " vs raw blocking java.net.Socket (TCP_NODELAY, one thread per side)");
    System.out.println("# pattern:   latency = ping-pong of equal-sized messages;"
        + " bandwidth = " + window + " requests in flight, " + RESPONSE_BYTES
        + "-byte responses; " + (measureNanos / 1_000_000) + " ms measured after "
        + (warmupNanos / 1_000_000) + " ms warm-up per phase, best of " + rounds
        + " alternating rounds; ratio = hpc/raw");
  }

  private static String cpuModel() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"), StandardCharsets.UTF_8)) {
        if (line.startsWith("model name")) {
          return line.substring(line.indexOf(':') + 1).trim();
        }
      }
    } catch (IOException e) {
      return "unknown (" + e.getMessage() + ")";
    }
    return "unknown";
  }

  private static String hadoopVersion() {
    try {
      Class<?> v = Class.forName("org.apache.hadoop.util.VersionInfo");
      return String.valueOf(v.getMethod("getVersion").invoke(null));
    } catch (ReflectiveOperationException | LinkageError e) {
      return "not on the classpath";
    }
  }

  private void printTable(List<Row> rows, long reserved, long maxBytes) {
    System.out.println();
    System.out.printf(Locale.ROOT, "%-6s %21s %21s %10s %10s %6s %14s%n", "size",
        "raw lat p50/p99 us", "hpc lat p50/p99 us", "raw MB/s", "hpc MB/s", "bw x",
        "alloc B/msg");
    for (Row r : rows) {
      System.out.printf(Locale.ROOT, "%-6s %10.1f/%10.1f %10.1f/%10.1f %10.1f %10.1f %6.2f"
          + " %6.0f+%-7.0f%n", sizeName(r.size), r.rawLatP50, r.rawLatP99, r.hpcLatP50,
          r.hpcLatP99, r.rawBw, r.hpcBw, r.hpcBw / r.rawBw, r.allocLoop, r.allocClient);
    }
    System.out.println("# alloc B/msg = bytes allocated per message (request+response) in the"
        + " measured hpc phases: event threads (both transports) + client thread");
    System.out.printf(Locale.ROOT, "# pool: %d bytes reserved at most per transport (max %d)%n",
        reserved, maxBytes);
    System.out.println();
    for (Row r : rows) {
      String n = sizeName(r.size);
      System.out.printf(Locale.ROOT, "RESULT transport-bw-%s raw=%.1f hpc=%.1f ratio=%.2f%n", n,
          r.rawBw, r.hpcBw, r.hpcBw / r.rawBw);
      System.out.printf(Locale.ROOT, "RESULT transport-lat-%s raw=%.1f hpc=%.1f ratio=%.2f%n", n,
          r.rawLatP50, r.hpcLatP50, r.hpcLatP50 / r.rawLatP50);
    }
    for (Row r : rows) {
      System.out.printf(Locale.ROOT, "RESULT transport-alloc-%s loop=%.0f client=%.0f%n",
          sizeName(r.size), r.allocLoop, r.allocClient);
    }
    System.out.printf(Locale.ROOT, "RESULT transport-pool reserved=%d max=%d%n", reserved,
        maxBytes);
  }

  private static void printMemory(String side, RegisteredMemory m) {
    System.out.printf(Locale.ROOT, "RESULT transport-memory-%s reserved=%d used=%d rings=%d"
        + " max=%d%n", side, m.reservedBytes(), m.usedBytes(), m.ringBytes(), m.maxBytes());
  }
}
