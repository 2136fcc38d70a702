/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.BufferPool;
import org.hadoophpc.net.Connection;
import org.hadoophpc.net.RequestHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The DataNode's transport handler: a HELLO makes a {@link ServerPipe} and queues its
 * {@link TransferPeer} for the xceiver server; DATA and PULL go to the connection's pipe. Users
 * are authenticated by HDFS, in the stream (block tokens, SASL), exactly as on TCP; the valid
 * HELLO is this handler's admission step ({@link Connection#trust()}): before it a connection
 * may send one request of at most {@link #HELLO_MAX_BYTES} (holding no pooled memory while it
 * arrives) and is closed when it has not sent one within
 * {@code dfs.hpc.datatransfer.hello.timeout}, so connections that never say HELLO pin neither
 * memory nor a place for long. Any request is
 * at most a chunk and its header: a larger one closes the connection before memory is taken;
 * one remote address keeps at most {@code dfs.hpc.datatransfer.max.connections.per.address}
 * connections open (tcp).
 */
final class TransferHandler implements RequestHandler {
  private static final Logger LOG = LoggerFactory.getLogger(TransferHandler.class);
  private static final long CLOSE_GRACE_NANOS = 2_000_000_000L;
  /** Most bytes of the one request an untrusted connection may send (a HELLO is 19). */
  static final int HELLO_MAX_BYTES = 1024;

  private final BufferPool pool;
  private final TransferConf conf;
  private final TransferMetrics metrics;
  private final TransferPeerServer peers;
  private final InetSocketAddress local;
  private final Map<Connection, ServerPipe> pipes = new ConcurrentHashMap<>();

  TransferHandler(BufferPool pool, TransferConf conf, TransferMetrics metrics,
      TransferPeerServer peers, InetSocketAddress local, ScheduledExecutorService timer) {
    this.pool = pool;
    this.conf = conf;
    this.metrics = metrics;
    this.peers = peers;
    this.local = local;
    long every = Math.max(50, conf.parkMaxMs / 2);
    timer.scheduleWithFixedDelay(this::tick, every, every, TimeUnit.MILLISECONDS);
  }

  @Override
  public boolean authenticates() {
    return true; // by the HELLO: see the class comment
  }

  @Override
  public int untrustedRequestBytes() {
    return HELLO_MAX_BYTES;
  }

  @Override
  public long authenticationTimeoutMs() {
    return conf.helloTimeoutMs;
  }

  @Override
  public int maxConnectionsPerAddress() {
    return conf.maxConnectionsPerAddress;
  }

  @Override
  public int maxRequestBytes() {
    return conf.chunk + TransferWire.REQUEST_HEADER; // a DATA message; the rest are smaller
  }

  @Override
  public void onRequest(Connection connection, Buffer request, Responder responder) {
    throw new IllegalStateException("requests arrive with their ids");
  }

  @Override
  public void onRequest(Connection connection, Buffer request, long requestId) {
    ByteBuffer b = request.nio();
    ServerPipe pipe = pipes.get(connection);
    if (b.remaining() < TransferWire.REQUEST_HEADER) {
      request.release();
      refuse(connection, requestId, TransferError.PROTOCOL, "short request");
      return;
    }
    int seq = TransferWire.seq(b);
    byte flags = TransferWire.flags(b);
    byte type = TransferWire.readRequestHeader(b);
    if (pipe == null) {
      hello(connection, request, requestId, type,
          (flags & TransferWire.TAKES_PACKETS) != 0);
      return;
    }
    switch (type) {
      case TransferWire.DATA:
        if (b.remaining() > conf.chunk) { // transports that do not check maxRequestBytes
          request.release();
          pipe.broken(new IOException(connection.remoteAddress() + " sent a DATA message of "
              + b.remaining() + " bytes, more than the chunk of " + conf.chunk));
          refuse(connection, requestId, TransferError.PROTOCOL, "DATA message of "
              + b.remaining() + " bytes, more than the chunk of " + conf.chunk + " ("
              + TransferConfigKeys.CHUNK_SIZE_KEY + ")");
          return;
        }
        pipe.onData(request, seq, requestId);
        break;
      case TransferWire.PULL:
        request.release();
        pipe.onPull(requestId, (flags & TransferWire.RIDES) != 0);
        break;
      default:
        request.release();
        refuse(connection, requestId, TransferError.PROTOCOL, "request of type " + type
            + " on an open stream");
    }
  }

  private void hello(Connection connection, Buffer request, long requestId, byte type,
      boolean takesPackets) {
    ByteBuffer b = request.nio();
    boolean hello = type == TransferWire.HELLO
        && b.remaining() >= TransferWire.HELLO_BYTES - TransferWire.REQUEST_HEADER
        && b.getInt() == TransferWire.MAGIC;
    short version = hello ? b.getShort() : 0;
    request.release();
    if (!hello) {
      refuse(connection, requestId, TransferError.NOT_HDFS, "not an HDFS transfer HELLO");
      return;
    }
    if (version != TransferWire.VERSION) {
      refuse(connection, requestId, TransferError.VERSION, "transfer protocol version "
          + version + ", this DataNode speaks " + TransferWire.VERSION);
      return;
    }
    if (peers.isClosed()) {
      refuse(connection, requestId, TransferError.STOPPING, "the DataNode is stopping");
      return;
    }
    int window = conf.window(connection.respondsFromFiles());
    ServerPipe pipe = new ServerPipe(connection, pool, metrics, conf.chunk, window,
        conf.parkMaxMs, takesPackets);
    if (conf.callerReads) {
      // before the xceiver can see the stream: it reads its connection itself from the start
      connection.leaveReadsToCallers(); // false (the transport's thread reads) where it cannot
    }
    TransferPeer peer;
    try {
      peer = new TransferPeer(pipe, local);
    } catch (IOException e) {
      refuse(connection, requestId, TransferError.PROTOCOL, e.getMessage());
      return;
    }
    pipes.put(connection, pipe);
    if (!peers.offer(peer)) {
      pipes.remove(connection);
      refuse(connection, requestId, TransferError.BUSY, "accept queue of " + conf.acceptQueue
          + " full (" + TransferConfigKeys.ACCEPT_QUEUE_KEY + ")");
      return;
    }
    Buffer ok = pool.allocate(TransferWire.OK_BYTES);
    if (ok == null) {
      pipes.remove(connection);
      refuse(connection, requestId, TransferError.BUSY, "registered memory is full");
      return;
    }
    connection.trust(); // a valid HELLO: the stream's own limits (window, chunk) hold from here
    ByteBuffer a = ok.nio();
    TransferWire.answerHeader(a, TransferWire.OK, 0, 0);
    a.putInt(conf.chunk).putInt(window).putInt(conf.pulls(connection.respondsFromFiles()))
        .flip();
    metrics.opened(TransferMetrics.Role.SERVER);
    connection.respond(requestId, ok);
  }

  private void refuse(Connection connection, long requestId, TransferError why, String text) {
    LOG.debug("refusing a transfer stream from {}: {} {}", connection.remoteAddress(), why,
        text);
    connection.fail(requestId, why.code, text);
    if (why == TransferError.PROTOCOL) {
      connection.close();
    }
  }

  @Override
  public void onClose(Connection connection) {
    ServerPipe pipe = pipes.remove(connection);
    if (pipe != null) {
      pipe.onConnectionClosed();
    }
  }

  /**
   * Timer: answers PULLs parked too long; closes connections of streams closed long ago. A
   * failure on one stream closes that stream's connection (logged) and the others still get
   * their turn: an exception escaping here would end the timer's schedule for good, leaving
   * every later PULL parked until the transport's io.timeout.
   */
  void tick() {
    long now = System.nanoTime();
    for (ServerPipe p : pipes.values()) {
      try {
        p.expireParked(now);
        long closedAt = p.closedAt();
        if (closedAt != 0 && now - closedAt > CLOSE_GRACE_NANOS) {
          p.connectionClose();
        }
      } catch (RuntimeException e) {
        try {
          p.connectionClose();
        } catch (RuntimeException again) {
          e.addSuppressed(again);
        }
        LOG.error("transfer stream from {}: its timer work failed; its connection closed",
            p.remoteAddress(), e);
      }
    }
  }

  /** Closes every stream (the DataNode stops). */
  void closeAll() {
    for (ServerPipe p : pipes.values()) {
      p.connectionClose();
    }
  }
}
