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
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import org.hadoophpc.net.ForeignPeerException;
import org.hadoophpc.net.Listener;
import org.hadoophpc.net.RequestHandler;
import org.hadoophpc.net.TransportException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A listening socket registered with the transport's first event loop, which accepts and hands
 * each new connection to the next loop in turn. A connection from a remote address that already
 * has the handler's {@link RequestHandler#maxConnectionsPerAddress()} open is closed as soon as
 * it is accepted, and so is one by the local socket whose peer runs as another user
 * ({@link LocalSockets#checkPeer}). Closing stops accepting only. Thread-safe.
 */
final class TcpListener implements Listener {
  private static final Logger LOG = LoggerFactory.getLogger(TcpListener.class);

  private final TcpTransport transport;
  private final ServerSocketChannel server;
  private final RequestHandler handler;
  private final InetSocketAddress address;
  /** The same listener's Unix domain socket for same-host peers ({@link LocalSockets}), or null. */
  private final ServerSocketChannel local;
  private final Path localPath;
  /** The handler's {@link RequestHandler#maxConnectionsPerAddress()}; 0: none. */
  private final int perAddressMax;
  /** Open connections by remote address, while {@link #perAddressMax} is set. */
  private final ConcurrentHashMap<InetAddress, AtomicInteger> perAddress =
      new ConcurrentHashMap<>();
  /** When a refusal was last logged (one line per 10 s, not one per connection). */
  private long lastRefusalLogNanos;

  TcpListener(TcpTransport transport, ServerSocketChannel server, RequestHandler handler,
      ServerSocketChannel local, Path localPath) throws IOException {
    this.transport = transport;
    this.server = server;
    this.handler = handler;
    this.address = (InetSocketAddress) server.getLocalAddress();
    this.local = local;
    this.localPath = localPath;
    this.perAddressMax = handler == null ? 0 : Math.max(0, handler.maxConnectionsPerAddress());
  }

  /**
   * Binds {@code address} (and, where {@code localSockets} gives a path, the same listener's
   * local socket); registered with a loop by {@link #register}.
   */
  static TcpListener open(TcpTransport transport, InetSocketAddress address,
      RequestHandler handler, LocalSockets localSockets) throws IOException {
    ServerSocketChannel server = ServerSocketChannel.open();
    ServerSocketChannel local = null;
    try {
      server.configureBlocking(false);
      server.setOption(StandardSocketOptions.SO_REUSEADDR, true);
      server.bind(address, 1024);
      Path localPath = localSockets.bindPath((InetSocketAddress) server.getLocalAddress());
      if (localPath != null) {
        local = listenLocally(localPath);
      }
      return new TcpListener(transport, server, handler, local, local == null ? null : localPath);
    } catch (IOException e) {
      server.close();
      if (local != null) {
        local.close();
      }
      throw new TransportException("cannot listen on " + address + ": " + e.getMessage(), e);
    }
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

  /** Registers with {@code loop}; runs on that loop. */
  void register(TcpEventLoop loop) {
    if (loop.isShutdown() || !server.isOpen()) {
      close();
      return;
    }
    try {
      server.register(loop.selector(), SelectionKey.OP_ACCEPT, this);
      if (local != null) {
        local.register(loop.selector(), SelectionKey.OP_ACCEPT, this);
      }
    } catch (IOException e) {
      LOG.warn("cannot register listener {}; closing it", address, e);
      close();
    }
  }

  /** Accepts what is pending; runs on the accepting loop. */
  void acceptReady() {
    accept(server);
    if (local != null) {
      accept(local);
    }
  }

  private void accept(ServerSocketChannel from) {
    while (true) {
      SocketChannel ch;
      try {
        ch = from.accept();
      } catch (IOException e) {
        // E.g. out of file descriptors: the backlog keeps the peer waiting until next readiness.
        LOG.warn("accept on {} failed", from == local ? localPath : address, e);
        return;
      }
      if (ch == null) {
        return;
      }
      adopt(ch, from == local);
    }
  }

  /**
   * Hands an accepted channel to the transport's next loop; runs on the accepting loop. A peer
   * that came by the local socket has no address of its own: it is given the one it reached
   * (this host's, loopback for a wildcard listener) with port 0, as TCP from this host would
   * show it.
   */
  private void adopt(SocketChannel ch, boolean byLocalSocket) {
    InetSocketAddress remote;
    try {
      ch.configureBlocking(false);
      if (byLocalSocket) {
        LocalSockets.checkPeer(ch, localPath, transport.metrics());
        transport.metrics().localConnection();
        ch.setOption(StandardSocketOptions.SO_SNDBUF, LocalSockets.SEND_BUFFER);
        remote = new InetSocketAddress(address.getAddress().isAnyLocalAddress()
            ? InetAddress.getLoopbackAddress() : address.getAddress(), 0);
      } else {
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
        remote = (InetSocketAddress) ch.getRemoteAddress();
      }
    } catch (ForeignPeerException e) {
      TcpConnector.closeQuietly(ch);
      if (rateLimited()) {
        LOG.warn("{} (further refusals within 10 s not logged)", e.getMessage());
      }
      return;
    } catch (IOException e) {
      LOG.warn("cannot set up an accepted connection; dropping it", e);
      TcpConnector.closeQuietly(ch);
      return;
    }
    InetAddress from = remote.getAddress();
    boolean counted = perAddressMax > 0 && !byLocalSocket && from != null;
    if (counted && !admit(from)) {
      TcpConnector.closeQuietly(ch);
      return;
    }
    TcpEventLoop loop = transport.nextLoop();
    TcpConnection c = new TcpConnection(transport, loop, ch, handler, remote);
    if (counted) {
      c.onClosed(() -> perAddress.computeIfPresent(from,
          (a, n) -> n.decrementAndGet() <= 0 ? null : n));
    }
    if (loop.inLoop()) {
      register(loop, ch, c);
    } else if (!loop.execute(() -> register(loop, ch, c))) {
      LOG.warn("dropping connection from {}: event loop {} is closing or overloaded", remote,
          loop.thread().getName());
      TcpConnector.closeQuietly(ch);
      c.released();
    }
  }

  /** Counts one more connection from {@code from}, or refuses it (false) at the limit. */
  private boolean admit(InetAddress from) {
    boolean[] ok = new boolean[1];
    perAddress.compute(from, (a, n) -> {
      AtomicInteger count = n == null ? new AtomicInteger() : n;
      if (count.get() < perAddressMax) {
        count.incrementAndGet();
        ok[0] = true;
      }
      return count.get() == 0 ? null : count;
    });
    if (!ok[0] && rateLimited()) {
      LOG.warn("refusing connections from {} to {}: it has {} open, the most its handler"
          + " allows from one address (further refusals within 10 s not logged)", from,
          address, perAddressMax);
    }
    return ok[0];
  }

  /** True at most once per 10 s: a refusal is logged then, not once per connection. */
  private boolean rateLimited() {
    long now = System.nanoTime();
    if (now - lastRefusalLogNanos > 10_000_000_000L || lastRefusalLogNanos == 0) {
      lastRefusalLogNanos = now;
      return true;
    }
    return false;
  }

  private static void register(TcpEventLoop loop, SocketChannel ch, TcpConnection c) {
    if (loop.isShutdown()) {
      TcpConnector.closeQuietly(ch);
      c.released();
      return;
    }
    if (loop.connectionCount() >= TcpEventLoop.MAX_CONNECTIONS) {
      LOG.warn("dropping connection from {}: {} already serves {} connections", c.peer(),
          loop.thread().getName(), TcpEventLoop.MAX_CONNECTIONS);
      TcpConnector.closeQuietly(ch);
      c.released();
      return;
    }
    try {
      c.attach(ch.register(loop.selector(), SelectionKey.OP_READ, c));
    } catch (ClosedChannelException e) {
      c.released();
      return;
    }
    loop.adopt(c);
    LOG.debug("accepted connection from {}", c.peer());
  }

  @Override
  public InetSocketAddress address() {
    return address;
  }

  @Override
  public void close() {
    try {
      server.close();
    } catch (IOException e) {
      LOG.debug("closing listener {}", address, e);
    }
    if (local != null) {
      try {
        local.close();
        Files.deleteIfExists(localPath);
      } catch (IOException e) {
        LOG.debug("closing listener {}", localPath, e);
      }
    }
  }

  /** The local socket's path, or null. */
  Path localPath() {
    return localPath;
  }

  @Override
  public String toString() {
    return "TcpListener[" + address + (local == null ? "" : ", " + localPath) + "]";
  }
}
