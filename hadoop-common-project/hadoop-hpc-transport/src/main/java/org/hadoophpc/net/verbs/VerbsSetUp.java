/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.verbs;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;

import org.hadoophpc.nativeio.NativeIoException;
import org.hadoophpc.net.Connection;
import org.hadoophpc.net.ConnectionClosedException;
import org.hadoophpc.net.TransportException;
import org.hadoophpc.net.TransportTimeoutException;

/**
 * One rule: a connection is open only once rdma_cm has established it with a peer that speaks
 * this protocol and announced a valid receive window; what set-up reserved (completion-queue
 * entries, the queue pair) is recorded here so that teardown gives each back once. This is one
 * connection's set-up through rdma_cm, active side (resolve, route, connect) and passive side
 * (the transport accepts), and the rdma_cm events that end it.
 *
 * <p>Belongs to the transport's event loop, as its connection does.
 */
final class VerbsSetUp {
  private final VerbsConnection conn;
  private final VerbsTransport transport;
  private final VerbsCredits credits;
  private final VerbsRing ring;
  private final VerbsSendQueue sendQueue;
  /** Accepted by a listener (else connecting to one). */
  private final boolean passive;
  /** Active side: completed when established, failed otherwise; null on the passive side. */
  private CompletableFuture<Connection> connectFuture;
  private long connectDeadlineNanos;
  private boolean hasQp;
  private boolean cqReserved;
  private boolean established;
  /** Chosen when the queue pair is set up; 0 before. */
  private int recvDepth;
  private int sendDepth;

  VerbsSetUp(VerbsConnection conn, boolean passive, VerbsCredits credits, VerbsRing ring,
      VerbsSendQueue sendQueue) {
    this.conn = conn;
    this.passive = passive;
    this.transport = conn.transport();
    this.credits = credits;
    this.ring = ring;
    this.sendQueue = sendQueue;
  }

  /** Active side: {@code future} learns the outcome, by {@code deadlineNanos} at the latest. */
  void connecting(CompletableFuture<Connection> future, long deadlineNanos) {
    this.connectFuture = future;
    this.connectDeadlineNanos = deadlineNanos;
  }

  /**
   * Takes a receive ring from the pool (depth within the rings' budget), creates the QP and
   * pre-posts every receive. On failure what was taken stays recorded for teardown.
   */
  void setUpQueuePair() throws IOException {
    int maxInflight = transport.conf().maxInflight();
    recvDepth = ring.take(conn.remoteAddress(), maxInflight);
    credits.ownWindow(recvDepth);
    sendDepth = VerbsRing.sendDepth(maxInflight, recvDepth);
    sendQueue.init(recvDepth, sendDepth);
    transport.reserveCq(recvDepth + sendDepth);
    cqReserved = true;
    VerbsNatives.createQp(transport.ctx(), conn.cmId, sendDepth, recvDepth);
    hasQp = true;
    for (int i = 0; i < recvDepth; i++) {
      int rc = conn.postReceive(i);
      if (rc != 0) {
        throw new NativeIoException("ibv_post_recv", -rc, "posting initial receives failed");
      }
    }
  }

  byte[] privateData() {
    return VerbsHeader.privateData(recvDepth);
  }

  void onCmEvent(int type, int status, ByteBuffer rec, int at) {
    InetSocketAddress remote = conn.remoteAddress();
    switch (type) {
      case VerbsNatives.CM_ADDR_RESOLVED:
        try {
          VerbsNatives.resolveRoute(conn.cmId, transport.stepTimeoutMs());
        } catch (NativeIoException e) {
          failSetUp(new TransportException("verbs connect to " + remote + ": " + e.getMessage(),
              e));
        }
        return;
      case VerbsNatives.CM_ROUTE_RESOLVED:
        try {
          setUpQueuePair();
          VerbsNatives.connect(transport.ctx(), conn.cmId, privateData());
        } catch (IOException e) {
          failSetUp(new TransportException("verbs connect to " + remote + ": " + e.getMessage(),
              e));
        }
        return;
      case VerbsNatives.CM_ESTABLISHED:
        onEstablished(rec, at);
        return;
      case VerbsNatives.CM_ADDR_ERROR:
      case VerbsNatives.CM_ROUTE_ERROR:
      case VerbsNatives.CM_UNREACHABLE:
      case VerbsNatives.CM_REJECTED:
      case VerbsNatives.CM_CONNECT_ERROR:
        if (conn.state == VerbsConnection.CONNECTING) {
          String what = type == VerbsNatives.CM_REJECTED ? "refused" : "failed";
          failSetUp(new TransportException("verbs connection to " + remote + " " + what + " ("
              + VerbsNatives.cmEventName(type) + ", status " + status + ")"));
        } else {
          conn.closeConnection(new ConnectionClosedException("verbs connection to " + remote
              + " lost (" + VerbsNatives.cmEventName(type) + ")"));
        }
        return;
      case VerbsNatives.CM_DISCONNECTED:
        conn.closeConnection(new ConnectionClosedException("verbs connection to " + remote
            + " closed by the peer"));
        return;
      case VerbsNatives.CM_DEVICE_REMOVAL:
        conn.closeConnection(new ConnectionClosedException("verbs connection to " + remote
            + ": RDMA device removed"));
        return;
      default:
        return;
    }
  }

  /** The peer's address of rdma_cm id {@code cmId}; {@code known} when it cannot be read. */
  static InetSocketAddress peerAddress(long cmId, InetSocketAddress known) {
    try {
      byte[] raw = VerbsNatives.peerAddress(cmId);
      int n = raw.length - 2;
      byte[] ip = java.util.Arrays.copyOf(raw, n);
      int port = ((raw[n] & 0xff) << 8) | (raw[n + 1] & 0xff);
      return new InetSocketAddress(java.net.InetAddress.getByAddress(ip), port);
    } catch (IOException e) {
      // Keeps the address known so far (the listener's view); only used for messages.
      return known == null ? new InetSocketAddress(0) : known;
    }
  }

  /** Passive side: remembers the peer's window before accepting. */
  void setPeerCredits(int window) {
    credits.peerWindow(window);
  }

  private void onEstablished(ByteBuffer rec, int at) {
    if (conn.state != VerbsConnection.CONNECTING) {
      return;
    }
    if (!passive) {
      int window = VerbsHeader.creditsFromPrivateData(rec, at + VerbsNatives.CM_PRIVATE_DATA,
          rec.getInt(at + VerbsNatives.CM_PRIVATE_DATA_LEN));
      if (window <= 0) {
        failSetUp(new TransportException("verbs connection to " + conn.remoteAddress()
            + ": the peer does not speak hadoop-hpc verbs protocol " + VerbsHeader.VERSION));
        return;
      }
      if (!VerbsCredits.validWindow(window)) {
        failSetUp(new TransportException("verbs connection to " + conn.remoteAddress()
            + ": the peer announced " + window + " receive credits (at most "
            + VerbsCredits.MAX_PEER_WINDOW + ")"));
        return;
      }
      setPeerCredits(window);
    }
    established = true;
    conn.state = VerbsConnection.OPEN;
    conn.metrics().opened(); // established: its close is counted too (VerbsTeardown)
    if (connectFuture != null) {
      connectFuture.complete(conn);
    } else if (conn.listener() != null) {
      conn.listener().handler().onConnect(conn); // established: the handler hears its close
    }
    conn.pump();
  }

  private void failSetUp(TransportException cause) {
    conn.closeConnection(cause);
  }

  /** True when the active side's connect took too long: the connection is closed then. */
  boolean connectTimedOut(long now) {
    if (conn.state == VerbsConnection.CONNECTING && connectFuture != null
        && now - connectDeadlineNanos > 0) {
      TransportTimeoutException e = new TransportTimeoutException("verbs connect to "
          + conn.remoteAddress() + " took longer than " + transport.conf().connectTimeoutMs()
          + " ms (hadoop.hpc.transport.connect.timeout)");
      connectFuture.completeExceptionally(e);
      conn.closeConnection(e);
      return true;
    }
    return false;
  }

  /** Teardown begins: a pending connect fails, an established queue pair is disconnected. */
  void closing(Throwable cause, boolean wasConnecting) {
    if (connectFuture != null && !connectFuture.isDone()) {
      connectFuture.completeExceptionally(cause instanceof TransportException ? cause
          : new TransportException("verbs connect to " + conn.remoteAddress() + " failed",
              cause));
    }
    if (hasQp && !wasConnecting) {
      VerbsNatives.disconnect(conn.cmId); // errors mean "already disconnected": nothing to do
    }
  }

  /**
   * Teardown ends (the queue pair is gone): the completion-queue entries go back, once.
   * Returns whether the connection had been established.
   */
  boolean finish() {
    if (cqReserved) {
      transport.releaseCq(recvDepth + sendDepth);
      cqReserved = false;
    }
    return established;
  }
}
