/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net;

import static org.hadoophpc.net.TransportConfigKeys.BUFFER_POOL_MAX_KEY;
import static org.hadoophpc.net.TransportConfigKeys.BUFFER_SLAB_SIZE_KEY;
import static org.hadoophpc.net.TransportConfigKeys.CONNECT_TIMEOUT_KEY;
import static org.hadoophpc.net.TransportConfigKeys.IO_TIMEOUT_KEY;
import static org.hadoophpc.net.TransportConfigKeys.MAX_INFLIGHT_KEY;
import static org.hadoophpc.net.TransportConfigKeys.MAX_MESSAGE_SIZE_KEY;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.CRC32;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.metrics2.impl.MetricsCollectorImpl;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The transport contract, as one suite every implementation passes unchanged: a subclass only
 * says how to make its transport ({@link #newTransport}) and, for RDMA, where to bind
 * ({@link #bindAddress}). Each test starts a server and a client transport in this JVM, checks
 * contents by pattern or checksum, and ends by closing both and checking that neither pool has a
 * buffer outstanding. No assertion depends on timing; waits are bounded only to never hang.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class TransportConformanceTest {
  /** Bound of every wait: generous, only there so that a broken transport fails, not hangs. */
  protected static final long WAIT_SECONDS = 30;
  private static final int MIB = 1 << 20;

  private final List<Transport> transports = new ArrayList<>();
  private final List<Buffer> exposed = new ArrayList<>();
  protected Transport server;
  protected Transport client;
  protected Listener listener;
  protected Connection connection;

  /** A new transport of the kind under test. */
  protected abstract Transport newTransport(Configuration conf) throws Exception;

  /** Where servers listen; a verbs subclass returns its RDMA interface's address. */
  protected InetSocketAddress bindAddress() {
    return new InetSocketAddress("127.0.0.1", 0);
  }

  /**
   * Pool bytes a connection's receive ring takes on a transport configured by {@code conf}
   * (verbs: header slots and eager receive buffers come from the pool; tcp: none). Tests that
   * size a pool for exactly N messages add it.
   */
  protected long ringBytes(Configuration conf) {
    return 0;
  }

  /** True when this transport answers {@link Connection#respondFile} itself (tcp). */
  protected boolean sendsFiles() {
    return false;
  }

  /** Configuration every test starts from; tests override single keys. */
  protected Configuration baseConf() {
    Configuration c = new Configuration(false);
    c.set(IO_TIMEOUT_KEY, "20s");
    c.set(CONNECT_TIMEOUT_KEY, "10s");
    c.set(BUFFER_POOL_MAX_KEY, "256m");
    c.set(MAX_MESSAGE_SIZE_KEY, "16m");
    c.set(MAX_INFLIGHT_KEY, "64");
    return c;
  }

  protected Configuration conf(String... keysAndValues) {
    Configuration c = baseConf();
    for (int i = 0; i < keysAndValues.length; i += 2) {
      c.set(keysAndValues[i], keysAndValues[i + 1]);
    }
    return c;
  }

  private Transport track(Transport t) {
    transports.add(t);
    return t;
  }

  /** Starts a server with {@code handler}, a client, and connects them. */
  protected void start(Configuration conf, RequestHandler handler) throws Exception {
    server = track(newTransport(conf));
    client = track(newTransport(conf));
    listener = server.listen(bindAddress(), handler);
    connection = client.connect(listener.address()).get(WAIT_SECONDS, TimeUnit.SECONDS);
  }

  @AfterEach
  void closeAndCheckForLeaks() throws Exception {
    for (Buffer b : exposed) {
      b.release();
    }
    IOException failure = null;
    for (Transport t : transports) {
      try {
        t.close();
      } catch (IOException e) {
        if (failure == null) {
          failure = e;
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
    for (Transport t : transports) {
      assertEquals(0, t.bufferPool().outstandingBuffers(), t.name()
          + " transport leaked buffers: " + t.bufferPool());
    }
  }

  // ------------------------------------------------------------------ helpers

  /** Fills {@code size} bytes from position 0 with a pattern depending on {@code seed}. */
  protected static Buffer filled(BufferPool pool, int size, long seed) {
    Buffer b = pool.allocate(size);
    assertNotNull(b, "pool exhausted: " + pool);
    ByteBuffer n = b.nio();
    for (int i = 0; i < size; i++) {
      n.put(i, pattern(seed, i));
    }
    return b;
  }

  private static byte pattern(long seed, int i) {
    return (byte) (seed * 131 + i * 31 + (i >>> 11));
  }

  protected static long crc(ByteBuffer b) {
    CRC32 crc = new CRC32();
    crc.update(b.duplicate());
    return crc.getValue();
  }

  private static <T extends Throwable> T failure(CompletableFuture<?> f, Class<T> type)
      throws Exception {
    ExecutionException e = assertThrows(ExecutionException.class,
        () -> f.get(WAIT_SECONDS, TimeUnit.SECONDS));
    assertInstanceOf(type, e.getCause(), "expected " + type.getSimpleName() + ", got " + e);
    assertNotNull(e.getCause().getMessage());
    return type.cast(e.getCause());
  }

  private static <T> T await(CompletableFuture<T> f) throws Exception {
    assertNotNull(f, "unexpected back-pressure");
    return f.get(WAIT_SECONDS, TimeUnit.SECONDS);
  }

  /** Answers each request with a copy of it. */
  protected RequestHandler echo() {
    return (conn, request, responder) -> {
      Buffer response = server.bufferPool().allocate(request.readableBytes());
      if (response == null) {
        request.release();
        responder.fail("server pool exhausted");
        return;
      }
      response.nio().put(request.nio()).flip();
      request.release();
      responder.respond(response);
    };
  }

  /** Answers each request with its length and CRC32 (12 bytes). */
  protected RequestHandler checksum() {
    return (conn, request, responder) -> {
      int length = request.readableBytes();
      long sum = crc(request.nio());
      request.release();
      Buffer response = server.bufferPool().allocate(12);
      response.nio().putInt(length).putLong(sum).flip();
      responder.respond(response);
    };
  }

  /** Sends {@code size} bytes and checks the echo; the response is released. */
  private void echoRoundTrip(int size, long seed) throws Exception {
    Buffer request = filled(client.bufferPool(), size, seed);
    long sum = crc(request.nio());
    Buffer response = await(connection.request(request));
    try {
      assertEquals(size, response.readableBytes());
      assertEquals(sum, crc(response.nio()), "echo of " + size + " bytes differs");
      if (size > 0) {
        assertEquals(pattern(seed, size - 1), response.nio().get(response.nio().limit() - 1));
      }
    } finally {
      response.release();
    }
  }

  /** A server buffer of {@code size} bytes filled with a pattern, exposed for one-sided use. */
  private RemoteRegion exposeFilled(int size, long seed) throws Exception {
    Buffer b = filled(server.bufferPool(), size, seed);
    exposed.add(b);
    RemoteRegion r = server.expose(b);
    // The descriptor travels in messages: check it survives its encoding.
    ByteBuffer wire = ByteBuffer.allocate(RemoteRegion.BYTES);
    r.writeTo(wire);
    wire.flip();
    RemoteRegion copy = RemoteRegion.readFrom(wire);
    assertEquals(r, copy);
    assertTrue(copy.length() >= size);
    return copy;
  }

  private Buffer exposedBuffer(int index) {
    return exposed.get(index);
  }

  // ------------------------------------------------------------------ file answers

  /** A file of {@code size} pattern bytes (seed 5) in a new temporary directory. */
  protected static java.nio.file.Path patternFile(int size) throws IOException {
    java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("file-answers");
    java.nio.file.Path f = dir.resolve("data");
    byte[] bytes = new byte[size];
    for (int i = 0; i < size; i++) {
      bytes[i] = pattern(5, i);
    }
    java.nio.file.Files.write(f, bytes);
    f.toFile().deleteOnExit();
    dir.toFile().deleteOnExit();
    return f;
  }

  /**
   * Answers a request {@code (long position, int length)} with that region of {@code file}
   * through respondFile, or, where the transport cannot, read into a buffer; counts the
   * answers respondFile took.
   */
  protected RequestHandler fileAnswers(java.nio.channels.FileChannel file, AtomicInteger direct) {
    return (conn, request, responder) -> {
      long position = request.nio().getLong(0);
      int length = request.nio().getInt(8);
      request.release();
      assertEquals(sendsFiles(), conn.respondsFromFiles());
      if (responder.respondFile(file, position, length)) {
        direct.incrementAndGet();
        return;
      }
      Buffer b = server.bufferPool().allocate(length);
      try {
        ByteBuffer dst = b.nio();
        while (dst.hasRemaining()) {
          if (file.read(dst, position + dst.position()) < 0) {
            throw new IOException("short file");
          }
        }
        dst.flip();
      } catch (IOException e) {
        b.release();
        responder.fail(e.toString());
        return;
      }
      responder.respond(b);
    };
  }

  /** How a handler that answers by request id sees a request. */
  public interface ByIdHandler {
    void onRequest(Connection connection, Buffer request, long requestId);
  }

  /** A handler whose requests arrive with their ids only (the form the data plane uses). */
  public static RequestHandler answeredById(ByIdHandler h) {
    return new RequestHandler() {
      @Override
      public void onRequest(Connection c, Buffer request, Responder responder) {
        throw new UnsupportedOperationException("answered by id");
      }

      @Override
      public void onRequest(Connection c, Buffer request, long requestId) {
        h.onRequest(c, request, requestId);
      }
    };
  }

  protected Buffer fileRequest(long position, int length) {
    Buffer request = client.bufferPool().allocate(12);
    request.nio().putLong(0, position).putInt(8, length);
    return request;
  }

  @Test
  void fileAnswersCarryExactlyTheRegionAsked() throws Exception {
    int size = 6 << 20;
    java.nio.file.Path f = patternFile(size);
    AtomicInteger direct = new AtomicInteger();
    try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(f)) {
      start(baseConf(), fileAnswers(ch, direct));
      long[][] regions = {{0, 0}, {0, 1}, {12345, 100_000}, {1 << 20, 4 << 20},
          {size - 7, 7}};
      List<CompletableFuture<Buffer>> pending = new ArrayList<>();
      for (long[] r : regions) {
        pending.add(connection.request(fileRequest(r[0], (int) r[1])));
      }
      for (int i = 0; i < regions.length; i++) {
        Buffer response = await(pending.get(i));
        try {
          ByteBuffer got = response.nio();
          assertEquals(regions[i][1], got.remaining(), "length of region " + i);
          for (int k = 0; k < got.remaining(); k++) {
            if (got.get(k) != pattern(5, (int) (regions[i][0] + k))) {
              throw new AssertionError("region " + i + " differs at byte " + k);
            }
          }
        } finally {
          response.release();
        }
      }
      assertEquals(sendsFiles() ? regions.length : 0, direct.get(),
          "answers sent straight from the file");
    }
  }

  /**
   * A connect made on the caller's thread ({@link Transport#connect(InetSocketAddress, long)}):
   * the connection serves requests, read by the caller where it leaves reads to callers (tcp)
   * and by the transport otherwise; closing it by the caller fails what is still pending and
   * the server sees the close; a connect nobody listens for fails with a
   * {@link TransportException} within the timeout and is counted.
   */
  @Test
  void aConnectOnTheCallersThreadServesClosesAndCountsFailures() throws Exception {
    AtomicInteger serverSawClose = new AtomicInteger();
    RequestHandler echo = echo();
    start(baseConf(), new RequestHandler() {
      @Override
      public void onRequest(Connection conn, Buffer request, Responder responder) {
        if (request.readableBytes() == 1) { // held: fails when the client closes
          request.release();
          return;
        }
        echo.onRequest(conn, request, responder);
      }

      @Override
      public void onClose(Connection conn) {
        serverSawClose.incrementAndGet(); // the fixture's own connection stays open
      }
    });
    long opened = client.metrics().connectionsOpened();
    Connection c = client.connect(listener.address(), TimeUnit.SECONDS.toMillis(WAIT_SECONDS));
    assertTrue(c.isOpen());
    assertEquals(opened + 1, client.metrics().connectionsOpened());
    for (int i = 0; i < 20; i++) {
      Buffer request = client.bufferPool().allocate(64);
      request.nio().putInt(0, i).putLong(4, i * 31L);
      CompletableFuture<Buffer> f = c.request(request);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
      while (!f.isDone() && System.nanoTime() < deadline) {
        if (!c.readOnCaller(TimeUnit.MILLISECONDS.toNanos(20))) {
          try {
            f.get(20, TimeUnit.MILLISECONDS);
          } catch (java.util.concurrent.TimeoutException e) {
            // again
          }
        }
      }
      Buffer response = f.get(1, TimeUnit.MILLISECONDS);
      assertEquals(i, response.nio().getInt(0));
      assertEquals(i * 31L, response.nio().getLong(4));
      response.release();
    }
    CompletableFuture<Buffer> held = c.request(client.bufferPool().allocate(1));
    c.close();
    ExecutionException e = assertThrows(ExecutionException.class,
        () -> held.get(WAIT_SECONDS, TimeUnit.SECONDS));
    assertTrue(e.getCause() instanceof ConnectionClosedException, e.toString());
    assertFalse(c.isOpen());
    waitFor(() -> serverSawClose.get() == 1, "the server to see the close");

    InetSocketAddress nobody = nobodyListens();
    long failures = client.metrics().connectFailures();
    assertThrows(TransportException.class,
        () -> client.connect(nobody, TimeUnit.SECONDS.toMillis(WAIT_SECONDS)));
    assertEquals(failures + 1, client.metrics().connectFailures());
  }

  // ------------------------------------------------------------------ ordering

  @Test
  void sequentialRequestsGetTheirOwnResponses() throws Exception {
    start(baseConf(), echo());
    for (int i = 0; i < 500; i++) {
      Buffer request = client.bufferPool().allocate(64);
      request.nio().putInt(0, i).putLong(4, i * 7919L);
      Buffer response = await(connection.request(request));
      assertEquals(64, response.readableBytes());
      assertEquals(i, response.nio().getInt(0));
      assertEquals(i * 7919L, response.nio().getLong(4));
      response.release();
    }
    assertEquals(0, connection.inFlight());
  }

  @Test
  void pipelinedRequestsAnsweredOutOfOrderMatchTheirResponses() throws Exception {
    // The handler answers each batch of 8 in reverse order, so matching must be by operation.
    int batch = 8;
    Queue<Object[]> held = new ArrayDeque<>();
    start(baseConf(), (conn, request, responder) -> {
      held.add(new Object[] {request, responder});
      if (held.size() == batch) {
        Object[][] all = held.toArray(new Object[0][]);
        held.clear();
        for (int i = all.length - 1; i >= 0; i--) {
          ((RequestHandler.Responder) all[i][1]).respond((Buffer) all[i][0]);
        }
      }
    });
    for (int round = 0; round < 100; round++) {
      List<CompletableFuture<Buffer>> futures = new ArrayList<>();
      for (int i = 0; i < batch; i++) {
        Buffer request = filled(client.bufferPool(), 100 + i, round * batch + i);
        request.nio().putInt(0, round * batch + i);
        CompletableFuture<Buffer> f = connection.request(request);
        assertNotNull(f);
        futures.add(f);
      }
      for (int i = 0; i < batch; i++) {
        Buffer response = await(futures.get(i));
        assertEquals(100 + i, response.readableBytes());
        assertEquals(round * batch + i, response.nio().getInt(0));
        assertEquals(pattern(round * batch + i, 99 + i), response.nio().get(99 + i));
        response.release();
      }
    }
  }

  // ------------------------------------------------------------------ sizes

  @ParameterizedTest(name = "{0} bytes")
  @ValueSource(ints = {0, 1, 4096, 64 << 10, MIB, 8 * MIB, 16 * MIB})
  void messagesOfEverySizeUpToTheMaximumArriveIntact(int size) throws Exception {
    start(baseConf(), echo());
    assertEquals(16 * MIB, TransportConf.from(baseConf()).maxMessageSize());
    echoRoundTrip(size, size);
    echoRoundTrip(size, size + 1);
  }

  @Test
  void messagesAboveTheMaximumAreRejectedBeforeSending() throws Exception {
    start(conf(MAX_MESSAGE_SIZE_KEY, "64k", BUFFER_SLAB_SIZE_KEY, "256k"), echo());
    int max = 64 << 10;
    assertThrows(IllegalArgumentException.class, () -> client.bufferPool().allocate(max + 1));
    try (BufferPool bigger = new BufferPool(4L * max, 2 * max, 2 * max,
        BufferPool.MemoryRegistrar.NONE)) {
      Buffer big = bigger.allocate(max + 1);
      assertThrows(IllegalArgumentException.class, () -> connection.request(big));
      assertEquals(1, big.refCnt(), "a rejected request stays the caller's");
      RemoteRegion region = exposeFilled(4096, 1);
      assertThrows(IllegalArgumentException.class, () -> connection.write(big, region, 0));
      Buffer dst = client.bufferPool().allocate(max);
      assertThrows(IllegalArgumentException.class, () -> connection.read(region, 0, max + 1,
          dst));
      dst.release();
      big.release();
    }
    echoRoundTrip(max, 3);
  }

  // ------------------------------------------------------------------ one-sided

  @Test
  void oneSidedReadsOfWholeRegionPartsAndOffsets() throws Exception {
    start(baseConf(), echo());
    int size = 256 << 10;
    RemoteRegion region = exposeFilled(size, 42);
    ByteBuffer source = exposedBuffer(0).nio();

    Buffer whole = client.bufferPool().allocate(size);
    assertNull(await(connection.read(region, 0, size, whole)));
    assertEquals(size, whole.nio().position(), "the destination's position advances");
    assertEquals(-1, whole.nio().flip().mismatch(source.slice(0, size)));
    whole.release();

    int[][] parts = {{0, 1}, {12345, 100}, {size - 4096, 4096}, {77, 65536}, {size, 0}};
    for (int[] p : parts) {
      Buffer dst = client.bufferPool().allocate(p[1] + 10);
      dst.nio().position(10);
      assertNull(await(connection.read(region, p[0], p[1], dst)));
      assertEquals(10 + p[1], dst.nio().position());
      assertEquals(-1, dst.nio().slice(10, p[1]).mismatch(source.slice(p[0], p[1])),
          "read of " + p[1] + " bytes at " + p[0]);
      dst.release();
    }
  }

  @Test
  void oneSidedWritesOfWholeRegionPartsAndOffsets() throws Exception {
    start(baseConf(), echo());
    int size = 256 << 10;
    RemoteRegion region = exposeFilled(size, 1);
    ByteBuffer target = exposedBuffer(0).nio();

    Buffer whole = filled(client.bufferPool(), size, 2);
    assertNull(await(connection.write(whole, region, 0)));
    assertEquals(-1, target.slice(0, size).mismatch(whole.nio().slice(0, size)));
    whole.release();

    int[][] parts = {{0, 1}, {4321, 1000}, {size - 65536, 65536}, {size, 0}};
    for (int[] p : parts) {
      Buffer src = filled(client.bufferPool(), p[1], p[0] + 3);
      ByteBuffer before = ByteBuffer.allocate(size).put(target.duplicate().clear()).flip();
      assertNull(await(connection.write(src, region, p[0])));
      assertEquals(-1, target.slice(p[0], p[1]).mismatch(src.nio().slice(0, p[1])),
          "write of " + p[1] + " bytes at " + p[0]);
      assertEquals(-1, target.slice(0, p[0]).mismatch(before.slice(0, p[0])),
          "bytes before the write changed");
      int after = p[0] + p[1];
      assertEquals(-1, target.slice(after, size - after).mismatch(before.slice(after,
          size - after)), "bytes after the write changed");
      src.release();
    }
    // A write then a read of the same place sees the write.
    Buffer src = filled(client.bufferPool(), 5000, 9);
    await(connection.write(src, region, 999));
    Buffer dst = client.bufferPool().allocate(5000);
    await(connection.read(region, 999, 5000, dst));
    assertEquals(-1, dst.nio().flip().mismatch(src.nio().slice(0, 5000)));
    src.release();
    dst.release();
  }

  @Test
  void outOfBoundsOneSidedOperationsFailAloneWithTheProblemNamed() throws Exception {
    start(baseConf(), echo());
    RemoteRegion region = exposeFilled(8192, 5);
    long length = region.length();
    Buffer dst = client.bufferPool().allocate(4096);
    TransportException e = failure(connection.read(region, length - 10, 20, dst),
        TransportException.class);
    assertFalse(e instanceof ConnectionClosedException, e.toString());
    dst.release();
    Buffer src = filled(client.bufferPool(), 4096, 6);
    e = failure(connection.write(src, region, length - 100), TransportException.class);
    assertFalse(e instanceof ConnectionClosedException, e.toString());
    src.release();
    // The connection is still good for everything.
    assertTrue(connection.isOpen());
    Buffer ok = client.bufferPool().allocate(100);
    await(connection.read(region, 0, 100, ok));
    ok.release();
    echoRoundTrip(4096, 7);
  }

  @Test
  void unexposedRegionsFailOneSidedOperations() throws Exception {
    start(baseConf(), echo());
    RemoteRegion region = exposeFilled(8192, 5);
    Buffer dst = client.bufferPool().allocate(4096);
    await(connection.read(region, 0, 4096, dst));
    server.unexpose(region);
    dst.nio().clear();
    TransportException e = failure(connection.read(region, 0, 4096, dst),
        TransportException.class);
    assertFalse(e instanceof ConnectionClosedException, e.toString());
    dst.nio().clear();
    e = failure(connection.write(dst, region, 0), TransportException.class);
    assertFalse(e instanceof ConnectionClosedException, e.toString());
    dst.release();
    assertTrue(connection.isOpen());
    echoRoundTrip(100, 8);
  }

  // ------------------------------------------------------------------ concurrency

  @Test
  void manyConnectionsFromManyThreadsWithRequestsInFlight() throws Exception {
    int clients = 32;
    int threads = 4;
    int perConnection = 40;
    int window = 4;
    start(baseConf(), checksum());
    List<Connection> connections = new ArrayList<>();
    connections.add(connection);
    for (int i = 1; i < clients; i++) {
      connections.add(await(client.connect(listener.address())));
    }
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<Integer>> results = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int first = t;
        results.add(pool.submit(() -> {
          int verified = 0;
          for (int c = first; c < clients; c += threads) {
            int n = c;
            verified += checkedRequests(connections.get(c), c * 1000L, perConnection, window,
                i -> 1 + (n * 7919 + i * 104729) % (128 << 10));
          }
          return verified;
        }));
      }
      int total = 0;
      for (Future<Integer> r : results) {
        total += r.get(WAIT_SECONDS * 2, TimeUnit.SECONDS);
      }
      assertEquals(clients * perConnection, total);
    } finally {
      pool.shutdownNow();
    }
    for (Connection c : connections) {
      c.close();
    }
  }

  /**
   * Sends {@code count} checksummed requests (sizes from {@code size}, patterns from {@code
   * seed}) over {@code conn}, at most {@code window} in flight, and checks that each answer of
   * the {@link #checksum()} handler belongs to its request; returns how many were checked.
   */
  protected int checkedRequests(Connection conn, long seed, int count, int window,
      java.util.function.IntUnaryOperator size) throws Exception {
    ArrayDeque<Object[]> inFlight = new ArrayDeque<>();
    int verified = 0;
    for (int i = 0; i < count || !inFlight.isEmpty(); ) {
      if (i < count && inFlight.size() < window) {
        int bytes = size.applyAsInt(i);
        Buffer request = filled(client.bufferPool(), bytes, seed + i);
        long sum = crc(request.nio());
        CompletableFuture<Buffer> f = conn.request(request);
        assertNotNull(f);
        inFlight.add(new Object[] {f, bytes, sum});
        i++;
      } else {
        Object[] o = inFlight.poll();
        @SuppressWarnings("unchecked")
        Buffer response = await((CompletableFuture<Buffer>) o[0]);
        assertEquals((int) o[1], response.nio().getInt(0));
        assertEquals((long) o[2], response.nio().getLong(4));
        response.release();
        verified++;
      }
    }
    return verified;
  }

  // ------------------------------------------------------------------ back-pressure

  @Test
  void backPressureReturnsNullBeyondMaxInflightAndRecovers() throws Exception {
    Queue<RequestHandler.Responder> held = new ConcurrentLinkedQueue<>();
    Queue<Buffer> heldRequests = new ConcurrentLinkedQueue<>();
    CountDownLatch arrived = new CountDownLatch(4);
    start(conf(MAX_INFLIGHT_KEY, "4"), (conn, request, responder) -> {
      heldRequests.add(request);
      held.add(responder);
      arrived.countDown();
    });
    RemoteRegion region = exposeFilled(4096, 1);
    List<CompletableFuture<Buffer>> futures = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      Buffer request = client.bufferPool().allocate(16);
      request.nio().putInt(0, i);
      CompletableFuture<Buffer> f = connection.request(request);
      assertNotNull(f, "call " + (i + 1) + " of max.inflight=4");
      futures.add(f);
    }
    assertEquals(4, connection.inFlight());
    Buffer fifth = client.bufferPool().allocate(16);
    assertNull(connection.request(fifth), "the 5th call is back-pressure");
    assertEquals(1, fifth.refCnt(), "the caller keeps its buffer under back-pressure");
    Buffer dst = client.bufferPool().allocate(16);
    assertNull(connection.read(region, 0, 16, dst));
    assertNull(connection.write(dst, region, 0));

    assertTrue(arrived.await(WAIT_SECONDS, TimeUnit.SECONDS));
    // Answered from this (non-transport) thread.
    while (!held.isEmpty()) {
      held.poll().respond(heldRequests.poll());
    }
    for (int i = 0; i < 4; i++) {
      Buffer response = await(futures.get(i));
      assertEquals(i, response.nio().getInt(0));
      response.release();
    }
    assertNull(await(connection.read(region, 0, 16, dst)));
    dst.release();
    CompletableFuture<Buffer> f = connection.request(fifth);
    assertNotNull(f, "calls succeed again once responses arrived");
    // Answer this one too once it arrives.
    waitFor(() -> !held.isEmpty(), "the request after back-pressure arrives");
    held.poll().respond(heldRequests.poll());
    await(f).release();
  }

  @Test
  void poolAllocationReturnsNullAtItsBound() throws Exception {
    Transport t = track(newTransport(conf(BUFFER_POOL_MAX_KEY, "1m", BUFFER_SLAB_SIZE_KEY,
        "256k", MAX_MESSAGE_SIZE_KEY, "64k")));
    BufferPool pool = t.bufferPool();
    List<Buffer> taken = new ArrayList<>();
    Buffer b;
    while ((b = pool.allocate(64 << 10)) != null) {
      taken.add(b);
      assertTrue(taken.size() <= 16, "pool grew beyond its bound: " + pool);
    }
    assertFalse(taken.isEmpty());
    assertTrue(pool.reservedBytes() <= pool.maxBytes(), pool.toString());
    assertTrue(pool.exhaustedCount() > 0);
    // a smaller class may still find room the 64 KiB class could not use, but no more than that
    List<Buffer> small = new ArrayList<>();
    while ((b = pool.allocate(4096)) != null) {
      small.add(b);
      assertTrue(small.size() <= 256, "pool grew beyond its bound: " + pool);
    }
    assertTrue(pool.reservedBytes() <= pool.maxBytes(), pool.toString());
    assertNull(pool.allocate(4096), "no room for a smaller class either: " + pool);
    for (Buffer x : small) {
      x.release();
    }
    taken.remove(0).release();
    Buffer again = pool.allocate(64 << 10);
    assertNotNull(again, "memory is reusable after a release");
    again.release();
    for (Buffer x : taken) {
      x.release();
    }
    assertTrue(pool.reservedBytes() <= pool.maxBytes(), pool.toString());
  }

  @Test
  void receiverWithExhaustedPoolCatchesUpOnceMemoryReturns() throws Exception {
    // The server's pool holds four 64 KiB chunks besides its receive ring, and the handler keeps
    // the first four requests, so the fifth cannot be received until this test answers them
    // (with the request buffers).
    Queue<Object[]> held = new ArrayDeque<>();
    boolean[] released = {false};
    int slab = 64 << 10;
    String[] serverKeys = {MAX_INFLIGHT_KEY, "8", BUFFER_SLAB_SIZE_KEY, "64k",
        MAX_MESSAGE_SIZE_KEY, "64k"};
    long ring = ringBytes(conf(serverKeys));
    long ringSlabs = (ring + slab - 1) / slab * slab;
    Configuration serverConf = conf(serverKeys);
    serverConf.set(BUFFER_POOL_MAX_KEY, (4L * slab + ringSlabs) / 1024 + "k");
    assertEquals(ring, ringBytes(serverConf), "the ring does not depend on the pool here");
    server = track(newTransport(serverConf));
    client = track(newTransport(conf(MAX_MESSAGE_SIZE_KEY, "64k")));
    listener = server.listen(bindAddress(), (conn, request, responder) -> {
      synchronized (held) {
        if (!released[0]) {
          held.add(new Object[] {request, responder});
          return;
        }
      }
      responder.respond(request);
    });
    connection = await(client.connect(listener.address()));
    List<CompletableFuture<Buffer>> futures = new ArrayList<>();
    List<Long> sums = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      Buffer request = filled(client.bufferPool(), 64 << 10, i);
      sums.add(crc(request.nio()));
      futures.add(connection.request(request));
    }
    waitFor(() -> {
      synchronized (held) {
        return held.size() == 4 && server.bufferPool().exhaustedCount() > 0;
      }
    }, "four requests held and the server's pool exhausted by the fifth");
    synchronized (held) {
      released[0] = true;
      for (Object[] o; (o = held.poll()) != null; ) {
        ((RequestHandler.Responder) o[1]).respond((Buffer) o[0]);
      }
    }
    for (int i = 0; i < 8; i++) {
      Buffer response = await(futures.get(i));
      assertEquals(sums.get(i), crc(response.nio()));
      response.release();
    }
    assertTrue(held.isEmpty());
  }

  // ------------------------------------------------------------------ failures

  @Test
  void unansweredRequestTimesOut() throws Exception {
    Queue<RequestHandler.Responder> ignored = new ConcurrentLinkedQueue<>();
    start(conf(IO_TIMEOUT_KEY, "1s"), (conn, request, responder) -> {
      boolean answer = request.nio().get(0) == 1;
      if (answer) {
        responder.respond(request);
      } else {
        request.release();
        ignored.add(responder);
      }
    });
    Buffer request = client.bufferPool().allocate(8);
    request.nio().put(0, (byte) 0);
    TransportTimeoutException e = failure(connection.request(request),
        TransportTimeoutException.class);
    assertTrue(e.getMessage().contains(String.valueOf(listener.address().getPort())),
        "names the peer: " + e.getMessage());
    assertEquals(0, connection.inFlight());
    // A late answer is dropped (and released) by the client; the connection stays usable.
    Buffer late = server.bufferPool().allocate(8);
    ignored.poll().respond(late);
    Buffer next = client.bufferPool().allocate(8);
    next.nio().put(0, (byte) 1);
    await(connection.request(next)).release();
  }

  @Test
  void serverDeathFailsEveryPendingOperation() throws Exception {
    Queue<RequestHandler.Responder> held = new ConcurrentLinkedQueue<>();
    start(baseConf(), (conn, request, responder) -> {
      request.release();
      held.add(responder);
    });
    RemoteRegion region = exposeFilled(1 << 20, 3);
    List<CompletableFuture<?>> requests = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      requests.add(connection.request(filled(client.bufferPool(), 64 << 10, i)));
    }
    List<Buffer> destinations = new ArrayList<>();
    List<CompletableFuture<Void>> reads = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      Buffer dst = client.bufferPool().allocate(1 << 20);
      destinations.add(dst);
      reads.add(connection.read(region, 0, 1 << 20, dst));
    }
    waitFor(() -> held.size() == 5, "the server holds all five requests");
    server.close();
    for (CompletableFuture<?> f : requests) {
      failure(f, ConnectionClosedException.class);
    }
    for (CompletableFuture<Void> f : reads) {
      // A read may have completed before the close; if not, it fails as closed.
      try {
        f.get(WAIT_SECONDS, TimeUnit.SECONDS);
      } catch (ExecutionException e) {
        assertInstanceOf(ConnectionClosedException.class, e.getCause());
      }
    }
    for (Buffer d : destinations) {
      d.release();
    }
    // Answers after the death go nowhere and leak nothing.
    held.poll().fail("too late");
    waitUntilClosed(connection);
    Buffer after = client.bufferPool().allocate(8);
    failure(connection.request(after), ConnectionClosedException.class);
  }

  @Test
  void clientCloseDuringIoFailsPendingOperationsAndServerSeesClose() throws Exception {
    CountDownLatch serverClosed = new CountDownLatch(1);
    CountDownLatch arrived = new CountDownLatch(3);
    Queue<RequestHandler.Responder> held = new ConcurrentLinkedQueue<>();
    start(baseConf(), new RequestHandler() {
      @Override
      public void onRequest(Connection conn, Buffer request, Responder responder) {
        request.release();
        held.add(responder);
        arrived.countDown();
      }

      @Override
      public void onClose(Connection conn) {
        serverClosed.countDown();
      }
    });
    List<CompletableFuture<Buffer>> pending = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      pending.add(connection.request(filled(client.bufferPool(), 4096, i)));
    }
    // One more large request, likely still being written when the close comes.
    pending.add(connection.request(filled(client.bufferPool(), 8 * MIB, 4)));
    assertTrue(arrived.await(WAIT_SECONDS, TimeUnit.SECONDS));
    connection.close();
    assertFalse(connection.isOpen());
    for (CompletableFuture<Buffer> f : pending) {
      failure(f, ConnectionClosedException.class);
    }
    assertTrue(serverClosed.await(WAIT_SECONDS, TimeUnit.SECONDS), "server onClose ran");
    for (RequestHandler.Responder r : held) {
      r.fail("too late");
    }
  }

  @Test
  void handlerFailureCodeAndTextReachTheClient() throws Exception {
    CompletableFuture<Throwable> negative = new CompletableFuture<>();
    start(baseConf(), (conn, request, responder) -> {
      int kind = request.nio().get(0);
      request.release();
      if (kind == 1) {
        responder.fail(42, "no such block blk_42");
      } else if (kind == 2) {
        responder.fail("no code given");
      } else {
        try {
          responder.fail(-1, "negative");
          negative.complete(null);
        } catch (IllegalArgumentException e) {
          negative.complete(e);
        }
        responder.fail(Integer.MAX_VALUE, "largest");
      }
    });
    RemoteFailureException coded = failure(connection.request(oneByte(1)),
        RemoteFailureException.class);
    assertEquals(42, coded.code());
    assertEquals("no such block blk_42", coded.detail());
    assertTrue(coded.getMessage().contains("no such block blk_42"), coded.getMessage());
    RemoteFailureException plain = failure(connection.request(oneByte(2)),
        RemoteFailureException.class);
    assertEquals(RemoteFailureException.NO_CODE, plain.code());
    assertEquals("no code given", plain.detail());
    RemoteFailureException largest = failure(connection.request(oneByte(3)),
        RemoteFailureException.class);
    assertInstanceOf(IllegalArgumentException.class, negative.get(WAIT_SECONDS, TimeUnit.SECONDS));
    assertEquals(Integer.MAX_VALUE, largest.code());
    assertTrue(connection.isOpen());
  }

  private Buffer oneByte(int value) {
    Buffer b = client.bufferPool().allocate(1);
    b.nio().put(0, (byte) value);
    return b;
  }

  @Test
  void respondingTwiceIsAProgrammingError() throws Exception {
    CompletableFuture<Throwable> second = new CompletableFuture<>();
    start(baseConf(), (conn, request, responder) -> {
      responder.respond(request);
      try {
        responder.fail("again");
        second.complete(null);
      } catch (IllegalStateException e) {
        second.complete(e);
      }
    });
    await(connection.request(client.bufferPool().allocate(10))).release();
    assertInstanceOf(IllegalStateException.class, second.get(WAIT_SECONDS, TimeUnit.SECONDS));
  }

  @Test
  void throwingHandlerFailsOnlyThatRequest() throws Exception {
    start(baseConf(), (conn, request, responder) -> {
      if (request.nio().get(0) == 1) {
        request.release();
        throw new IllegalStateException("handler bug");
      }
      responder.respond(request);
    });
    Buffer bad = client.bufferPool().allocate(4);
    bad.nio().put(0, (byte) 1);
    failure(connection.request(bad), TransportException.class);
    assertTrue(connection.isOpen());
    for (int i = 0; i < 3; i++) {
      Buffer good = client.bufferPool().allocate(4);
      good.nio().put(0, (byte) 2);
      Buffer response = await(connection.request(good));
      assertEquals(2, response.nio().get(0));
      response.release();
    }
  }

  @Test
  void connectingWhereNobodyListensFails() throws Exception {
    Transport t = track(newTransport(baseConf()));
    failure(t.connect(nobodyListens()), TransportException.class);
  }

  /** An address of the bind host on a port nothing listens on (a free one, just closed). */
  private InetSocketAddress nobodyListens() throws IOException {
    InetSocketAddress bind = bindAddress();
    try (ServerSocket s = new ServerSocket(0, 1, bind.getAddress())) {
      return new InetSocketAddress(bind.getAddress(), s.getLocalPort());
    }
  }

  /**
   * The transport's counters and its metrics2 view count what happened: connections on both
   * sides, every payload byte where it crossed (as messages, or by RDMA READ on verbs), error
   * answers, a connect nobody answered, and the close.
   */
  @Test
  void metricsCountConnectionsBytesAndFailures() throws Exception {
    start(baseConf(), (conn, request, responder) -> {
      if (request.readableBytes() == 1) {
        request.release();
        responder.fail(7, "refused on purpose");
        return;
      }
      echo().onRequest(conn, request, responder);
    });
    TransportMetrics c = client.metrics();
    TransportMetrics s = server.metrics();
    waitFor(() -> s.connectionsOpen() == 1, "the server to count its accepted connection");
    assertEquals(1, c.connectionsOpen());
    int size = 1 << 20;
    Buffer big = filled(client.bufferPool(), size, 3);
    await(connection.request(big)).release();
    assertTrue(s.bytesReceived() + s.rdmaBytesRead() >= size, "server took in " + size);
    assertTrue(c.bytesReceived() + c.rdmaBytesRead() >= size, "client took in " + size);
    assertTrue(c.bytesSent() > 0);
    // the answer's last byte may reach the client before its sender counts it
    waitFor(() -> s.bytesSent() > 0, "the server to count the answer it sent");
    if (client.name().equals("tcp")) {
      assertEquals(0, c.rdmaBytesRead() + s.rdmaBytesRead(), "tcp does no RDMA");
    }
    failure(connection.request(oneByte(1)), RemoteFailureException.class);
    assertEquals(1, c.remoteErrors());

    failure(client.connect(nobodyListens()), TransportException.class);
    assertEquals(1, c.connectFailures());

    MetricsCollectorImpl collector = new MetricsCollectorImpl();
    TransportMetricsSource view = TransportMetricsSource.register(client, c);
    assertNotNull(view);
    try {
      assertTrue(view.sourceName().startsWith("HpcTransport-" + client.name() + "-"),
          view.sourceName());
      view.getMetrics(collector, true);
    } finally {
      view.unregister();
    }
    Map<String, Number> shown = new HashMap<>();
    collector.getRecords().get(0).metrics().forEach(m -> shown.put(m.name(), m.value()));
    assertEquals(c.bytesReceived(), shown.get("BytesReceived").longValue(), shown.toString());
    assertEquals(1L, shown.get("ConnectFailures").longValue());
    assertEquals(1L, shown.get("OpRemoteErrors").longValue());
    assertEquals(client.bufferPool().maxBytes(), shown.get("PoolMaxBytes").longValue());

    connection.close();
    waitFor(() -> c.connectionsClosed() == 1 && s.connectionsClosed() == 1,
        "both sides to count the close");
    assertEquals(0, c.connectionsOpen() + s.connectionsOpen());
  }

  @Test
  void closeIsIdempotentAndLaterOperationsFailFast() throws Exception {
    start(baseConf(), echo());
    RemoteRegion region = exposeFilled(4096, 1);
    echoRoundTrip(10, 1);
    connection.close();
    connection.close();
    assertFalse(connection.isOpen());
    failure(connection.request(client.bufferPool().allocate(8)), ConnectionClosedException.class);
    Buffer dst = client.bufferPool().allocate(8);
    failure(connection.read(region, 0, 8, dst), ConnectionClosedException.class);
    failure(connection.write(dst, region, 0), ConnectionClosedException.class);
    dst.release();

    Connection second = await(client.connect(listener.address()));
    Buffer afterClose = client.bufferPool().allocate(8);
    client.close();
    client.close();
    waitUntilClosed(second);
    failure(second.request(afterClose), ConnectionClosedException.class);
    failure(client.connect(listener.address()), TransportException.class);
    listener.close();
    listener.close();
    server.close();
    server.close();
    assertThrows(IOException.class, () -> server.listen(bindAddress(), echo()));
  }

  @Test
  void registeredMemoryStaysWithinItsBoundAndCountsTheReceiveRings() throws Exception {
    start(baseConf(), echo());
    long ring = ringBytes(baseConf());
    waitFor(() -> server.registeredMemory().ringBytes() == ring, "the server's ring is set up");
    assertEquals(ring, client.registeredMemory().ringBytes());
    Connection second = await(client.connect(listener.address()));
    assertEquals(2 * ring, client.registeredMemory().ringBytes());
    echoRoundTrip(1 << 20, 5);
    for (Transport t : List.of(server, client)) {
      RegisteredMemory m = t.registeredMemory();
      assertEquals(256L << 20, m.maxBytes(), t.name());
      assertTrue(m.reservedBytes() <= m.maxBytes(), m.toString());
      assertTrue(m.usedBytes() <= m.reservedBytes(), m.toString());
      assertTrue(m.ringBytes() <= m.usedBytes(), m.toString());
    }
    second.close();
    connection.close();
    waitFor(() -> client.registeredMemory().usedBytes() == 0
        && server.registeredMemory().usedBytes() == 0,
        "rings and buffers go back to the pools when the connections close");
    assertEquals(0, client.registeredMemory().ringBytes());
    assertEquals(0, server.registeredMemory().ringBytes());
  }

  // ------------------------------------------------------------------ callbacks

  /** A caller's completion: records how often and how it was called. */
  private static final class Recorder<T> implements Completion<T> {
    final CompletableFuture<T> outcome = new CompletableFuture<>();
    final AtomicInteger calls = new AtomicInteger();

    @Override
    public void completed(T result) {
      calls.incrementAndGet();
      outcome.complete(result);
    }

    @Override
    public void failed(Throwable cause) {
      calls.incrementAndGet();
      outcome.completeExceptionally(cause);
    }
  }

  /** A received request held by a test: where it came from, its id, its buffer. */
  private record Held(Connection connection, long id, Buffer request) {
    void respond() {
      connection.respond(id, request);
    }
  }

  /** A handler that keeps every request, answering through the id form (no Responder). */
  private static final class Holding implements RequestHandler {
    final Queue<Held> held = new ConcurrentLinkedQueue<>();

    @Override
    public void onRequest(Connection conn, Buffer request, long requestId) {
      held.add(new Held(conn, requestId, request));
    }

    @Override
    public void onRequest(Connection conn, Buffer request, Responder responder) {
      throw new AssertionError("transports deliver requests by id");
    }
  }

  @Test
  void callbackRequestsEachCompleteOnceWithTheirOwnResponse() throws Exception {
    Holding handler = new Holding();
    start(baseConf(), handler);
    int batch = 8;
    for (int round = 0; round < 50; round++) {
      List<Recorder<Buffer>> recorders = new ArrayList<>();
      for (int i = 0; i < batch; i++) {
        int n = round * batch + i;
        Buffer request = filled(client.bufferPool(), 200 + i, n);
        request.nio().putInt(0, n);
        Recorder<Buffer> r = new Recorder<>();
        assertTrue(connection.request(request, r), "no back-pressure below max.inflight");
        recorders.add(r);
      }
      waitFor(() -> handler.held.size() == batch, "a batch arrives");
      // Answered in reverse order of arrival: completions match by operation, not order.
      List<Held> arrivedInOrder = new ArrayList<>(handler.held);
      handler.held.clear();
      for (int i = batch - 1; i >= 0; i--) {
        arrivedInOrder.get(i).respond();
      }
      for (int i = 0; i < batch; i++) {
        Buffer response = await(recorders.get(i).outcome);
        assertEquals(200 + i, response.readableBytes());
        assertEquals(round * batch + i, response.nio().getInt(0));
        assertEquals(pattern(round * batch + i, 199 + i), response.nio().get(199 + i));
        response.release();
        assertEquals(1, recorders.get(i).calls.get());
      }
    }
    assertEquals(0, connection.inFlight());
  }

  /**
   * Requests sent together, each with a completion of its own (a stream's data and the places
   * for its answers), are each answered once through their own, whatever the answers' order;
   * on a closed connection each fails through its own.
   */
  @Test
  @SuppressWarnings("unchecked")
  void requestsSentTogetherCompleteThroughTheirOwnCompletions() throws Exception {
    Holding handler = new Holding();
    start(baseConf(), handler);
    int batch = 5;
    Buffer[] requests = new Buffer[batch];
    Completion<Buffer>[] completions = new Completion[batch];
    List<Recorder<Buffer>> recorders = new ArrayList<>();
    for (int i = 0; i < batch; i++) {
      requests[i] = filled(client.bufferPool(), 100 + i, i);
      requests[i].nio().putInt(0, i);
      Recorder<Buffer> r = new Recorder<>();
      recorders.add(r);
      completions[i] = r;
    }
    assertEquals(batch, connection.request(requests, completions, batch));
    waitFor(() -> handler.held.size() == batch, "the requests arrive");
    List<Held> arrived = new ArrayList<>(handler.held);
    handler.held.clear();
    for (int i = batch - 1; i >= 0; i--) {
      arrived.get(i).respond();
    }
    for (int i = 0; i < batch; i++) {
      Buffer response = await(recorders.get(i).outcome);
      assertEquals(100 + i, response.readableBytes(), "request " + i + "'s own answer");
      assertEquals(i, response.nio().getInt(0));
      response.release();
      assertEquals(1, recorders.get(i).calls.get());
    }
    connection.close();
    List<Recorder<Buffer>> late = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      requests[i] = filled(client.bufferPool(), 10, i);
      Recorder<Buffer> r = new Recorder<>();
      late.add(r);
      completions[i] = r;
    }
    assertEquals(2, connection.request(requests, completions, 2), "taken, and failed");
    for (Recorder<Buffer> r : late) {
      ExecutionException e = assertThrows(ExecutionException.class,
          () -> r.outcome.get(WAIT_SECONDS, TimeUnit.SECONDS));
      assertInstanceOf(TransportException.class, e.getCause());
      assertEquals(1, r.calls.get());
    }
  }

  @Test
  void callbackOneSidedReadsAndWritesMoveTheBytes() throws Exception {
    start(baseConf(), echo());
    int size = 64 << 10;
    RemoteRegion region = exposeFilled(size, 21);
    ByteBuffer target = exposedBuffer(0).nio();
    Buffer src = filled(client.bufferPool(), 10_000, 22);
    Recorder<Void> written = new Recorder<>();
    assertTrue(connection.write(src, region, 1234, written));
    assertNull(await(written.outcome));
    assertEquals(0, src.nio().position(), "a write leaves the source's position");
    assertEquals(-1, target.slice(1234, 10_000).mismatch(src.nio().slice(0, 10_000)));
    Buffer dst = client.bufferPool().allocate(size);
    Recorder<Void> read = new Recorder<>();
    assertTrue(connection.read(region, 0, size, dst, read));
    assertNull(await(read.outcome));
    assertEquals(size, dst.nio().position());
    assertEquals(-1, dst.nio().flip().mismatch(target.slice(0, size)));
    dst.nio().clear();
    Recorder<Void> nothing = new Recorder<>();
    assertTrue(connection.read(region, 0, 0, dst, nothing));
    assertNull(await(nothing.outcome));
    assertEquals(1, written.calls.get());
    assertEquals(1, read.calls.get());
    assertEquals(1, nothing.calls.get());
    src.release();
    dst.release();
  }

  @Test
  void callbackBackPressureIsFalseAndTheCallerKeepsItsBuffer() throws Exception {
    Holding handler = new Holding();
    start(conf(MAX_INFLIGHT_KEY, "4"), handler);
    RemoteRegion region = exposeFilled(4096, 1);
    List<Recorder<Buffer>> recorders = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      Buffer request = client.bufferPool().allocate(16);
      request.nio().putInt(0, i);
      Recorder<Buffer> r = new Recorder<>();
      assertTrue(connection.request(request, r), "call " + (i + 1) + " of max.inflight=4");
      recorders.add(r);
    }
    assertEquals(4, connection.inFlight());
    Buffer fifth = client.bufferPool().allocate(16);
    Recorder<Buffer> refused = new Recorder<>();
    assertFalse(connection.request(fifth, refused), "the 5th call is back-pressure");
    assertEquals(1, fifth.refCnt(), "the caller keeps its buffer under back-pressure");
    Buffer dst = client.bufferPool().allocate(16);
    Recorder<Void> refusedOneSided = new Recorder<>();
    assertFalse(connection.read(region, 0, 16, dst, refusedOneSided));
    assertFalse(connection.write(dst, region, 0, refusedOneSided));

    waitFor(() -> handler.held.size() == 4, "four requests arrive");
    for (Held h; (h = handler.held.poll()) != null; ) {
      h.respond(); // from this (non-transport) thread
    }
    for (int i = 0; i < 4; i++) {
      Buffer response = await(recorders.get(i).outcome);
      assertEquals(i, response.nio().getInt(0));
      response.release();
    }
    assertEquals(0, refused.calls.get(), "a refused call's completion is never called");
    assertEquals(0, refusedOneSided.calls.get());
    Recorder<Buffer> again = new Recorder<>();
    assertTrue(connection.request(fifth, again), "calls succeed again once responses arrived");
    waitFor(() -> !handler.held.isEmpty(), "the request after back-pressure arrives");
    handler.held.poll().respond();
    await(again.outcome).release();
    dst.release();
  }

  @Test
  void callbacksFailWhenThePeerDiesAndAtOnceOnAClosedConnection() throws Exception {
    Holding handler = new Holding();
    start(baseConf(), handler);
    RemoteRegion region = exposeFilled(1 << 20, 3);
    List<Recorder<Buffer>> requests = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      Recorder<Buffer> r = new Recorder<>();
      assertTrue(connection.request(filled(client.bufferPool(), 64 << 10, i), r));
      requests.add(r);
    }
    List<Buffer> destinations = new ArrayList<>();
    List<Recorder<Void>> reads = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      Buffer dst = client.bufferPool().allocate(1 << 20);
      destinations.add(dst);
      Recorder<Void> r = new Recorder<>();
      assertTrue(connection.read(region, 0, 1 << 20, dst, r));
      reads.add(r);
    }
    waitFor(() -> handler.held.size() == 5, "the server holds all five requests");
    server.close();
    for (Recorder<Buffer> r : requests) {
      failure(r.outcome, ConnectionClosedException.class);
      assertEquals(1, r.calls.get());
    }
    for (Recorder<Void> r : reads) {
      // A read may have completed before the close; if not, it fails as closed.
      try {
        r.outcome.get(WAIT_SECONDS, TimeUnit.SECONDS);
      } catch (ExecutionException e) {
        assertInstanceOf(ConnectionClosedException.class, e.getCause());
      }
      assertEquals(1, r.calls.get());
    }
    for (Buffer d : destinations) {
      d.release();
    }
    // Late answers go nowhere and leak nothing; a second one is still refused.
    Held late = handler.held.poll();
    late.respond();
    assertThrows(IllegalStateException.class, () -> late.connection().fail(late.id(), "again"));
    for (Held h; (h = handler.held.poll()) != null; ) {
      h.connection().fail(h.id(), "too late");
      h.request().release();
    }
    waitUntilClosed(connection);
    Recorder<Buffer> afterDeath = new Recorder<>();
    Buffer after = client.bufferPool().allocate(8);
    assertTrue(connection.request(after, afterDeath), "a closed connection is no back-pressure");
    assertTrue(afterDeath.outcome.isDone(), "failed at once, on the calling thread");
    failure(afterDeath.outcome, ConnectionClosedException.class);
    assertEquals(0, after.refCnt(), "the transport released the request it could not send");
  }

  @Test
  void callbackRequestTimesOutAndALateAnswerIsDropped() throws Exception {
    Holding handler = new Holding();
    start(conf(IO_TIMEOUT_KEY, "1s"), handler);
    Recorder<Buffer> r = new Recorder<>();
    assertTrue(connection.request(client.bufferPool().allocate(8), r));
    TransportTimeoutException e = failure(r.outcome, TransportTimeoutException.class);
    assertTrue(e.getMessage().contains("io.timeout"), e.getMessage());
    assertEquals(0, connection.inFlight());
    waitFor(() -> !handler.held.isEmpty(), "the request arrived");
    handler.held.poll().respond();
    Recorder<Buffer> next = new Recorder<>();
    assertTrue(connection.request(client.bufferPool().allocate(8), next));
    waitFor(() -> !handler.held.isEmpty(), "the next request arrived");
    handler.held.poll().respond();
    await(next.outcome).release();
    assertEquals(1, r.calls.get(), "the late answer did not reach the timed-out completion");
  }

  @Test
  void answersThroughAnOlderRequestsIdOrResponderAreRefusedAndAnswerNothing() throws Exception {
    // max.inflight=1: the server's state for the second request reuses the first one's place.
    Queue<Object[]> held = new ConcurrentLinkedQueue<>();
    start(conf(MAX_INFLIGHT_KEY, "1"), new RequestHandler() {
      private long lastId;

      @Override
      public void onRequest(Connection conn, Buffer request, long requestId) {
        // Both forms at once: the id, and the Responder the default wraps around it.
        lastId = requestId;
        RequestHandler.super.onRequest(conn, request, requestId);
      }

      @Override
      public void onRequest(Connection conn, Buffer request, Responder responder) {
        held.add(new Object[] {conn, responder, lastId, request});
      }
    });
    Buffer first = client.bufferPool().allocate(4);
    first.nio().putInt(0, 1);
    CompletableFuture<Buffer> f1 = connection.request(first);
    waitFor(() -> held.size() == 1, "the first request arrives");
    Object[] one = held.poll();
    RequestHandler.Responder r1 = (RequestHandler.Responder) one[1];
    r1.respond((Buffer) one[3]);
    assertThrows(IllegalStateException.class, () -> r1.respond((Buffer) one[3]),
        "responding twice");
    assertThrows(IllegalStateException.class, () -> r1.fail("twice"));
    Buffer response1 = await(f1);
    assertEquals(1, response1.nio().getInt(0));
    response1.release();

    Buffer second = client.bufferPool().allocate(4);
    second.nio().putInt(0, 2);
    CompletableFuture<Buffer> f2 = connection.request(second);
    waitFor(() -> held.size() == 1, "the second request arrives");
    Object[] two = held.poll();
    Connection serverSide = (Connection) two[0];
    long oldId = (Long) one[2];
    Buffer stale = server.bufferPool().allocate(4);
    stale.nio().putInt(0, -1);
    assertThrows(IllegalStateException.class, () -> r1.respond(stale),
        "the first request's responder, after its state was reused");
    assertThrows(IllegalStateException.class, () -> serverSide.respond(oldId, stale));
    assertThrows(IllegalStateException.class, () -> serverSide.fail(oldId, "stale"));
    assertEquals(1, stale.refCnt(), "a refused response stays the caller's");
    stale.release();
    assertFalse(f2.isDone(), "nothing answered the second request");
    ((RequestHandler.Responder) two[1]).respond((Buffer) two[3]);
    Buffer response2 = await(f2);
    assertEquals(2, response2.nio().getInt(0), "the second request got its own answer");
    response2.release();
  }

  @Test
  void throwingCallbacksLeaveTheConnectionAndTheOthersServing() throws Exception {
    CountDownLatch closedSeen = new CountDownLatch(1);
    start(baseConf(), new RequestHandler() {
      @Override
      public void onRequest(Connection conn, Buffer request, Responder responder) {
        responder.respond(request);
      }

      @Override
      public void onClose(Connection conn) {
        closedSeen.countDown();
        throw new IllegalStateException("handler bug in onClose");
      }
    });
    Connection other = await(client.connect(listener.address()));
    Recorder<Buffer> seen = new Recorder<>();
    Completion<Buffer> throwing = new Completion<>() {
      @Override
      public void completed(Buffer result) {
        result.release();
        seen.completed(null);
        throw new IllegalStateException("caller bug in completed");
      }

      @Override
      public void failed(Throwable cause) {
        seen.failed(cause);
      }
    };
    assertTrue(connection.request(client.bufferPool().allocate(16), throwing));
    await(seen.outcome);
    echoRoundTrip(100, 1); // the connection whose completion threw still serves
    other.close();
    assertTrue(closedSeen.await(WAIT_SECONDS, TimeUnit.SECONDS), "server onClose ran");
    echoRoundTrip(5000, 2); // and the server, whose onClose threw, serves the others
    assertTrue(connection.isOpen());
  }

  /** Waits (bounded) for a condition another thread brings about. */
  protected static void waitFor(java.util.function.BooleanSupplier condition, String what)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
    while (!condition.getAsBoolean()) {
      assertTrue(System.nanoTime() < deadline, "timed out waiting until " + what);
      Thread.sleep(2);
    }
  }

  private static void waitUntilClosed(Connection c) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
    while (c.isOpen() && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    assertFalse(c.isOpen(), "connection noticed the close");
  }
}
