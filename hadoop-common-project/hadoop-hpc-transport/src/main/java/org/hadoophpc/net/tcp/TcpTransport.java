/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.tcp;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
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
import org.hadoophpc.net.TransportTimeoutException;
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
  /**
   * Bytes a local socket's writer may have queued at its reader: Linux's default (208 KiB) made
   * HDFS writes take ~15% more system calls per MiB than over TCP, whose buffers grow to MiBs.
   */
  private static final int LOCAL_SEND_BUFFER = 1 << 20;
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

  public TcpTransport(TransportConf conf) throws IOException {
    this.conf = conf;
    this.localSockets = LocalSockets.of(conf.tcpLocalDir());
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
    ServerSocketChannel server = ServerSocketChannel.open();
    TcpListener listener;
    ServerSocketChannel local = null;
    try {
      server.configureBlocking(false);
      server.setOption(StandardSocketOptions.SO_REUSEADDR, true);
      server.bind(address, 1024);
      Path localPath = localSockets.bindPath((InetSocketAddress) server.getLocalAddress());
      if (localPath != null) {
        local = listenLocally(localPath);
      }
      listener = new TcpListener(this, server, handler, local, local == null ? null : localPath);
    } catch (IOException e) {
      server.close();
      if (local != null) {
        local.close();
      }
      throw new TransportException("cannot listen on " + address + ": " + e.getMessage(), e);
    }
    TcpEventLoop loop = loops[0];
    if (!loop.execute(() -> listener.register(loop))) {
      listener.close();
      throw new TransportException("cannot listen on " + address + ": transport is closing");
    }
    listeners.add(listener);
    LOG.debug("listening on {}", listener);
    return listener;
  }

  /** The local socket at {@code path}, or null (said at WARN: same-host peers then use TCP). */
  private static ServerSocketChannel listenLocally(Path path) {
    ServerSocketChannel local = null;
    try {
      local = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
      local.configureBlocking(false);
      local.bind(UnixDomainSocketAddress.of(path), 1024);
      return local;
    } catch (IOException | UnsupportedOperationException e) {
      LOG.warn("cannot listen on the local socket {} ({}); same-host peers use TCP", path,
          e.toString());
      if (local != null) {
        try {
          local.close();
        } catch (IOException ignored) {
          // nothing bound
        }
      }
      return null;
    }
  }

  /**
   * A connected, non-blocking channel to the same-host listener at {@code address} by its local
   * socket, or null (none there, or it does not answer at once: the caller uses TCP).
   */
  private SocketChannel connectLocally(InetSocketAddress address) {
    UnixDomainSocketAddress path = localSockets.find(address);
    if (path == null) {
      return null;
    }
    SocketChannel ch = null;
    try {
      ch = SocketChannel.open(StandardProtocolFamily.UNIX);
      ch.configureBlocking(false);
      ch.setOption(StandardSocketOptions.SO_SNDBUF, LOCAL_SEND_BUFFER);
      if (ch.connect(path)) { // a local connect completes at once, or is refused
        metrics.localConnection();
        return ch;
      }
    } catch (IOException | UnsupportedOperationException e) {
      LOG.debug("local socket {} of {} refused ({}); using TCP", path, address, e.toString());
    }
    closeQuietly(ch);
    return null;
  }
  @Override
  public CompletableFuture<Connection> connect(InetSocketAddress address) {
    return metrics.countConnect(connectNow(address));
  }

  /**
   * Connects on the calling thread: a blocking connect bounded by the timeout, the channel
   * registered with its loop from here and its reads left to callers at once, so the loop is not
   * needed until the connection's first sweep: it adopts the connection (sweeps, connection
   * limit, close at shutdown) in a task it runs at its next turn, without being woken for it.
   * No hand-off to the loop and back: measured on a 2-core VM, a loopback connect through the
   * loop took ~230 us, ~20 us of them the connect itself.
   */
  @Override
  public Connection connect(InetSocketAddress address, long timeoutMs) throws IOException {
    if (closed.get()) {
      metrics.connectFailed();
      throw new ConnectionClosedException("connect to " + address + ": transport is closed");
    }
    for (TcpEventLoop l : loops) {
      if (l.inLoop()) { // it would stall every connection of that loop meanwhile
        throw new IllegalStateException("a blocking connect on the event thread "
            + l.thread().getName());
      }
    }
    TcpEventLoop loop = nextLoop();
    long ms = Math.max(1, Math.min(timeoutMs, conf.connectTimeoutMs()));
    SocketChannel ch = connectLocally(address);
    try {
      if (ch == null) {
        ch = SocketChannel.open();
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
        ch.socket().connect(address, (int) Math.min(Integer.MAX_VALUE, ms));
        ch.configureBlocking(false);
      }
      TcpConnection c = new TcpConnection(this, loop, ch, null, address);
      SelectionKey key = ch.register(loop.selector(), 0, c);
      c.attach(key);
      boolean adopting;
      if (c.leaveReadsToCallers()) {
        adopting = loop.executeLazily(() -> adoptConnected(loop, c));
      } else { // no selector for callers: the loop reads it, from now on
        key.interestOps(SelectionKey.OP_READ);
        adopting = loop.execute(() -> adoptConnected(loop, c));
      }
      if (!adopting) {
        c.closeNow("transport is closing or its event loop is overloaded", null, null);
        metrics.connectFailed();
        throw new ConnectionClosedException("connect to " + address
            + ": transport is closing or its event loop is overloaded");
      }
      LOG.debug("connected to {} on the caller's thread", address);
      return c;
    } catch (java.net.SocketTimeoutException e) {
      closeQuietly(ch);
      metrics.connectFailed();
      throw new TransportTimeoutException("connect to " + address + " timed out after " + ms
          + " ms (hadoop.hpc.transport.connect.timeout)");
    } catch (ConnectionClosedException e) {
      throw e;
    } catch (IOException | RuntimeException e) {
      closeQuietly(ch);
      metrics.connectFailed();
      throw new TransportException("cannot connect to " + address + ": " + e, e);
    }
  }

  /** The loop takes over a connection made on a caller's thread; runs on that loop. */
  private void adoptConnected(TcpEventLoop loop, TcpConnection c) {
    if (c.finished()) {
      return; // closed before the loop saw it: nothing to sweep
    }
    if (loop.isShutdown()) {
      c.closeLocally("transport closed");
      return;
    }
    if (loop.connectionCount() >= TcpEventLoop.MAX_CONNECTIONS) {
      LOG.warn("closing connection to {}: {} already serves {} connections", c.peer(),
          loop.thread().getName(), TcpEventLoop.MAX_CONNECTIONS);
      c.closeLocally("event loop full");
      return;
    }
    loop.adopt(c);
  }

  private CompletableFuture<Connection> connectNow(InetSocketAddress address) {
    if (closed.get()) {
      return CompletableFuture.failedFuture(new ConnectionClosedException("connect to "
          + address + ": transport is closed"));
    }
    CompletableFuture<Connection> future = new CompletableFuture<>();
    SocketChannel ch = connectLocally(address); // connected: the loop only takes it over
    if (ch == null) {
      try {
        ch = SocketChannel.open();
        try {
          ch.configureBlocking(false);
          ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
        } catch (IOException e) {
          ch.close();
          throw e;
        }
      } catch (IOException e) {
        future.completeExceptionally(new TransportException("cannot connect to " + address
            + ": " + e.getMessage(), e));
        return future;
      }
    }
    TcpEventLoop loop = nextLoop();
    PendingConnect p = new PendingConnect(loop, ch, address, future,
        System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(conf.connectTimeoutMs()));
    if (!loop.execute(p::start)) {
      p.abort("transport is closing or its event loop is overloaded");
    }
    return future;
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

  private TcpEventLoop nextLoop() {
    return loops[Math.floorMod(nextLoop.getAndIncrement(), loops.length)];
  }

  /**
   * Takes over an accepted channel; runs on the accepting loop. {@code localAt}: the TCP
   * address of the listener whose local socket accepted it (null: accepted by TCP).
   */
  void adopt(SocketChannel ch, RequestHandler handler, InetSocketAddress localAt) {
    InetSocketAddress remote;
    try {
      ch.configureBlocking(false);
      if (localAt != null) {
        // a peer on this host; its Unix socket has no address of its own, so it is given the
        // one it reached (this host's), as TCP from this host would show it
        metrics.localConnection();
        ch.setOption(StandardSocketOptions.SO_SNDBUF, LOCAL_SEND_BUFFER);
        remote = new InetSocketAddress(localAt.getAddress().isAnyLocalAddress()
            ? InetAddress.getLoopbackAddress() : localAt.getAddress(), 0);
      } else {
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
        remote = (InetSocketAddress) ch.getRemoteAddress();
      }
    } catch (IOException e) {
      LOG.warn("cannot set up an accepted connection; dropping it", e);
      closeQuietly(ch);
      return;
    }
    TcpEventLoop loop = nextLoop();
    TcpConnection c = new TcpConnection(this, loop, ch, handler, remote);
    if (loop.inLoop()) {
      register(loop, ch, c);
    } else if (!loop.execute(() -> register(loop, ch, c))) {
      LOG.warn("dropping connection from {}: event loop {} is closing or overloaded", remote,
          loop.thread().getName());
      closeQuietly(ch);
    }
  }

  private void register(TcpEventLoop loop, SocketChannel ch, TcpConnection c) {
    if (loop.isShutdown()) {
      closeQuietly(ch);
      return;
    }
    if (loop.connectionCount() >= TcpEventLoop.MAX_CONNECTIONS) {
      LOG.warn("dropping connection from {}: {} already serves {} connections", c.peer(),
          loop.thread().getName(), TcpEventLoop.MAX_CONNECTIONS);
      closeQuietly(ch);
      return;
    }
    try {
      c.attach(ch.register(loop.selector(), SelectionKey.OP_READ, c));
    } catch (ClosedChannelException e) {
      return;
    }
    loop.adopt(c);
    LOG.debug("accepted connection from {}", c.peer());
  }

  private static void closeQuietly(SocketChannel ch) {
    if (ch == null) {
      return;
    }
    try {
      ch.close();
    } catch (IOException e) {
      LOG.debug("closing a socket", e);
    }
  }

  /** A connect in progress, confined to its loop once started. */
  final class PendingConnect {
    private final TcpEventLoop loop;
    private final SocketChannel ch;
    private final InetSocketAddress address;
    private final CompletableFuture<Connection> future;
    private final long deadline;
    private SelectionKey key;

    PendingConnect(TcpEventLoop loop, SocketChannel ch, InetSocketAddress address,
        CompletableFuture<Connection> future, long deadline) {
      this.loop = loop;
      this.ch = ch;
      this.address = address;
      this.future = future;
      this.deadline = deadline;
    }

    void start() {
      if (loop.isShutdown()) {
        abort("transport closed");
        return;
      }
      try {
        if (ch.isConnected() || ch.connect(address)) {
          established();
        } else {
          key = ch.register(loop.selector(), SelectionKey.OP_CONNECT, this);
          loop.connecting(this);
        }
      } catch (IOException | RuntimeException e) {
        fail(e);
      }
    }

    void finish() {
      try {
        if (!ch.finishConnect()) {
          return;
        }
      } catch (IOException e) {
        fail(e);
        return;
      }
      established();
    }

    private void established() {
      loop.connected(this);
      if (loop.connectionCount() >= TcpEventLoop.MAX_CONNECTIONS) {
        fail(new IOException(loop.thread().getName() + " already serves "
            + TcpEventLoop.MAX_CONNECTIONS + " connections"));
        return;
      }
      TcpConnection c = new TcpConnection(TcpTransport.this, loop, ch, null, address);
      try {
        if (key == null) {
          key = ch.register(loop.selector(), SelectionKey.OP_READ, c);
        } else {
          key.attach(c);
          key.interestOps(SelectionKey.OP_READ);
        }
      } catch (IOException | RuntimeException e) {
        fail(e);
        return;
      }
      c.attach(key);
      loop.adopt(c);
      LOG.debug("connected to {}", address);
      if (!future.complete(c)) {
        c.close();
      }
    }

    void sweep(long now) {
      if (now - deadline >= 0) {
        loop.connected(this);
        closeQuietly(ch);
        future.completeExceptionally(new TransportTimeoutException("connect to " + address
            + " timed out after " + conf.connectTimeoutMs()
            + " ms (hadoop.hpc.transport.connect.timeout)"));
      }
    }

    void abort(String reason) {
      closeQuietly(ch);
      future.completeExceptionally(new ConnectionClosedException("connect to " + address + ": "
          + reason));
    }

    private void fail(Exception e) {
      loop.connected(this);
      closeQuietly(ch);
      future.completeExceptionally(new TransportException("cannot connect to " + address + ": "
          + e, e));
    }
  }
}
