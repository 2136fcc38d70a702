/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net;

import static org.hadoophpc.net.TransportConfigKeys.BUFFER_SLAB_SIZE_KEY;
import static org.hadoophpc.net.TransportConfigKeys.MAX_MESSAGE_SIZE_KEY;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The transport contract, part 1 of 3 (see {@link TransportConformanceTest}): file answers,
 * ordering, message sizes and one-sided operations.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class TransportDataContract extends TransportFixture {
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
}
