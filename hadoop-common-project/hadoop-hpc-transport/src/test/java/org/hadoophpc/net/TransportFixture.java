/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net;

import static org.hadoophpc.net.TransportConfigKeys.BUFFER_POOL_MAX_KEY;
import static org.hadoophpc.net.TransportConfigKeys.CONNECT_TIMEOUT_KEY;
import static org.hadoophpc.net.TransportConfigKeys.IO_TIMEOUT_KEY;
import static org.hadoophpc.net.TransportConfigKeys.MAX_INFLIGHT_KEY;
import static org.hadoophpc.net.TransportConfigKeys.MAX_MESSAGE_SIZE_KEY;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;

import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;

/**
 * The fixture of the transport contract ({@link TransportConformanceTest}): a server and a
 * client transport of the kind under test, the connection between them, and helpers that fill
 * and check contents. Every test ends by closing both transports and checking that neither
 * pool has a buffer outstanding.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class TransportFixture {
  /** Bound of every wait: generous, only there so that a broken transport fails, not hangs. */
  protected static final long WAIT_SECONDS = 30;
  static final int MIB = 1 << 20;

  final List<Transport> transports = new ArrayList<>();
  final List<Buffer> exposed = new ArrayList<>();
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

  Transport track(Transport t) {
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

  static byte pattern(long seed, int i) {
    return (byte) (seed * 131 + i * 31 + (i >>> 11));
  }

  protected static long crc(ByteBuffer b) {
    CRC32 crc = new CRC32();
    crc.update(b.duplicate());
    return crc.getValue();
  }

  static <T extends Throwable> T failure(CompletableFuture<?> f, Class<T> type)
      throws Exception {
    ExecutionException e = assertThrows(ExecutionException.class,
        () -> f.get(WAIT_SECONDS, TimeUnit.SECONDS));
    assertInstanceOf(type, e.getCause(), "expected " + type.getSimpleName() + ", got " + e);
    assertNotNull(e.getCause().getMessage());
    return type.cast(e.getCause());
  }

  static <T> T await(CompletableFuture<T> f) throws Exception {
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
  void echoRoundTrip(int size, long seed) throws Exception {
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
  RemoteRegion exposeFilled(int size, long seed) throws Exception {
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

  Buffer exposedBuffer(int index) {
    return exposed.get(index);
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

  static void waitUntilClosed(Connection c) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
    while (c.isOpen() && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    assertFalse(c.isOpen(), "connection noticed the close");
  }

  /** An address of the bind host on a port nothing listens on (a free one, just closed). */
  InetSocketAddress nobodyListens() throws IOException {
    InetSocketAddress bind = bindAddress();
    try (ServerSocket s = new ServerSocket(0, 1, bind.getAddress())) {
      return new InetSocketAddress(bind.getAddress(), s.getLocalPort());
    }
  }
}
