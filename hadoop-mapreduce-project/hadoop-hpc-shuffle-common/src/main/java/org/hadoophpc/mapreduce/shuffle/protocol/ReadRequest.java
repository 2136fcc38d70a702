/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.shuffle.protocol;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;

/**
 * Reads {@code length} bytes of {@code session}'s stream ({@link SessionLayout}) from
 * {@code offset} of the partition of map number {@code map} (its index in the open request) on:
 * past that partition's end the read runs on into the next served maps' partitions. The
 * response is those bytes, no header; it may end early only where a partition starts, when the
 * service cannot read that partition (the reducer then reads on from there, and that read fails
 * for that map).
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
