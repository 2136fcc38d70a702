/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.verbs;

import java.util.concurrent.atomic.AtomicInteger;

import org.hadoophpc.net.Completion;
import org.hadoophpc.net.Completions;
import org.hadoophpc.net.TransportException;
import org.hadoophpc.net.TransportTimeoutException;

/**
 * One rule: a user operation (request, one-sided read or write) ends exactly once, with its
 * result, a failure or a timeout, and gives back its slot and its place in
 * {@code max.inflight} then. This is one connection's table of operations in flight: by slot,
 * a request's id naming its slot, so a response finds its request without a map.
 *
 * <p>The in-flight count is taken by callers on any thread ({@link #acquire}); everything else
 * belongs to the transport's event loop, as the connection does.
 */
final class VerbsInflight {
  private final VerbsConnection conn;
  private final VerbsTransport transport;
  private final int maxInflight;
  /** Operations accepted from callers and not ended; any thread. */
  private final AtomicInteger inflight = new AtomicInteger();
  /** Requests and one-sided operations in flight, by slot; a request's id names its slot. */
  private final VerbsOp[] active;
  private final int[] freeActive;
  private int freeActiveCount;
  private int requestSequence;

  VerbsInflight(VerbsConnection conn, VerbsTransport transport, int maxInflight) {
    this.conn = conn;
    this.transport = transport;
    this.maxInflight = maxInflight;
    this.active = new VerbsOp[maxInflight];
    this.freeActive = new int[maxInflight];
    for (int i = maxInflight - 1; i >= 0; i--) {
      freeActive[freeActiveCount++] = i;
    }
  }

  /** Operations accepted and not ended; any thread. */
  int count() {
    return inflight.get();
  }

  /** Takes a place for a new operation; false when {@code max.inflight} are in flight. */
  boolean acquire() {
    while (true) {
      int n = inflight.get();
      if (n >= maxInflight) {
        return false;
      }
      if (inflight.compareAndSet(n, n + 1)) {
        return true;
      }
    }
  }

  /** Gives back a place taken by {@link #acquire} for an operation that never started. */
  void unacquire() {
    inflight.decrementAndGet();
  }

  /** Loop: {@code op} takes a slot. */
  void add(VerbsOp op) {
    int slot = freeActive[--freeActiveCount];
    active[slot] = op;
    op.slot = slot;
  }

  /** Loop: request {@code op} takes a slot and a new id naming it. */
  void addRequest(VerbsOp op) {
    add(op);
    int slot = op.slot;
    if (++requestSequence > (Integer.MAX_VALUE - slot) / maxInflight - 1) {
      requestSequence = 1;
    }
    op.reqId = requestSequence * maxInflight + slot;
  }

  /** The request op of {@code reqId}, or null (timed out, unknown). */
  VerbsOp pendingRequest(int reqId) {
    if (reqId <= 0) {
      return null;
    }
    VerbsOp op = active[reqId % maxInflight];
    return op != null && op.kind == VerbsOp.REQUEST && op.reqId == reqId ? op : null;
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
    if (op.slot >= 0) {
      active[op.slot] = null;
      freeActive[freeActiveCount++] = op.slot;
      op.slot = -1;
    }
    inflight.decrementAndGet();
    if (op.kind == VerbsOp.REQUEST && !op.messageLive) {
      conn.ops.recycleRequest(op);
    }
    if (failure == null) {
      Completions.succeed(c, result);
    } else {
      Completions.fail(c, failure);
    }
  }

  /**
   * Loop: fails requests past their deadline. Returns a one-sided operation past its deadline,
   * every such one marked timed out, or null when there is none.
   */
  VerbsOp expire(long now) {
    VerbsOp expired = null;
    for (VerbsOp op : active) {
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
      for (VerbsOp op : active) {
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
    for (VerbsOp op : active) {
      if (op != null && op.kind == VerbsOp.REQUEST) {
        finish(op, null, closed);
      }
    }
  }

  /** The queue pair is gone: whatever is still in flight fails. */
  void failAll(TransportException closed) {
    for (VerbsOp op : active) {
      if (op != null) {
        finish(op, null, op.timedOut ? timeout(op) : closed);
      }
    }
  }
}
