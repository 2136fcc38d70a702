/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.verbs;

import java.util.Objects;

import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.Completion;
import org.hadoophpc.net.Completions;
import org.hadoophpc.net.RemoteRegion;
import org.hadoophpc.net.TransportException;

/**
 * One rule: a one-sided read or write touches only bytes of a region the peer exposed and
 * still exposes. The range is checked against the region and against wrapping around the
 * address space before anything is posted (a remote access error would move the whole queue
 * pair to error), and operations on a region the peer revoked fail here. This is one
 * connection's RDMA READ and WRITE of the peer's {@link RemoteRegion}s, from the caller's
 * thread ({@link #read}, {@link #write}) to the loop ({@link #started}).
 */
final class VerbsOneSided {
  private final VerbsConnection conn;
  private final VerbsTransport transport;
  private final VerbsInflight inflightOps;
  private final VerbsInbound inbound;
  private final long ioTimeoutNanos;

  VerbsOneSided(VerbsConnection conn, VerbsInflight inflightOps, VerbsInbound inbound,
      long ioTimeoutNanos) {
    this.conn = conn;
    this.transport = conn.transport();
    this.inflightOps = inflightOps;
    this.inbound = inbound;
    this.ioTimeoutNanos = ioTimeoutNanos;
  }

  boolean read(RemoteRegion region, long offset, int length, Buffer destination,
      Completion<Void> completion) {
    conn.checkSize(length);
    if (destination.nio().remaining() < length) {
      throw new IllegalArgumentException("destination has " + destination.nio().remaining()
          + " bytes left, " + length + " to read");
    }
    return start(VerbsOp.USER_READ, destination, destination.nio().position(), length,
        region, offset, completion);
  }

  boolean write(Buffer source, RemoteRegion region, long offset, Completion<Void> completion) {
    int length = source.nio().remaining();
    conn.checkSize(length);
    return start(VerbsOp.USER_WRITE, source, source.nio().position(), length, region,
        offset, completion);
  }

  private boolean start(int kind, Buffer local, int position, int length,
      RemoteRegion region, long offset, Completion<Void> completion) {
    Objects.requireNonNull(completion, "completion");
    if (local.pool() != transport.bufferPool()) {
      throw new IllegalArgumentException("one-sided transfers need a buffer of this transport's"
          + " pool (registered memory): " + local);
    }
    if (!conn.isOpen()) {
      Completions.fail(completion, conn.closedNow());
      return true;
    }
    if (offset < 0 || length < 0 || offset > region.length() - length) {
      // Checked here: a remote access error would move the whole QP to error.
      Completions.fail(completion, new TransportException("verbs "
          + (kind == VerbsOp.USER_READ ? "read" : "write") + " of [" + offset + ", "
          + (offset + length) + ") is outside the " + region.length() + "-byte region of "
          + conn.remoteAddress()));
      return true;
    }
    if (VerbsConnection.wraps(region.address(), offset)
        || VerbsConnection.wraps(region.address() + offset, length)) {
      Completions.fail(completion, new TransportException("verbs "
          + (kind == VerbsOp.USER_READ ? "read" : "write") + " at offset " + offset + " of "
          + length + " bytes wraps around the address space from the region's base "
          + Long.toUnsignedString(region.address(), 16) + " on " + conn.remoteAddress()));
      return true;
    }
    if (length == 0) {
      Completions.succeed(completion, null); // nothing to move; no work request
      return true;
    }
    if (!inflightOps.acquire()) {
      return false;
    }
    VerbsOp op = new VerbsOp(kind);
    op.local = local;
    op.localPosition = position;
    op.length = length;
    op.remoteAddress = region.address() + offset;
    op.remoteKey = (int) region.key();
    op.regionKey = region.key();
    op.completion = completion;
    op.deadlineNanos = System.nanoTime() + ioTimeoutNanos;
    conn.outbox.enqueueOp(op);
    return true;
  }

  /** Loop: the operation leaves the outbox. */
  void started(VerbsOp op) {
    if (conn.state != VerbsConnection.OPEN) {
      conn.finishOp(op, null, conn.closeCauseOrDefault());
      return;
    }
    if (inbound.revoked(op.regionKey)) {
      conn.finishOp(op, null, new TransportException("verbs " + (op.kind == VerbsOp.USER_READ
          ? "read" : "write") + " of a region " + conn.remoteAddress()
          + " no longer exposes (unexposed)"));
      return;
    }
    inflightOps.add(op);
    conn.queueRdma(op);
    conn.pump();
  }
}
