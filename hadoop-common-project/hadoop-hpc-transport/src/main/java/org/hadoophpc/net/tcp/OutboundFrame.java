/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.tcp;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.WritableByteChannel;

/**
 * Something a {@link TcpConnection} writes as one frame: an operation this side started
 * ({@link TcpOp}), a handler's answer ({@link TcpResponder}) or a frame the transport produces
 * itself ({@link ServedFrame}). An interface rather than a base class because {@link TcpOp} is
 * its own future. All methods run on the connection's event-loop thread.
 */
interface OutboundFrame {

  /** Encodes the header into {@code header}; returns the payload to follow it, or null. */
  ByteBuffer start(ByteBuffer header);

  /**
   * After the header and payload went out: writes what follows them straight from a file
   * (a file answer), as much as {@code out} takes now. Returns true when nothing is left.
   */
  default boolean transferRest(WritableByteChannel out) throws IOException {
    return true;
  }

  /** After {@link #start}: bytes from a file follow the payload ({@link #transferRest}). */
  default boolean followsFromFile() {
    return false;
  }

  /** The frame went out completely. */
  void sent();

  /** The frame will not go out (or not completely): connection closed or frame obsolete. */
  void dropped();

  /** True when the frame need not be sent any more (its operation already completed). */
  boolean obsolete();
}
