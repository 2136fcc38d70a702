/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.verbs;

import java.net.InetSocketAddress;

import org.hadoophpc.net.Listener;
import org.hadoophpc.net.RequestHandler;

/**
 * A listening rdma_cm id. Closing destroys the id on the event loop (new connect requests are
 * then refused by the peer's CM) and leaves accepted connections open. Thread-safe.
 */
final class VerbsListener implements Listener {
  private final VerbsTransport transport;
  final long cmId;
  private final InetSocketAddress address;
  private final RequestHandler handler;
  private volatile boolean closed;

  VerbsListener(VerbsTransport transport, long cmId, InetSocketAddress address,
      RequestHandler handler) {
    this.transport = transport;
    this.cmId = cmId;
    this.address = address;
    this.handler = handler;
  }

  @Override
  public InetSocketAddress address() {
    return address;
  }

  RequestHandler handler() {
    return handler;
  }

  boolean isClosed() {
    return closed;
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    transport.closeListener(this);
  }

  @Override
  public String toString() {
    return "VerbsListener[" + address + (closed ? ", closed" : "") + "]";
  }
}
