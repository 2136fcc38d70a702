/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.verbs;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.atomic.AtomicBoolean;

import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.ConnectionClosedException;

/**
 * One rule: a caller's thread never touches the event loop's state. User operations and answers
 * cross to the loop through one connection's bounded queues, then the loop's ready queue (no
 * task object per call); what is still queued once the loop has ended is failed or released by
 * the caller's thread ({@link #discard()}).
 */
final class VerbsOutbox {
  private final VerbsConnection conn;
  private final VerbsEventLoop loop;
  /**
   * User operations for the loop. Cannot overflow: it holds only operations counted in the
   * connection's in-flight count ({@link VerbsInflight}), at most {@code max.inflight}.
   */
  private final ArrayBlockingQueue<VerbsOp> ops;
  /**
   * Claimed answers for the loop. Answers are bounded by the peer's window, not ours: beyond
   * this queue's room they go as tasks ({@link VerbsEventLoop#submit}).
   */
  private final ArrayBlockingQueue<VerbsAnswer> answers;
  /** In the loop's ready queue (or about to be). */
  final AtomicBoolean scheduled = new AtomicBoolean();

  VerbsOutbox(VerbsConnection conn, VerbsEventLoop loop, int maxInflight) {
    this.conn = conn;
    this.loop = loop;
    this.ops = new ArrayBlockingQueue<>(maxInflight);
    this.answers = new ArrayBlockingQueue<>(maxInflight + 8);
  }

  /** Any thread: a user operation, counted in flight, for the loop. */
  void enqueueOp(VerbsOp op) {
    if (!ops.offer(op)) {
      // Cannot happen while the bound in the queue's comment holds.
      throw new IllegalStateException("outbox of " + conn + " overflowed");
    }
    loop.schedule(conn);
  }

  /** Any thread: a claimed answer for the loop. */
  void enqueueAnswer(VerbsAnswer a) {
    if (answers.offer(a)) {
      loop.schedule(conn);
    } else if (!loop.submit(() -> conn.responder.onAnswer(a))) {
      discard(a);
    }
  }

  /** Loop: takes what other threads queued. */
  void drain() {
    scheduled.set(false);
    VerbsAnswer a;
    while ((a = answers.poll()) != null) {
      conn.responder.onAnswer(a);
    }
    VerbsOp op;
    while ((op = ops.poll()) != null) {
      if (op.kind == VerbsOp.REQUEST) {
        conn.startRequest(op);
      } else {
        conn.oneSided.started(op);
      }
    }
  }

  /** After the loop has ended: fails or releases what is still queued; any thread. */
  void discard() {
    VerbsAnswer a;
    while ((a = answers.poll()) != null) {
      discard(a);
    }
    VerbsOp op;
    while ((op = ops.poll()) != null) {
      Buffer p = op.payload;
      op.payload = null;
      if (p != null) {
        p.release();
      }
      conn.finishOp(op, null, new ConnectionClosedException("verbs transport is closed"));
    }
  }

  private static void discard(VerbsAnswer a) {
    Buffer r = a.response;
    a.response = null;
    if (r != null) {
      r.release(); // the requester fails with ConnectionClosed
    }
  }
}
