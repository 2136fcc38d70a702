/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.tcp;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;

import org.hadoophpc.net.Listener;
import org.hadoophpc.net.RequestHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A listening socket registered with the transport's first event loop, which accepts and hands
 * each new connection to the next loop in turn. Closing stops accepting only. Thread-safe.
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

  TcpListener(TcpTransport transport, ServerSocketChannel server, RequestHandler handler,
      ServerSocketChannel local, Path localPath) throws IOException {
    this.transport = transport;
    this.server = server;
    this.handler = handler;
    this.address = (InetSocketAddress) server.getLocalAddress();
    this.local = local;
    this.localPath = localPath;
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
      transport.adopt(ch, handler, from == local ? address : null);
    }
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
