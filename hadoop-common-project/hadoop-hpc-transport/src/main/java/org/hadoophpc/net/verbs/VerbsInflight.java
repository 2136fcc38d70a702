/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.verbs;

import org.hadoophpc.net.Completion;
import org.hadoophpc.net.Completions;
import org.hadoophpc.net.InflightTable;
import org.hadoophpc.net.TransportException;
import org.hadoophpc.net.TransportTimeoutException;

/**
 * One rule: a user operation (request, one-sided read or write) ends exactly once, with its
 * result, a failure or a timeout, and gives back its slot and its place in
 * {@code max.inflight} then. Slots, ids and places are the transport-neutral
 * {@link InflightTable} (tcp's connection has the same); a request's wire id is its table id
 * (ids fit the header's 31 bits), so a response finds its request without a map.
 *
 * <p>The in-flight count is taken by callers on any thread ({@link #acquire}); everything else
 * belongs to the transport's event loop, as the connection does.
 */
final class VerbsInflight {
  private final VerbsConnection conn;
  private final VerbsTransport transport;
  /** Requests and one-sided operations in flight; a request's id is its table id. */
  private final InflightTable<VerbsOp> active;

  VerbsInflight(VerbsConnection conn, VerbsTransport transport, int maxInflight) {
    this.conn = conn;
    this.transport = transport;
    this.active = new InflightTable<>(maxInflight, Integer.MAX_VALUE);
  }

  /** Operations accepted and not ended; any thread. */
  int count() {
    return active.count();
  }

  /** Takes a place for a new operation; false when {@code max.inflight} are in flight. */
  boolean acquire() {
    return active.acquire();
  }

  /** Gives back a place taken by {@link #acquire} for an operation that never started. */
  void unacquire() {
    active.release();
  }

  /** Loop: {@code op} takes a slot. */
  void add(VerbsOp op) {
    active.add(op);
  }

  /** Loop: request {@code op} takes a slot and a new id naming it. */
  void addRequest(VerbsOp op) {
    op.reqId = (int) active.add(op); // at most Integer.MAX_VALUE
  }

  /** The request op of {@code reqId}, or null (timed out, unknown). */
  VerbsOp pendingRequest(int reqId) {
    VerbsOp op = active.find(reqId);
    return op != null && op.kind == VerbsOp.REQUEST ? op : null;
  }

  /**
   * Ends a user operation (request or one-sided): out of the table of operations in flight and
   * of the in-flight count, then its completion is called. Once only; later calls do nothing.
   */
  void finish(VerbsOp op, Object result, Throwable failure) {
    Completion<?> c = op.completion;
    if (c == null) {
      return;
    }
    op.completion = null;
    active.remove(op);
    active.release();
    if (op.kind == VerbsOp.REQUEST && !op.messageLive) {
      conn.ops.recycleRequest(op);
    }
    if (failure == null) {
      Completions.succeed(c, result);
    } else {
      transport.metrics().failed(failure);
      Completions.fail(c, failure);
    }
  }

  /**
   * Loop: fails requests past their deadline. Returns a one-sided operation past its deadline,
   * every such one marked timed out, or null when there is none.
   */
  VerbsOp expire(long now) {
    VerbsOp expired = null;
    for (int i = 0; i < active.capacity(); i++) {
      VerbsOp op = active.at(i);
      if (op == null || now - op.deadlineNanos <= 0) {
        continue;
      }
      if (op.kind == VerbsOp.REQUEST) {
        finish(op, null, new TransportTimeoutException("verbs request to "
            + conn.remoteAddress() + " got no response within "
            + transport.conf().ioTimeoutMs() + " ms (hadoop.hpc.transport.io.timeout)"));
      } else if (expired == null) {
        expired = op;
      }
    }
    if (expired != null) {
      for (int i = 0; i < active.capacity(); i++) {
        VerbsOp op = active.at(i);
        if (op != null && op.isUser() && now - op.deadlineNanos > 0) {
          op.timedOut = true;
        }
      }
    }
    return expired;
  }

  /**
   * An RDMA work request will not complete: a user operation fails (as timed out when it was),
   * the loop's own (rendezvous read, local invalidate) goes back to the pool.
   */
  void failRdma(VerbsOp op, Throwable cause) {
    if (op.kind == VerbsOp.LOCAL_INV) {
      conn.ops.recycle(op); // the window keeps its payload until windows.destroy() in finish()
      return;
    }
    if (op.kind == VerbsOp.RNDV_READ) {
      if (op.local != null) {
        op.local.release();
        op.local = null;
      }
      conn.ops.recycle(op);
      return;
    }
    finish(op, null, op.timedOut ? timeout(op) : cause);
  }

  TransportTimeoutException timeout(VerbsOp op) {
    return new TransportTimeoutException("verbs " + (op.kind == VerbsOp.USER_READ ? "read"
        : "write") + " of " + op.length + " bytes on " + conn.remoteAddress()
        + " took longer than " + transport.conf().ioTimeoutMs()
        + " ms (hadoop.hpc.transport.io.timeout)");
  }

  /** Closing: requests fail now (one-sided operations when their work request is flushed). */
  void failRequests(TransportException closed) {
    for (int i = 0; i < active.capacity(); i++) {
      VerbsOp op = active.at(i);
      if (op != null && op.kind == VerbsOp.REQUEST) {
        finish(op, null, closed);
      }
    }
  }

  /** The queue pair is gone: whatever is still in flight fails. */
  void failAll(TransportException closed) {
    for (int i = 0; i < active.capacity(); i++) {
      VerbsOp op = active.at(i);
      if (op != null) {
        finish(op, null, op.timedOut ? timeout(op) : closed);
      }
    }
  }
}
