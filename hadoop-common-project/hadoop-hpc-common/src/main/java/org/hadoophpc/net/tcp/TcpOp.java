/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.tcp;

import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;

import org.hadoophpc.net.Buffer;

/**
 * One operation this side started (request, one-sided read or write): its own future (so an
 * operation costs one object, not two), the frame that starts it, and its slot in the
 * connection's table of operations in flight.
 *
 * <p>Created on the caller's thread, then confined to the connection's event-loop thread (it
 * crosses once, through the connection's outbox). Completed only on that thread, except when the
 * loop has already terminated.
 */
final class TcpOp extends CompletableFuture<Object> implements OutboundFrame {
  final TcpConnection connection;
  /** {@link TcpFrame#REQUEST}, {@link TcpFrame#READ_REQUEST} or {@link TcpFrame#WRITE_REQUEST}. */
  final byte type;
  /** Request (owned until sent), write source or read destination (borrowed from the caller). */
  private Buffer buffer;
  final long key;
  final long offset;
  final int length;
  final long deadline;
  /** Assigned by the loop when the operation takes a slot. */
  long id;
  int slot = -1;
  /** Counted in {@link TcpConnection#inFlight()} until retired. */
  boolean retired;
  private int savedPosition = -1;

  TcpOp(TcpConnection connection, byte type, Buffer buffer, long key, long offset, int length,
      long deadline) {
    this.connection = connection;
    this.type = type;
    this.buffer = buffer;
    this.key = key;
    this.offset = offset;
    this.length = length;
    this.deadline = deadline;
  }

  /** The read destination. */
  Buffer destination() {
    return buffer;
  }

  @Override
  public ByteBuffer start(ByteBuffer header) {
    switch (type) {
      case TcpFrame.REQUEST: {
        ByteBuffer b = buffer.nio();
        TcpFrame.encode(header, type, b.remaining(), id, 0, 0, 0);
        return b;
      }
      case TcpFrame.WRITE_REQUEST: {
        // The source stays the caller's: its position is put back once the bytes are out.
        ByteBuffer b = buffer.nio();
        savedPosition = b.position();
        TcpFrame.encode(header, type, b.remaining(), id, key, offset, 0);
        return b;
      }
      default:
        TcpFrame.encode(header, type, 0, id, key, offset, length);
        return null;
    }
  }

  @Override
  public void sent() {
    letGoOfBuffer();
  }

  @Override
  public void dropped() {
    letGoOfBuffer();
  }

  /** Before completion: a released request, a restored write source (caller's from now on). */
  private void letGoOfBuffer() {
    if (type == TcpFrame.REQUEST) {
      Buffer b = buffer;
      buffer = null;
      if (b != null) {
        b.release();
      }
    } else if (type == TcpFrame.WRITE_REQUEST && savedPosition >= 0) {
      buffer.nio().position(savedPosition);
      savedPosition = -1;
    }
  }

  @Override
  public boolean obsolete() {
    return isDone();
  }

  /** For messages: "request 7 to /10.0.0.2:4000", "read of 4096 bytes at 0 of region 3 ...". */
  String describe() {
    String what = switch (type) {
      case TcpFrame.REQUEST -> "request " + id;
      case TcpFrame.READ_REQUEST -> "read " + id + " of " + length + " bytes at " + offset
          + " of region " + key;
      default -> "write " + id + " at " + offset + " of region " + key;
    };
    return what + (type == TcpFrame.REQUEST ? " to " : " on ") + connection.peer();
  }
}
