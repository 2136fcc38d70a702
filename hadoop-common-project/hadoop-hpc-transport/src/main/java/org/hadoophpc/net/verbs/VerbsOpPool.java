/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.verbs;

import java.util.ArrayDeque;

import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.SpareObjects;

/**
 * One rule: an operation object is reused only once nothing holds it any more. This is one
 * connection's pool of {@link VerbsOp}s, so a message costs no garbage: a request's object is
 * also the message that carries it, taken by the caller and given back by the loop when both
 * are over ({@link #recycleRequest}); the loop's own messages (responses, credits, rendezvous
 * reads and acknowledgements) come from a loop-owned pool ({@link #spare}, {@link #recycle}).
 * What is still allocated: one {@link VerbsOp} per one-sided read or write.
 */
final class VerbsOpPool {
  /** Loop-made message objects kept for reuse. */
  private static final int SPARE_MESSAGES = 64;

  /** Request objects for reuse (taken by callers, given back by the loop). */
  private final SpareObjects<VerbsOp> spareRequests;
  private final ArrayDeque<VerbsOp> spareMessages = new ArrayDeque<>();

  VerbsOpPool(int maxInflight) {
    this.spareRequests = new SpareObjects<>(maxInflight, () -> new VerbsOp(VerbsOp.REQUEST));
  }

  /** Any thread: an object for a new request. */
  VerbsOp request() {
    return spareRequests.take();
  }

  /** A request's operation and message are both over: keep the object for a later request. */
  void recycleRequest(VerbsOp op) {
    op.clear();
    spareRequests.give(op);
  }

  /** A loop-made operation of {@code kind}, from the spares when there is one. */
  VerbsOp spare(int kind) {
    VerbsOp op = spareMessages.poll();
    if (op == null) {
      return new VerbsOp(kind);
    }
    op.kind = kind;
    return op;
  }

  VerbsOp message(byte type, int flags, int reqId, Buffer payload) {
    VerbsOp op = spare(VerbsOp.MESSAGE);
    op.type = type;
    op.flags = flags;
    op.reqId = reqId;
    op.payload = payload;
    op.length = payload == null ? 0 : payload.readableBytes();
    return op;
  }

  /** A loop-made operation is over. */
  void recycle(VerbsOp op) {
    op.clear();
    if (spareMessages.size() < SPARE_MESSAGES) {
      spareMessages.push(op);
    }
  }
}
