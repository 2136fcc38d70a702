/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.tcp;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.Completion;
import org.hadoophpc.net.Completions;
import org.hadoophpc.net.ConnectionClosedException;
import org.hadoophpc.net.InflightTable;
import org.hadoophpc.net.TransportTimeoutException;

/**
 * One operation this side started (request, one-sided read or write): the caller's
 * {@link Completion}, the frame that starts it, and its slot in the connection's
 * {@link InflightTable} of operations in flight.
 *
 * <p>Pooled per connection ({@link TcpConnection#recycle(TcpOp)}): an operation object is
 * reused once both of its uses are over, the operation (completed, its completion called) and
 * the frame (sent or dropped; a timed-out request may still sit in the write queue). Late
 * answers cannot reach a reused object: they are matched by the id the table gave, whose upper
 * part is a generation.
 *
 * <p>Filled on the caller's thread, then confined to the connection's event-loop thread (it
 * crosses once, through the connection's outbox). Completed only on that thread, except when
 * the loop has already terminated.
 */
final class TcpOp extends InflightTable.Entry implements OutboundFrame {
  final TcpConnection connection;
  /** {@link TcpFrame#REQUEST}, {@link TcpFrame#READ_REQUEST} or {@link TcpFrame#WRITE_REQUEST}. */
  byte type;
  /** Request (owned until sent), write source or read destination (borrowed from the caller). */
  private Buffer buffer;
  long key;
  long offset;
  int length;
  long deadline;
  /** Counted in {@link TcpConnection#inFlight()} until retired. */
  boolean retired;
  private int savedPosition = -1;
  /** The caller's completion; null once called (the operation is done). */
  private Completion<?> completion;
  /** The frame is in the outbox, the write queue or being written. */
  private boolean framePending;

  TcpOp(TcpConnection connection) {
    this.connection = connection;
  }

  /** Sets a pooled operation up for a new call; any thread (before it enters the outbox). */
  TcpOp start(byte frameType, Buffer buf, long regionKey, long regionOffset, int len,
      long deadlineNanos, Completion<?> c) {
    this.type = frameType;
    this.buffer = buf;
    this.key = regionKey;
    this.offset = regionOffset;
    this.length = len;
    this.deadline = deadlineNanos;
    this.completion = c;
    this.framePending = true;
    return this;
  }

  /** Forgets the last call before going back to the pool. */
  void clear() {
    buffer = null;
    completion = null;
    clearInflight();
    retired = false;
    savedPosition = -1;
    framePending = false;
  }

  boolean isDone() {
    return completion == null;
  }

  /** The read destination. */
  Buffer destination() {
    return buffer;
  }

  /**
   * Ends the operation, with {@code result} or, when not null, {@code failure} (built before: it
   * may describe this op): the object is freed first, then the completion is called.
   */
  void finish(Object result, Throwable failure) {
    Completion<?> c = completion;
    if (c == null) {
      return;
    }
    completion = null;
    recycleIfIdle();
    if (failure == null) {
      Completions.succeed(c, result);
    } else {
      connection.metrics().failed(failure);
      Completions.fail(c, failure);
    }
  }

  private void recycleIfIdle() {
    if (!framePending) {
      connection.recycle(this);
    }
  }

  @Override
  public ByteBuffer start(ByteBuffer header) {
    switch (type) {
      case TcpFrame.REQUEST: {
        ByteBuffer b = buffer.nio();
        TcpFrame.encode(header, type, b.remaining(), inflightId(), 0, 0, 0);
        return b;
      }
      case TcpFrame.WRITE_REQUEST: {
        // The source stays the caller's: its position is put back once the bytes are out.
        ByteBuffer b = buffer.nio();
        savedPosition = b.position();
        TcpFrame.encode(header, type, b.remaining(), inflightId(), key, offset, 0);
        return b;
      }
      default:
        TcpFrame.encode(header, type, 0, inflightId(), key, offset, length);
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

  /**
   * The frame is over: a released request, a restored write source (caller's from now on);
   * the object goes back to the pool if the operation is over too.
   */
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
    framePending = false;
    if (completion == null) {
      connection.recycle(this);
    }
  }

  @Override
  public boolean obsolete() {
    return isDone();
  }

  /** This operation's failure when it outlived {@code ioTimeoutNanos}. */
  TransportTimeoutException timedOut(long ioTimeoutNanos) {
    return new TransportTimeoutException(describe() + " timed out after "
        + TimeUnit.NANOSECONDS.toMillis(ioTimeoutNanos) + " ms (hadoop.hpc.transport.io.timeout)");
  }

  /** This operation's failure when its connection closed for {@code reason}. */
  ConnectionClosedException closed(String reason, Throwable cause) {
    String msg = describe() + ": connection closed (" + reason + ")";
    return cause == null ? ConnectionClosedException.withoutStackTrace(msg)
        : new ConnectionClosedException(msg, cause);
  }

  /** For messages: "request 7 to /10.0.0.2:4000", "read of 4096 bytes at 0 of region 3 ...". */
  String describe() {
    String what = switch (type) {
      case TcpFrame.REQUEST -> "request " + inflightId();
      case TcpFrame.READ_REQUEST -> "read " + inflightId() + " of " + length + " bytes at " + offset
          + " of region " + key;
      default -> "write " + inflightId() + " at " + offset + " of region " + key;
    };
    return what + (type == TcpFrame.REQUEST ? " to " : " on ") + connection.peer();
  }
}
