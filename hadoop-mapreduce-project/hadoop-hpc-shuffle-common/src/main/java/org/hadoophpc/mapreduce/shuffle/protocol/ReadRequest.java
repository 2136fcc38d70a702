/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.shuffle.protocol;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;

/**
 * Reads {@code length} bytes at {@code offset} of the partition of map number {@code map} (its
 * index in the open request) in {@code session}. The response is exactly those bytes, no header.
 */
public record ReadRequest(long session, int map, long offset, int length) {
  public static final int BYTES = Wire.HEADER_BYTES + 8 + 4 + 8 + 4;

  public void encode(ByteBuffer out) {
    Wire.putHeader(out, Wire.TYPE_READ);
    out.putLong(session).putInt(map).putLong(offset).putInt(length);
  }

  public static ReadRequest decode(ByteBuffer in) throws ProtocolException {
    try {
      ReadRequest r = new ReadRequest(in.getLong(), in.getInt(), in.getLong(), in.getInt());
      if (r.map < 0 || r.offset < 0 || r.length <= 0) {
        throw new ProtocolException("bad read request " + r);
      }
      return r;
    } catch (BufferUnderflowException e) {
      throw new ProtocolException("truncated read request");
    }
  }
}
