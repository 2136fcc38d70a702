/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.shuffle.protocol;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;

/** Ends a fetch session: the service closes its files and drops its read-ahead. Empty answer. */
public record CloseRequest(long session) {
  public static final int BYTES = Wire.HEADER_BYTES + 8;

  public void encode(ByteBuffer out) {
    Wire.putHeader(out, Wire.TYPE_CLOSE);
    out.putLong(session);
  }

  public static CloseRequest decode(ByteBuffer in) throws ProtocolException {
    try {
      return new CloseRequest(in.getLong());
    } catch (BufferUnderflowException e) {
      throw new ProtocolException("truncated close request");
    }
  }
}
