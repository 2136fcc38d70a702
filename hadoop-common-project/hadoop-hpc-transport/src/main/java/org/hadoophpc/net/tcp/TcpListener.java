/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.tcp;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

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

  TcpListener(TcpTransport transport, ServerSocketChannel server, RequestHandler handler)
      throws IOException {
    this.transport = transport;
    this.server = server;
    this.handler = handler;
    this.address = (InetSocketAddress) server.getLocalAddress();
  }

  /** Registers with {@code loop}; runs on that loop. */
  void register(TcpEventLoop loop) {
    if (loop.isShutdown() || !server.isOpen()) {
      close();
      return;
    }
    try {
      server.register(loop.selector(), SelectionKey.OP_ACCEPT, this);
    } catch (IOException e) {
      LOG.warn("cannot register listener {}; closing it", address, e);
      close();
    }
  }

  /** Accepts what is pending; runs on the accepting loop. */
  void acceptReady() {
    while (true) {
      SocketChannel ch;
      try {
        ch = server.accept();
      } catch (IOException e) {
        // E.g. out of file descriptors: the backlog keeps the peer waiting until next readiness.
        LOG.warn("accept on {} failed", address, e);
        return;
      }
      if (ch == null) {
        return;
      }
      transport.adopt(ch, handler);
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
  }

  @Override
  public String toString() {
    return "TcpListener[" + address + "]";
  }
}
