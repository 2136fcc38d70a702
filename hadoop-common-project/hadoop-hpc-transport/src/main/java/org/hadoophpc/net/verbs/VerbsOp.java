/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.verbs;

import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.Completion;
import org.hadoophpc.net.InflightTable;

/**
 * One unit of work of a {@link VerbsConnection}: a message it posts (header plus optional eager
 * payload), a user's one-sided read or write, the RDMA READ that fetches a rendezvous payload, or
 * a user's request waiting for its response. Mutable; filled on the caller's thread for user
 * operations, then owned by the connection's event loop (it crosses once, through the
 * connection's outbox).
 */
final class VerbsOp extends InflightTable.Entry {
  static final int MESSAGE = 0;
  static final int USER_READ = 1;
  static final int USER_WRITE = 2;
  static final int RNDV_READ = 3;
  /** A user's request: its payload until sent, then its place among the operations in flight. */
  static final int REQUEST = 4;
  /** Binds a rendezvous window; posted just before the message announcing it. */
  static final int BIND = 5;
  /** Invalidates a rendezvous window whose transfer is over. */
  static final int LOCAL_INV = 6;

  /** What this is; changes only when a pooled object is reused. */
  int kind;

  // MESSAGE (and REQUEST, which is its own message)
  byte type;
  int flags;
  int reqId;
  /**
   * Eager payload sent after the header; released when the SEND completes (or will not happen).
   */
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
  long deadlineNanos;
  boolean timedOut;

  // USER_READ / USER_WRITE / REQUEST
  /** The caller's completion; null once called. */
  Completion<?> completion;
  /** REQUEST: the op is also the message carrying the request, queued or posted. */
  boolean messageLive;

  // RNDV_READ
  boolean forResponse;

  // MESSAGE announcing a rendezvous (the window to bind), LOCAL_INV (the window to invalidate)
  VerbsWindows.Window window;
  /** Tests only ({@link VerbsConnection#sendRaw}): credits written as is; -1 = the real ones. */
  int rawCredits = -1;

  VerbsOp(int kind) {
    this.kind = kind;
  }

  static VerbsOp control(byte type, long value) {
    VerbsOp op = new VerbsOp(MESSAGE);
    op.type = type;
    op.address = value;
    return op;
  }

  /** Forgets everything before the object is reused. */
  void clear() {
    type = 0;
    flags = 0;
    reqId = 0;
    payload = null;
    length = 0;
    rkey = 0;
    address = 0;
    local = null;
    localPosition = 0;
    remoteAddress = 0;
    remoteKey = 0;
    regionKey = 0;
    deadlineNanos = 0;
    timedOut = false;
    completion = null;
    clearInflight();
    messageLive = false;
    forResponse = false;
    window = null;
    rawCredits = -1;
  }

  boolean isUser() {
    return kind == USER_READ || kind == USER_WRITE;
  }

  boolean isDone() {
    return completion == null;
  }
}
