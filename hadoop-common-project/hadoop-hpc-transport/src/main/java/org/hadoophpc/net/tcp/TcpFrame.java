/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.tcp;

import java.nio.ByteBuffer;

/**
 * The tcp transport's wire format: every frame is a fixed {@link #HEADER_BYTES}-byte header,
 * big-endian, followed by {@code payload length} bytes.
 *
 * <pre>
 * offset size field
 *    0    1   frame type (below)
 *    1    1   protocol version ({@link #VERSION})
 *    2    2   reserved, 0
 *    4    4   payload length: bytes after the header, 0 .. max message size
 *    8    8   operation id: chosen by the side starting the operation, echoed by the answer
 *   16    8   region key    (READ_REQUEST, WRITE_REQUEST; else 0)
 *   24    8   region offset (READ_REQUEST, WRITE_REQUEST; else 0)
 *   32    4   read length   (READ_REQUEST; else 0)
 *   36    4   error code    (ERROR: the handler's code, RemoteFailureException; else 0)
 * </pre>
 *
 * <p>Frame types, with their payload:
 * <ul>
 * <li>{@link #REQUEST}: the message, for the peer's {@code RequestHandler};
 * <li>{@link #RESPONSE}: the handler's answer;
 * <li>{@link #ERROR}: UTF-8 text, and the code in the header; fails the operation with that id
 *     (handler failure with its code, or the transport's own refusal, code 0: bad region,
 *     bounds);
 * <li>{@link #READ_REQUEST}: none; asks for {@code read length} bytes at {@code region offset}
 *     of the exposed region {@code region key};
 * <li>{@link #READ_RESPONSE}: the bytes read;
 * <li>{@link #WRITE_REQUEST}: bytes to store at {@code region offset} of {@code region key};
 * <li>{@link #WRITE_ACK}: none; the bytes are stored;
 * <li>{@link #CLOSE}: none, operation id 0; the sender closes after it (a peer that just
 *     disappears is detected by EOF or a socket error instead).
 * </ul>
 *
 * <p>One header layout for all types (rather than one class per type) because the types differ
 * only in which of the three region fields they use; 40 bytes is under 1 % of the smallest
 * message the transport is built for (4 KiB). Stateless; thread-safe.
 */
final class TcpFrame {
  static final int HEADER_BYTES = 40;
  static final byte VERSION = 1;

  static final byte REQUEST = 1;
  static final byte RESPONSE = 2;
  static final byte ERROR = 3;
  static final byte READ_REQUEST = 4;
  static final byte READ_RESPONSE = 5;
  static final byte WRITE_REQUEST = 6;
  static final byte WRITE_ACK = 7;
  static final byte CLOSE = 8;

  private TcpFrame() {
  }

  /** Fills {@code header} (a {@link #HEADER_BYTES}-byte buffer) and flips it for writing. */
  static void encode(ByteBuffer header, byte type, int payloadLength, long opId, long key,
      long offset, int readLength) {
    encode(header, type, payloadLength, opId, key, offset, readLength, 0);
  }

  /** An {@link #ERROR} header with the failure's code. */
  static void encodeError(ByteBuffer header, int payloadLength, long opId, int code) {
    encode(header, ERROR, payloadLength, opId, 0, 0, 0, code);
  }

  private static void encode(ByteBuffer header, byte type, int payloadLength, long opId, long key,
      long offset, int readLength, int code) {
    header.clear();
    header.put(type).put(VERSION).putShort((short) 0).putInt(payloadLength).putLong(opId)
        .putLong(key).putLong(offset).putInt(readLength).putInt(code);
    header.flip();
  }

  static byte type(ByteBuffer header) {
    return header.get(0);
  }

  static byte version(ByteBuffer header) {
    return header.get(1);
  }

  static int payloadLength(ByteBuffer header) {
    return header.getInt(4);
  }

  static long opId(ByteBuffer header) {
    return header.getLong(8);
  }

  static long key(ByteBuffer header) {
    return header.getLong(16);
  }

  static long offset(ByteBuffer header) {
    return header.getLong(24);
  }

  static int readLength(ByteBuffer header) {
    return header.getInt(32);
  }

  static int errorCode(ByteBuffer header) {
    return header.getInt(36);
  }

  static String name(byte type) {
    return switch (type) {
      case REQUEST -> "request";
      case RESPONSE -> "response";
      case ERROR -> "error";
      case READ_REQUEST -> "read request";
      case READ_RESPONSE -> "read response";
      case WRITE_REQUEST -> "write request";
      case WRITE_ACK -> "write ack";
      case CLOSE -> "close";
      default -> "unknown frame type " + type;
    };
  }
}
