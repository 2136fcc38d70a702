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
   * 4: the open is a mutual proof over fresh nonces: the request carries the reducer's nonce and
   * the hpc port it connected to, the answer the service's nonce and a MAC over both nonces,
   * both ports, the chunk size and the request's hash; the session id is derived from the
   * nonces, never sent ({@code ShuffleAuth}). 3: a read may run on into the following maps of
   * its session ({@link SessionLayout}); 2: open names the NodeManager (its stock shuffle port)
   * on both ways.
   */
  public static final byte VERSION = 4;

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
        throw new VersionMismatchException(version);
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

  /** Bytes of a nonce (random, fresh per open on both sides). */
  public static final int NONCE_BYTES = 16;

  /** A copy of {@code nonce}, which must be {@link #NONCE_BYTES} long (records keep copies). */
  static byte[] nonceCopy(byte[] nonce) {
    if (nonce.length != NONCE_BYTES) {
      throw new IllegalArgumentException("nonce of " + nonce.length + " bytes");
    }
    return nonce.clone();
  }

  static byte[] getNonce(ByteBuffer in) {
    byte[] b = new byte[NONCE_BYTES];
    in.get(b);
    return b;
  }

  static void putNonce(ByteBuffer out, byte[] nonce) {
    if (nonce.length != NONCE_BYTES) {
      throw new IllegalArgumentException("nonce of " + nonce.length + " bytes, not "
          + NONCE_BYTES);
    }
    out.put(nonce);
  }

  static String getUtf(ByteBuffer in) {
    int n = in.getShort() & 0xffff;
    byte[] b = new byte[n];
    in.get(b);
    return new String(b, StandardCharsets.UTF_8);
  }
}
