/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.verbs;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The verbs wire protocol: every SEND carries one {@value #BYTES}-byte header in its own
 * scatter/gather element (so payloads stay at offset 0 of pool buffers on both sides), followed
 * by an optional eager payload of at most {@link VerbsTransport#EAGER_SIZE} bytes.
 *
 * <pre>
 *  0  u8   type      (REQUEST .. CREDIT below)
 *  1  u8   flags     (RNDV_DONE: 1 = acknowledges a response, 0 = a request)
 *  2  u16  credits   receive credits returned to the peer (piggybacked on every message)
 *  4  i32  reqId     request id, chosen by the requester, unique among its requests in flight
 *  8  i32  length    payload bytes (rendezvous: bytes the receiver must RDMA READ)
 * 12  i32  rkey      rendezvous: rkey of the memory window the sender bound to exactly its
 *                     payload (remote read, this QP only); FAILURE: the failure's code
 *                     (RemoteFailureException, 0 = none)
 * 16  i64  address   rendezvous: virtual address of the sender's exposed payload;
 *                     REVOKE/REVOKE_ACK: the RemoteRegion key
 * 24  i64  reserved  0
 * </pre>
 *
 * Big-endian (ByteBuffer's default): C never looks inside. Connection private data (rdma_cm)
 * carries {@link #MAGIC}, {@link #VERSION} and the receive credits each side starts with.
 *
 * <p>Stateless and thread-safe.
 */
final class VerbsHeader {
  private VerbsHeader() {
  }

  static final int BYTES = 32;

  static final int MAGIC = 0x48504356; // "HPCV"
  static final int VERSION = 1;
  static final int PRIVATE_DATA_BYTES = 12;

  /** An eager request: payload follows the header. */
  static final byte REQUEST = 1;
  /** An eager response. */
  static final byte RESPONSE = 2;
  /** The handler failed: payload is the UTF-8 message, the code is in {@code rkey}. */
  static final byte FAILURE = 3;
  /** A large request: the receiver RDMA-READs (address, rkey, length), then sends RNDV_DONE. */
  static final byte REQUEST_RNDV = 4;
  /** A large response, same scheme. */
  static final byte RESPONSE_RNDV = 5;
  /**
   * The rendezvous payload was read (or abandoned): the sender invalidates the window, then
   * releases the payload.
   */
  static final byte RNDV_DONE = 6;
  /** Only returns credits. */
  static final byte CREDIT = 7;
  /** The sender unexposed the region whose key is in {@code address}: fail later accesses. */
  static final byte REVOKE = 8;
  /** The region key in {@code address} is revoked here. */
  static final byte REVOKE_ACK = 9;

  static void write(ByteBuffer slot, int at, byte type, int flags, int credits, int reqId,
      int length, int rkey, long address) {
    slot.put(at, type);
    slot.put(at + 1, (byte) flags);
    slot.putShort(at + 2, (short) credits);
    slot.putInt(at + 4, reqId);
    slot.putInt(at + 8, length);
    slot.putInt(at + 12, rkey);
    slot.putLong(at + 16, address);
    slot.putLong(at + 24, 0L);
  }

  static byte type(ByteBuffer slot, int at) {
    return slot.get(at);
  }

  static int flags(ByteBuffer slot, int at) {
    return slot.get(at + 1) & 0xff;
  }

  static int credits(ByteBuffer slot, int at) {
    return slot.getShort(at + 2) & 0xffff;
  }

  static int reqId(ByteBuffer slot, int at) {
    return slot.getInt(at + 4);
  }

  static int length(ByteBuffer slot, int at) {
    return slot.getInt(at + 8);
  }

  static int rkey(ByteBuffer slot, int at) {
    return slot.getInt(at + 12);
  }

  static long address(ByteBuffer slot, int at) {
    return slot.getLong(at + 16);
  }

  static byte[] privateData(int credits) {
    return ByteBuffer.allocate(PRIVATE_DATA_BYTES).putInt(MAGIC).putInt(VERSION).putInt(credits)
        .array();
  }

  /** The peer's initial credits from its private data, or -1 if it does not speak this. */
  static int creditsFromPrivateData(ByteBuffer record, int at, int len) {
    ByteBuffer b = record.duplicate().order(ByteOrder.BIG_ENDIAN);
    if (len < PRIVATE_DATA_BYTES || b.getInt(at) != MAGIC || b.getInt(at + 4) != VERSION) {
      return -1;
    }
    return b.getInt(at + 8);
  }
}
