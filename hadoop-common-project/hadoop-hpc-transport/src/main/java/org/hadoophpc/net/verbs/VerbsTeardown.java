/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.verbs;

import java.util.concurrent.TimeUnit;

import org.hadoophpc.nativeio.NativeIoException;
import org.hadoophpc.net.ConnectionClosedException;
import org.hadoophpc.net.TransportException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One rule: a connection ends once, and everything it holds is failed or released exactly
 * once, the memory the HCA may touch only after the queue pair is gone. Closing moves the queue
 * pair to error so posted work flushes; what was never posted fails at once, posted work as its
 * flush completion arrives, and {@link #finish} ends the rest when none is left or after
 * {@link VerbsTransport#CLOSE_GRACE_MS}.
 *
 * <p>Belongs to the transport's event loop, as its connection does.
 */
final class VerbsTeardown {
  /** The connection's logger: these lines read as they did when this was part of it. */
  private static final Logger LOG = LoggerFactory.getLogger(VerbsConnection.class);

  private final VerbsConnection conn;
  private final VerbsTransport transport;
  private final VerbsSetUp setUp;
  private final VerbsRing ring;
  private final VerbsSendQueue sendQueue;
  private final VerbsRendezvous rendezvous;
  private final VerbsInflight inflightOps;
  private long closeDeadlineNanos;
  private Throwable closeCause;

  VerbsTeardown(VerbsConnection conn, VerbsSetUp setUp, VerbsRing ring,
      VerbsSendQueue sendQueue, VerbsRendezvous rendezvous, VerbsInflight inflightOps) {
    this.conn = conn;
    this.transport = conn.transport();
    this.setUp = setUp;
    this.ring = ring;
    this.sendQueue = sendQueue;
    this.rendezvous = rendezvous;
    this.inflightOps = inflightOps;
  }

  TransportException closeCauseOrDefault() {
    if (closeCause instanceof ConnectionClosedException) {
      return (ConnectionClosedException) closeCause;
    }
    return new ConnectionClosedException("verbs connection to " + conn.remoteAddress()
        + " closed", closeCause);
  }

  /** True when a closing connection's grace period is over (then it is finished). */
  boolean graceOver(long now) {
    if (conn.state == VerbsConnection.CLOSING && now - closeDeadlineNanos > 0) {
      finish();
      return true;
    }
    return false;
  }

  /**
   * Starts teardown: the QP goes to error so posted work flushes; everything not posted fails
   * now, posted work fails as its flush completion arrives ({@link #finish} when none is left
   * or after a grace period).
   */
  void close(Throwable cause) {
    int state = conn.state;
    if (state == VerbsConnection.CLOSING || state == VerbsConnection.CLOSED) {
      return;
    }
    boolean wasConnecting = state == VerbsConnection.CONNECTING;
    conn.state = VerbsConnection.CLOSING;
    if (state == VerbsConnection.OPEN) {
      conn.metrics().closed(); // a set-up that never opened was not counted as opened
    }
    closeCause = cause;
    closeDeadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(
        VerbsTransport.CLOSE_GRACE_MS);
    setUp.closing(cause, wasConnecting);
    TransportException closed = closeCauseOrDefault();
    dropBacklogs(closed);
    inflightOps.failRequests(closed);
    if (postedWrs() == 0 || wasConnecting) {
      finish();
    }
    // After the disconnect (queue pair in error) or finish (queue pair gone): the peer can no
    // longer reach a region through this connection.
    conn.releaseRevocations();
  }

  /** Work requests posted and not completed yet. */
  int postedWrs() {
    return sendQueue.posted() + ring.posted();
  }

  /** Releases and fails what was never posted. */
  private void dropBacklogs(TransportException closed) {
    sendQueue.dropBacklogs(closed);
    rendezvous.dropWaiting(closed);
  }

  /** Destroys the QP and id, then releases every buffer still held. */
  void finish() {
    if (conn.state == VerbsConnection.CLOSED) {
      return;
    }
    conn.state = VerbsConnection.CLOSED;
    TransportException closed = closeCauseOrDefault();
    // Windows before the QP: a bound type 2 window holds a reference to its QP, and rdma_rxe
    // (Linux 6.1) waits for it for tens of seconds when destroying the QP (seen in the lane).
    // Deallocating a window invalidates it; its payload goes back to the pool here.
    NativeIoException windowFailure = rendezvous.destroy();
    if (windowFailure != null) {
      transport.logTeardownProblem(windowFailure);
    }
    boolean qpGone = true;
    if (conn.cmId != 0) {
      qpGone = transport.destroyId(conn.cmId);
      transport.loop().forget(conn);
      conn.cmId = 0;
    }
    // The QP is gone: nothing will touch these buffers any more.
    sendQueue.finish(closed);
    dropBacklogs(closed);
    inflightOps.failAll(closed);
    ring.finish(qpGone);
    boolean established = setUp.finish();
    transport.loop().removeConnection(conn);
    VerbsListener listener = conn.listener();
    if (listener != null && established) {
      try {
        listener.handler().onClose(conn);
      } catch (RuntimeException e) {
        LOG.warn("request handler failed in onClose for {}", conn.remoteAddress(), e);
      }
    }
  }
}
