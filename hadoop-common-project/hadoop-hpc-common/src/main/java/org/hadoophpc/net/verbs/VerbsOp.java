/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.verbs;

import java.util.concurrent.CompletableFuture;

import org.hadoophpc.net.Buffer;

/**
 * One unit of work a {@link VerbsConnection} posts to its send queue: a message (header plus
 * optional eager payload), a user's one-sided read or write, or the RDMA READ that fetches a
 * rendezvous payload. Mutable; owned by the connection's event loop.
 */
final class VerbsOp {
  static final int MESSAGE = 0;
  static final int USER_READ = 1;
  static final int USER_WRITE = 2;
  static final int RNDV_READ = 3;

  final int kind;

  // MESSAGE
  byte type;
  int flags;
  int reqId;
  /** Eager payload sent after the header; released when the SEND completes. */
  Buffer payload;
  int length;
  int rkey;
  long address;

  // USER_READ / USER_WRITE / RNDV_READ
  /** Local memory: user's destination/source, or the pool buffer a rendezvous lands in. */
  Buffer local;
  int localPosition;
  long remoteAddress;
  int remoteKey;
  /** The whole RemoteRegion key (exposure id and rkey), checked against revocations. */
  long regionKey;
  CompletableFuture<Void> future;
  long deadlineNanos;
  boolean timedOut;

  // RNDV_READ
  boolean forResponse;

  VerbsOp(int kind) {
    this.kind = kind;
  }

  static VerbsOp message(byte type, int flags, int reqId, Buffer payload) {
    VerbsOp op = new VerbsOp(MESSAGE);
    op.type = type;
    op.flags = flags;
    op.reqId = reqId;
    op.payload = payload;
    op.length = payload == null ? 0 : payload.readableBytes();
    return op;
  }

  static VerbsOp rendezvous(byte type, int reqId, int length, int rkey, long address) {
    VerbsOp op = new VerbsOp(MESSAGE);
    op.type = type;
    op.reqId = reqId;
    op.length = length;
    op.rkey = rkey;
    op.address = address;
    return op;
  }

  static VerbsOp control(byte type, long value) {
    VerbsOp op = new VerbsOp(MESSAGE);
    op.type = type;
    op.address = value;
    return op;
  }

  boolean isUser() {
    return kind == USER_READ || kind == USER_WRITE;
  }
}
