/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.verbs;

import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicInteger;

import org.hadoophpc.nativeio.NativeIoException;
import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.TransportException;

/**
 * One rule: a large message's payload is open to the peer only through a memory window bound to
 * exactly its bytes, from its announcement until the transfer is over, and the window's key is
 * ended by this side alone. This is one connection's rendezvous protocol, both directions.
 *
 * <p>The sender binds a memory window to exactly its payload and announces (address, window
 * rkey, length); the receiver RDMA-READs it into a pool buffer and answers RNDV_DONE; the sender
 * invalidates the window and only then releases its buffer ({@link VerbsWindows}: what a peer
 * may read, and for how long). A transfer abandoned on either side, or not read within the io
 * timeout, ends the same way: its key is invalidated here before the payload is reused.
 *
 * <p>Announcements are checked by the connection before they reach {@link #announced}. Belongs
 * to the transport's event loop, as its connection does.
 */
final class VerbsRendezvous {
  private final VerbsConnection conn;
  private final VerbsTransport transport;
  private final long ioTimeoutNanos;
  /** Rendezvous payloads exposed through memory windows until the transfer is over. */
  private final VerbsWindows windows;
  private final VerbsWindows.Window[] displaced = new VerbsWindows.Window[1];
  /** Reads of the peer's payloads waiting for pool memory to read into. */
  private final ArrayDeque<VerbsOp> waiting = new ArrayDeque<>();
  /** Windows this side invalidated (every rendezvous exposure ends so). */
  private final AtomicInteger localInvalidations = new AtomicInteger();

  VerbsRendezvous(VerbsConnection conn, VerbsTransport transport, int maxInflight,
      long ioTimeoutNanos) {
    this.conn = conn;
    this.transport = transport;
    this.ioTimeoutNanos = ioTimeoutNanos;
    this.windows = new VerbsWindows(transport.ctx(), 2 * maxInflight + 8);
  }

  /** Payloads this side exposes now (windows bound or being invalidated); any thread. */
  int exposed() {
    return windows.exposed();
  }

  /** The most payloads one connection may expose at once. */
  int limit() {
    return windows.limit();
  }

  /** Windows this side has invalidated so far; any thread. */
  int localInvalidations() {
    return localInvalidations.get();
  }

  // ======================================================================================
  // Sending a payload
  // ======================================================================================

  /**
   * Makes {@code op} the announcement of {@code payload}, which stays exposed through a memory
   * window (bound as the announcement is posted) until the transfer is over.
   */
  void announce(VerbsOp op, byte type, Buffer payload, boolean forResponse) {
    VerbsTransport.MrInfo mr = transport.mr(payload);
    VerbsWindows.Window w;
    try {
      w = windows.open(forResponse, op.reqId, payload, System.nanoTime() + ioTimeoutNanos,
          displaced);
    } catch (NativeIoException e) {
      throw new IllegalStateException("verbs connection to " + conn.remoteAddress() + ": no"
          + " memory window for a rendezvous: " + e.getMessage(), e);
    }
    if (displaced[0] != null) {
      invalidateLocally(displaced[0]); // a stale id from a timed-out exchange: abandoned
      displaced[0] = null;
    }
    op.type = type;
    op.payload = null;
    op.window = w;
    op.length = payload.readableBytes();
    op.address = mr.addr() + payload.slabOffset() + payload.nio().position();
  }

  /** RNDV_DONE from the peer: the transfer is over, its window goes. */
  void onDone(boolean forResponse, int reqId) {
    VerbsWindows.Window w = windows.done(forResponse, reqId);
    if (w != null) {
      invalidateLocally(w);
    }
  }

  /** Windows whose peer neither read nor acknowledged within the io timeout: their keys die. */
  void expire(long now) {
    VerbsWindows.Window stale;
    while ((stale = windows.expired(now)) != null) {
      invalidateLocally(stale);
    }
  }

  /**
   * The transfer through {@code w} is over (acknowledged, abandoned or expired): this side
   * invalidates the window, and the payload returns when that completes. Not by the peer's SEND
   * with invalidate: in the lane rxe's receive completions did not report one as
   * IBV_WC_WITH_INV, and invalidating a window twice took the rdma_rxe driver of Linux 6.1 down
   * (NULL dereference in rxe_invalidate_mw), so the key's end is in this side's hands only.
   */
  private void invalidateLocally(VerbsWindows.Window w) {
    localInvalidations.incrementAndGet();
    w.invalidating = true;
    VerbsOp op = conn.ops.spare(VerbsOp.LOCAL_INV);
    op.window = w;
    conn.queueRdma(op);
  }

  /** The local invalidate of {@code w} completed: its payload goes back to the pool. */
  void invalidated(VerbsWindows.Window w) {
    windows.closed(w);
  }

  /**
   * Teardown, before the queue pair goes (a bound window holds its QP): every window is
   * deallocated, which invalidates it, and its payload goes back to the pool. Null or what
   * failed.
   */
  NativeIoException destroy() {
    return windows.destroy();
  }

  // ======================================================================================
  // Reading the peer's payload
  // ======================================================================================

  /** A (checked) announcement from the peer: reads the payload when pool memory allows. */
  void announced(boolean forResponse, int reqId, int length, int rkey, long address) {
    if (forResponse && conn.pendingRequest(reqId) == null) {
      // Timed out here: tell the peer to let go of its buffer without reading it.
      conn.queueMessage(done(forResponse, reqId, rkey));
      return;
    }
    VerbsOp op = conn.ops.spare(VerbsOp.RNDV_READ);
    op.forResponse = forResponse;
    op.reqId = reqId;
    op.length = length;
    op.remoteAddress = address;
    op.remoteKey = rkey;
    op.local = transport.bufferPool().allocate(length);
    if (op.local == null) {
      waiting.add(op);
    } else {
      conn.queueRdma(op);
    }
  }

  /** Retries reads that waited for pool memory. */
  void retryWaiting() {
    while (!waiting.isEmpty()) {
      VerbsOp op = waiting.peek();
      op.local = transport.bufferPool().allocate(op.length);
      if (op.local == null) {
        break;
      }
      waiting.poll();
      conn.queueRdma(op);
    }
  }

  /** The read of the peer's payload completed: acknowledged, then delivered. */
  void onRead(VerbsOp op) {
    Buffer payload = op.local;
    op.local = null;
    boolean forResponse = op.forResponse;
    int reqId = op.reqId;
    int length = op.length;
    int rkey = op.remoteKey;
    conn.ops.recycle(op);
    payload.nio().clear().limit(length);
    conn.queueMessage(done(forResponse, reqId, rkey));
    if (forResponse) {
      VerbsOp pending = conn.pendingRequest(reqId);
      if (pending == null) {
        payload.release();
        return;
      }
      conn.finishOp(pending, payload, null);
    } else {
      conn.responder.deliver(reqId, payload);
    }
  }

  /** RNDV_DONE: the peer may invalidate its window {@code rkey} and let go of the payload. */
  private VerbsOp done(boolean forResponse, int reqId, int rkey) {
    VerbsOp done = conn.ops.message(VerbsHeader.RNDV_DONE, forResponse ? 1 : 0, reqId, null);
    done.rkey = rkey; // for the peer's diagnostics; it invalidates by its own record
    return done;
  }

  /** Closing: reads never started are dropped. */
  void dropWaiting(TransportException closed) {
    VerbsOp op;
    while ((op = waiting.poll()) != null) {
      conn.failRdma(op, closed);
    }
  }
}
