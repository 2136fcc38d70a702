/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.tcp;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.BufferPool;
import org.hadoophpc.net.Connection;
import org.hadoophpc.net.ConnectionClosedException;
import org.hadoophpc.net.Listener;
import org.hadoophpc.net.RegisteredMemory;
import org.hadoophpc.net.RemoteRegion;
import org.hadoophpc.net.RequestHandler;
import org.hadoophpc.net.Transport;
import org.hadoophpc.net.TransportConf;
import org.hadoophpc.net.TransportException;
import org.hadoophpc.net.TransportMetrics;
import org.hadoophpc.net.TransportMetricsSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code tcp} transport: NIO, non-blocking sockets with TCP_NODELAY, driven by
 * {@code hadoop.hpc.transport.io.threads} {@link TcpEventLoop}s. Works over any IP network
 * (Ethernet, IPoIB); it is also the fallback when verbs is unusable.
 *
 * <p>Wire format: see {@link TcpFrame} (a 40-byte header with type, length, operation id and
 * region fields, then the payload). Requests carry operation ids chosen by the requester; up to
 * {@code max.inflight} are outstanding per connection and may be answered in any order.
 *
 * <p>One-sided operations are emulated: {@link #expose} enters the buffer in a transport-wide
 * table under a fresh id ({@code RemoteRegion(0, capacity, id)}); the peer's <em>transport</em>
 * (not its request handler) serves read and write frames against that table, checking bounds and
 * answering problems with an error frame that fails just that operation.
 *
 * <p>Memory: every payload lives in this transport's {@link BufferPool} (unregistered: TCP needs
 * no registration). A connection that finds the pool exhausted stops reading until memory comes
 * back, so TCP flow control carries the back-pressure to the sender.
 *
 * <p>Thread-safe. Handlers and future completions run on the event-loop threads.
 */
public final class TcpTransport implements Transport {
  private static final Logger LOG = LoggerFactory.getLogger(TcpTransport.class);
  /** How long {@link #close()} waits for each event loop to finish. */
  private static final long CLOSE_WAIT_MS = 10_000;

  /** A buffer exposed for one-sided access. {@link #view} spans the whole chunk. */
  static final class ExposedRegion {
    final Buffer buffer;
    final ByteBuffer view;
    /** Guarded by this object, so that no copy is under way once unexpose returns. */
    boolean exposed = true;

    ExposedRegion(Buffer buffer) {
      this.buffer = buffer;
      this.view = buffer.nio().duplicate().clear();
    }
  }

  private final TransportConf conf;
  private final BufferPool pool;
  private final TcpEventLoop[] loops;
  private final AtomicInteger nextLoop = new AtomicInteger();
  private final ConcurrentHashMap<Long, ExposedRegion> regions = new ConcurrentHashMap<>();
  private final AtomicLong regionIds = new AtomicLong();
  private final Set<TcpListener> listeners = ConcurrentHashMap.newKeySet();
  private final AtomicBoolean closed = new AtomicBoolean();
  private final TransportMetrics metrics = new TransportMetrics();
  private final TransportMetricsSource metricsSource;
  /** Same-host peers over Unix domain sockets. */
  private final LocalSockets localSockets;
  private final TcpConnector connector;

  public TcpTransport(TransportConf conf) throws IOException {
    this.conf = conf;
    this.localSockets = LocalSockets.of(conf.tcpLocalDir());
    this.connector = new TcpConnector(this, conf, metrics, localSockets);
    this.pool = conf.newBufferPool(BufferPool.MemoryRegistrar.NONE);
    long shortest = Math.min(conf.ioTimeoutMs(), conf.connectTimeoutMs());
    long sweepNanos = TimeUnit.MILLISECONDS.toNanos(Math.max(1, Math.min(100, shortest / 10)));
    this.loops = new TcpEventLoop[conf.ioThreads()];
    try {
      for (int i = 0; i < loops.length; i++) {
        loops[i] = new TcpEventLoop(this, sweepNanos);
      }
    } catch (IOException e) {
      pool.close();
      throw new TransportException("cannot open a selector for the tcp transport", e);
    }
    for (TcpEventLoop l : loops) {
      l.start();
    }
    metricsSource = TransportMetricsSource.register(this, metrics);
  }

  @Override
  public TransportMetrics metrics() {
    return metrics;
  }

  TransportConf conf() {
    return conf;
  }

  @Override
  public String name() {
    return "tcp";
  }

  @Override
  public BufferPool bufferPool() {
    return pool;
  }

  /** The pool's memory (tcp registers nothing, but the pool bound holds all the same). */
  @Override
  public RegisteredMemory registeredMemory() {
    return new RegisteredMemory(pool.reservedBytes(), pool.usedBytes(), 0, pool.maxBytes());
  }

  /** The event threads, e.g. for a benchmark measuring their allocation. */
  public Thread[] eventThreads() {
    Thread[] t = new Thread[loops.length];
    for (int i = 0; i < loops.length; i++) {
      t[i] = loops[i].thread();
    }
    return t;
  }

  @Override
  public Listener listen(InetSocketAddress address, RequestHandler handler) throws IOException {
    checkOpen("listen on " + address);
    TcpListener listener = TcpListener.open(this, address, handler, localSockets);
    TcpEventLoop loop = loops[0];
    if (!loop.execute(() -> listener.register(loop))) {
      listener.close();
      throw new TransportException("cannot listen on " + address + ": transport is closing");
    }
    listeners.add(listener);
    LOG.debug("listening on {}", listener);
    return listener;
  }

  @Override
  public CompletableFuture<Connection> connect(InetSocketAddress address) {
    return metrics.countConnect(connector.connect(address));
  }

  /** Connects on the calling thread ({@link TcpConnector#connect(InetSocketAddress, long)}). */
  @Override
  public Connection connect(InetSocketAddress address, long timeoutMs) throws IOException {
    return connector.connect(address, timeoutMs);
  }

  @Override
  public RemoteRegion expose(Buffer buffer) throws IOException {
    checkOpen("expose");
    if (buffer.pool() != pool) {
      throw new IllegalArgumentException("only buffers of this transport's pool can be exposed");
    }
    long id = regionIds.incrementAndGet();
    regions.put(id, new ExposedRegion(buffer));
    return new RemoteRegion(0, buffer.capacity(), id);
  }

  @Override
  public void unexpose(RemoteRegion region) {
    ExposedRegion r = regions.remove(region.key());
    if (r != null) {
      synchronized (r) {
        r.exposed = false;
      }
    }
  }

  ExposedRegion region(long key) {
    return regions.get(key);
  }

  @Override
  public void close() throws IOException {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    if (metricsSource != null) {
      metricsSource.unregister();
    }
    for (TcpListener l : listeners) {
      l.close();
    }
    listeners.clear();
    for (TcpEventLoop l : loops) {
      l.shutdown();
    }
    TransportException failure = null;
    for (TcpEventLoop l : loops) {
      boolean stopped;
      try {
        stopped = l.awaitTermination(CLOSE_WAIT_MS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        stopped = false;
      }
      if (!stopped) {
        TransportException e = new TransportException("event loop " + l.thread().getName()
            + " did not stop within " + CLOSE_WAIT_MS + " ms (a handler or callback blocks?)");
        if (failure == null) {
          failure = e;
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    for (ExposedRegion r : regions.values()) {
      synchronized (r) {
        r.exposed = false;
      }
    }
    regions.clear();
    pool.close();
    if (failure != null) {
      throw failure;
    }
  }

  private void checkOpen(String what) throws TransportException {
    if (closed.get()) {
      throw new ConnectionClosedException(what + ": transport is closed");
    }
  }

  TcpEventLoop nextLoop() {
    return loops[Math.floorMod(nextLoop.getAndIncrement(), loops.length)];
  }

  TcpEventLoop[] loops() {
    return loops;
  }

  boolean isClosed() {
    return closed.get();
  }
}
