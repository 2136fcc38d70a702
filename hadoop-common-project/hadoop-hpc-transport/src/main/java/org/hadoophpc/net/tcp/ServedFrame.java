/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.tcp;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import org.hadoophpc.net.Buffer;

/**
 * A frame the transport answers by itself: read response, write ack, error, close. Pooled per
 * connection (see {@link TcpOutbound#queueServed}) so serving one-sided operations allocates
 * no frame objects. Confined to the connection's event-loop thread.
 */
final class ServedFrame implements OutboundFrame {
  private final TcpOutbound owner;
  private byte type;
  private long opId;
  private Buffer data;
  private ByteBuffer text;

  ServedFrame(TcpOutbound owner) {
    this.owner = owner;
  }

  /** Sets this (spare) frame up; {@code data}, if any, is owned by the frame from now on. */
  ServedFrame set(byte frameType, long id, Buffer payload, String errorText) {
    this.type = frameType;
    this.opId = id;
    this.data = payload;
    this.text = errorText == null ? null
        : ByteBuffer.wrap(errorText.getBytes(StandardCharsets.UTF_8));
    return this;
  }

  @Override
  public ByteBuffer start(ByteBuffer header) {
    ByteBuffer payload = data != null ? data.nio() : text;
    TcpFrame.encode(header, type, payload == null ? 0 : payload.remaining(), opId, 0, 0, 0);
    return payload;
  }

  @Override
  public void sent() {
    recycle();
  }

  @Override
  public void dropped() {
    recycle();
  }

  @Override
  public boolean obsolete() {
    return false;
  }

  private void recycle() {
    Buffer d = data;
    data = null;
    text = null;
    if (d != null) {
      d.release();
    }
    owner.recycle(this);
  }
}
