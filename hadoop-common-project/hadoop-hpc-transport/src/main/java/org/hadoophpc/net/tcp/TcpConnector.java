/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.tcp;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.hadoophpc.net.Connection;
import org.hadoophpc.net.ConnectionClosedException;
import org.hadoophpc.net.ForeignPeerException;
import org.hadoophpc.net.TransportConf;
import org.hadoophpc.net.TransportException;
import org.hadoophpc.net.TransportMetrics;
import org.hadoophpc.net.TransportTimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The outgoing connections of a {@link TcpTransport}: made on the caller's thread (a blocking
 * connect bounded by the timeout) or by an event loop (non-blocking, completing a future), over
 * the peer's same-host local socket where {@link LocalSockets} finds one, else over TCP. Either
 * way the connection ends up adopted by one loop, which sweeps it and closes it at shutdown.
 * Thread-safe.
 */
final class TcpConnector {
  private static final Logger LOG = LoggerFactory.getLogger(TcpConnector.class);

  private final TcpTransport transport;
  private final TransportConf conf;
  private final TransportMetrics metrics;
  private final LocalSockets localSockets;

  TcpConnector(TcpTransport transport, TransportConf conf, TransportMetrics metrics,
      LocalSockets localSockets) {
    this.transport = transport;
    this.conf = conf;
    this.metrics = metrics;
    this.localSockets = localSockets;
  }

  /**
   * Connects on the calling thread: a blocking connect bounded by the timeout, the channel
   * registered with its loop from here and its reads left to callers at once, so the loop is not
   * needed until the connection's first sweep: it adopts the connection (sweeps, connection
   * limit, close at shutdown) in a task it runs at its next turn, without being woken for it.
   * No hand-off to the loop and back: measured on a 2-core VM, a loopback connect through the
   * loop took ~230 us, ~20 us of them the connect itself.
   */
  Connection connect(InetSocketAddress address, long timeoutMs) throws IOException {
    if (transport.isClosed()) {
      metrics.connectFailed();
      throw new ConnectionClosedException("connect to " + address + ": transport is closed");
    }
    for (TcpEventLoop l : transport.loops()) {
      if (l.inLoop()) { // it would stall every connection of that loop meanwhile
        throw new IllegalStateException("a blocking connect on the event thread "
            + l.thread().getName());
      }
    }
    TcpEventLoop loop = transport.nextLoop();
    long ms = Math.max(1, Math.min(timeoutMs, conf.connectTimeoutMs()));
    SocketChannel ch = null;
    try {
      ch = connectLocally(address);
      if (ch == null) {
        ch = SocketChannel.open();
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
        ch.socket().connect(address, (int) Math.min(Integer.MAX_VALUE, ms));
        ch.configureBlocking(false);
      }
      TcpConnection c = new TcpConnection(transport, loop, ch, null, address);
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
    } catch (ForeignPeerException e) {
      metrics.connectFailed();
      throw e;
    } catch (IOException | RuntimeException e) {
      closeQuietly(ch);
      metrics.connectFailed();
      throw new TransportException("cannot connect to " + address + ": " + e, e);
    }
  }

  /** Connects by an event loop; the future completes on that loop. */
  CompletableFuture<Connection> connect(InetSocketAddress address) {
    if (transport.isClosed()) {
      return CompletableFuture.failedFuture(new ConnectionClosedException("connect to "
          + address + ": transport is closed"));
    }
    CompletableFuture<Connection> future = new CompletableFuture<>();
    SocketChannel ch; // connected by its local socket: the loop only takes it over
    try {
      ch = connectLocally(address);
    } catch (ForeignPeerException e) {
      return CompletableFuture.failedFuture(e);
    }
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
    TcpEventLoop loop = transport.nextLoop();
    PendingConnect p = new PendingConnect(loop, ch, address, future,
        System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(conf.connectTimeoutMs()));
    if (!loop.execute(p::start)) {
      p.abort("transport is closing or its event loop is overloaded");
    }
    return future;
  }

  /**
   * A connected, non-blocking channel to the same-host listener at {@code address} by its local
   * socket, or null (none there, or it does not answer at once: the caller uses TCP). A peer of
   * another user is refused ({@link ForeignPeerException}), not passed over for TCP: something
   * of another user's in this user's own directory is worth a failure the user sees.
   */
  private SocketChannel connectLocally(InetSocketAddress address) throws ForeignPeerException {
    UnixDomainSocketAddress path = localSockets.find(address);
    if (path == null) {
      return null;
    }
    SocketChannel ch = null;
    try {
      ch = SocketChannel.open(StandardProtocolFamily.UNIX);
      ch.configureBlocking(false);
      ch.setOption(StandardSocketOptions.SO_SNDBUF, LocalSockets.SEND_BUFFER);
      if (ch.connect(path)) { // a local connect completes at once, or is refused
        LocalSockets.checkPeer(ch, path, metrics);
        metrics.localConnection();
        return ch;
      }
    } catch (ForeignPeerException e) {
      closeQuietly(ch);
      throw e;
    } catch (IOException | UnsupportedOperationException e) {
      LOG.debug("local socket {} of {} refused ({}); using TCP", path, address, e.toString());
    }
    closeQuietly(ch);
    return null;
  }

  /** The loop takes over a connection made on a caller's thread; runs on that loop. */
  private static void adoptConnected(TcpEventLoop loop, TcpConnection c) {
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

  static void closeQuietly(SocketChannel ch) {
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
      TcpConnection c = new TcpConnection(transport, loop, ch, null, address);
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
