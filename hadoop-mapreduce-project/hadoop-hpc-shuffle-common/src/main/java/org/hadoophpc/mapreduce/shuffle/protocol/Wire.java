/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.shuffle.protocol;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Framing shared by the hpc shuffle messages: every request starts with {@link #MAGIC}, the
 * protocol {@link #VERSION} and a type byte; strings are UTF-8 with a 16-bit length. Decoding
 * failures throw {@link ProtocolException} (never a runtime exception from the buffer).
 */
public final class Wire {
  /** "HPSH". */
  public static final int MAGIC = 0x48505348;
  /**
   * 3: a read may run on into the following maps of its session ({@link SessionLayout}); 2: open
   * names the NodeManager (its stock shuffle port) on both ways.
   */
  public static final byte VERSION = 3;

  public static final byte TYPE_OPEN = 1;
  public static final byte TYPE_READ = 2;
  public static final byte TYPE_CLOSE = 3;

  /** Upper bound of map ids in one open request (stock fetches at most 20 per host round). */
  public static final int MAX_MAPS = 4096;

  private Wire() {
  }

  static void putHeader(ByteBuffer out, byte type) {
    out.putInt(MAGIC).put(VERSION).put(type);
  }

  static final int HEADER_BYTES = 6;

  /** Reads the header; returns the message type. */
  public static byte type(ByteBuffer in) throws ProtocolException {
    try {
      int magic = in.getInt();
      if (magic != MAGIC) {
        throw new ProtocolException("not an hpc shuffle message (magic 0x"
            + Integer.toHexString(magic) + ")");
      }
      byte version = in.get();
      if (version != VERSION) {
        throw new ProtocolException("hpc shuffle protocol version " + version + " is not "
            + VERSION + ": NodeManager and job run different hadoop-hpc releases");
      }
      return in.get();
    } catch (BufferUnderflowException e) {
      throw new ProtocolException("truncated hpc shuffle message");
    }
  }

  static int utfBytes(String s) {
    return 2 + s.getBytes(StandardCharsets.UTF_8).length;
  }

  static void putUtf(ByteBuffer out, String s) {
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    if (b.length > 0xffff) {
      throw new IllegalArgumentException("string of " + b.length + " bytes is too long");
    }
    out.putShort((short) b.length).put(b);
  }

  static String getUtf(ByteBuffer in) {
    int n = in.getShort() & 0xffff;
    byte[] b = new byte[n];
    in.get(b);
    return new String(b, StandardCharsets.UTF_8);
  }
}
