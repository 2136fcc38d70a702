/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.tcp;

import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.Completion;
import org.hadoophpc.net.InflightTable;
import org.hadoophpc.net.SpareObjects;

/**
 * One rule: a connection's operations in flight and their deadlines. A caller reserves a place
 * (at most {@code max.inflight}) and takes a pooled {@link TcpOp}; the operation gets its slot and
 * id when its frame is handed to the socket ({@link #add}, under the connection's lock), is
 * retired once when its answer arrives ({@link #take}), its deadline passes ({@link #expire}) or
 * the connection closes ({@link #failAll}), and goes back to the pool when both it and its frame
 * are over ({@link #recycle}). A late, repeated or forged answer id finds nothing.
 */
final class TcpInflight {
  private final InflightTable<TcpOp> table;
  private final SpareObjects<TcpOp> spare;
  private final long ioTimeoutNanos;

  TcpInflight(TcpConnection conn, int maxInflight, long ioTimeoutNanos) {
    this.table = new InflightTable<>(maxInflight, Long.MAX_VALUE);
    this.spare = new SpareObjects<>(maxInflight, () -> new TcpOp(conn));
    this.ioTimeoutNanos = ioTimeoutNanos;
  }

  int count() {
    return table.count();
  }

  /**
   * A started operation holding a reserved place, deadline one i/o timeout from now; null when
   * {@code max.inflight} are in flight (back-pressure). Any thread.
   */
  TcpOp start(byte type, Buffer buffer, long key, long offset, int length,
      Completion<?> completion) {
    if (!table.acquire()) {
      return null;
    }
    return spare.take().start(type, buffer, key, offset, length,
        System.nanoTime() + ioTimeoutNanos, completion);
  }

  /**
   * Requests {@code requests[0..count)} started into {@code ops}, as many as there are places
   * for (one deadline for all); returns how many. Any thread.
   */
  int startRequests(Buffer[] requests, int count, Completion<Buffer> completion, TcpOp[] ops) {
    return startRequests(requests, count, completion, null, ops);
  }

  /** As above, {@code requests[i]} completing through {@code completions[i]} when not null. */
  int startRequests(Buffer[] requests, int count, Completion<Buffer> completion,
      Completion<Buffer>[] completions, TcpOp[] ops) {
    long deadline = System.nanoTime() + ioTimeoutNanos;
    int n = 0;
    while (n < count && table.acquire()) {
      ops[n] = spare.take().start(TcpFrame.REQUEST, requests[n], 0, 0, 0, deadline,
          completions == null ? completion : completions[n]);
      n++;
    }
    return n;
  }

  /** {@code op}'s slot and id, before its frame is written: its answer may come at once. */
  void add(TcpOp op) {
    table.add(op);
  }

  /** The operation answered by {@code opId}, retired; null if unknown, late or of another type. */
  TcpOp take(long opId, byte expectedType) {
    if (opId <= 0) {
      return null;
    }
    TcpOp op = table.find(opId);
    if (op == null || (expectedType != 0 && op.type != expectedType)) {
      return null;
    }
    retire(op);
    return op;
  }

  /** Gives back {@code op}'s place once (also for one that never got a slot). */
  void retire(TcpOp op) {
    table.remove(op);
    if (!op.retired) {
      op.retired = true;
      table.release();
    }
  }

  /**
   * Fails the operations past their deadline at {@code now}, except one whose frame is still
   * being written: that one is returned (the connection must close), the rest stay.
   */
  TcpOp expire(long now, TcpOutbound outbound) {
    for (int i = 0; i < table.capacity(); i++) {
      TcpOp op = table.at(i);
      if (op != null && now - op.deadline >= 0) {
        if (outbound.writing(op)) {
          return op;
        }
        retire(op);
        op.finish(null, op.timedOut(ioTimeoutNanos));
      }
    }
    return null;
  }

  /** Fails every operation: {@code timedOut} with its timeout, the others as closed. */
  void failAll(String reason, Throwable cause, TcpOp timedOut) {
    for (int i = 0; i < table.capacity(); i++) {
      TcpOp op = table.at(i);
      if (op != null) {
        retire(op);
        op.finish(null, op == timedOut ? op.timedOut(ioTimeoutNanos) : op.closed(reason, cause));
      }
    }
  }

  /** An operation and its frame are both over: kept for a later call. */
  void recycle(TcpOp op) {
    op.clear();
    spare.give(op);
  }
}
