/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net;

import static org.hadoophpc.net.TransportConfigKeys.BUFFER_POOL_MAX_KEY;
import static org.hadoophpc.net.TransportConfigKeys.BUFFER_SLAB_SIZE_KEY;
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

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.metrics2.impl.MetricsCollectorImpl;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The transport contract, part 2 of 3 (see {@link TransportConformanceTest}): many connections
 * and threads, back-pressure and pool bounds, failures (timeouts, dead peers, handler errors,
 * close) and what the metrics count.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class TransportLoadAndFailureContract extends TransportDataContract {
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

  Buffer oneByte(int value) {
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
}
