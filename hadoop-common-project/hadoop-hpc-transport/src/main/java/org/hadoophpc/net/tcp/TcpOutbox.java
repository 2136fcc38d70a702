/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.tcp;

import java.util.concurrent.ArrayBlockingQueue;

/**
 * One rule: how a caller's frame leaves the caller. When the connection is idle (nothing queued
 * here, nothing being written) and its lock is free, the caller writes the frame itself
 * ({@link TcpWriteLock}); otherwise the frame joins this bounded queue, which the loop drains in
 * order, so frames leave in the order they were handed over. Frames handed over together go in
 * one gathering write, or into the queue together.
 *
 * <p>The queue cannot overflow: it holds at most {@code max.inflight} operations (each took its
 * in-flight place first) plus at most {@code max.inflight} answers (the loop stops reading
 * requests while that many are unanswered).
 */
final class TcpOutbox {
  private final TcpConnection conn;
  private final TcpWriteLock io;
  private final TcpInflight inflight;
  private final ArrayBlockingQueue<OutboundFrame> queue;

  TcpOutbox(TcpConnection conn, TcpWriteLock io, TcpInflight inflight, int maxInflight) {
    this.conn = conn;
    this.io = io;
    this.inflight = inflight;
    this.queue = new ArrayBlockingQueue<>(2 * maxInflight + 8);
  }

  boolean isEmpty() {
    return queue.isEmpty();
  }

  /** The oldest queued frame, or null; the loop's. */
  OutboundFrame poll() {
    return queue.poll();
  }

  /** {@code frame} leaves now, written on this thread, or through the queue; any thread. */
  void send(OutboundFrame frame) {
    if (!(queue.isEmpty() && io.tryWrite(frame, conn))) {
      enqueue(frame);
    }
  }

  /** The first {@code count} of {@code frames} leave together, in order; any thread. */
  void send(OutboundFrame[] frames, int count) {
    if (count > 0 && !(queue.isEmpty() && io.tryWrite(frames, count, conn))) {
      for (int i = 0; i < count; i++) {
        enqueue(frames[i]);
      }
    }
  }

  private void enqueue(OutboundFrame frame) {
    if (!queue.offer(frame)) {
      // Cannot happen while the bounds in the class comment hold.
      throw new IllegalStateException("outbox of connection to " + conn.peer() + " overflowed");
    }
    conn.schedule();
  }

  /** Drops whatever is (or raced) into the queue of a closed connection; any thread. */
  void fail(String reason, Throwable cause) {
    OutboundFrame f;
    while ((f = queue.poll()) != null) {
      f.dropped();
      if (f instanceof TcpOp op) {
        inflight.retire(op);
        op.finish(null, op.closed(reason, cause));
      }
    }
  }
}
