/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import java.nio.ByteBuffer;

/**
 * The byte-stream protocol HDFS DataTransfer runs over a transport {@code Connection}, which
 * only knows requests and answers started by the client.
 *
 * <p>Requests (client to DataNode) start with an 8-byte header: type, 3 reserved bytes, a
 * sequence number. Upstream DATA and downstream DATA/FIN messages are numbered from 0 in each
 * direction and delivered to the reader in that order: a transport may complete a small
 * message before a larger one sent earlier (verbs: eager vs rendezvous).
 * <ul>
 *   <li>{@link #HELLO}: magic, version, role, the TCP transfer port the client meant. Answered
 *       {@link #OK} with the windows, or failed with an {@link TransferError} code.</li>
 *   <li>{@link #DATA}: upstream stream bytes. Answered at once with {@link #ACK}; the client
 *       keeps at most {@code window} DATA messages the DataNode has not consumed.</li>
 *   <li>{@link #PULL}: a place for downstream bytes, parked by the DataNode until it writes
 *       ({@link #DATA}), it owes credit or waited {@code park.max} ({@link #EMPTY}), or it
 *       closes ({@link #FIN}). Flag {@link #RIDES}: posted together with a DATA message,
 *       so it does not hurry the ACKs the DataNode holds (a PULL posted alone does).</li>
 * </ul>
 * Answers start with a 16-byte header: type, 3 reserved bytes, a sequence number, then the
 * number of DATA messages the DataNode has consumed so far (the client's upstream credit).
 */
final class TransferWire {
  private TransferWire() {
  }

  static final int MAGIC = 0x48444654; // "HDFT"
  static final short VERSION = 1;

  static final byte HELLO = 1;
  static final byte DATA = 2;
  static final byte PULL = 3;

  static final byte OK = 1;
  static final byte ACK = 2;
  static final byte EMPTY = 3;
  static final byte FIN = 4;
  /**
   * Several packets of one block in one answer (tcp, to a client whose HELLO set
   * {@link #TAKES_PACKETS}): {@code int k}, then {@code k} pairs {@code (int headLength, int
   * dataLength)}, the {@code k} heads (a packet's header and checksums), then the {@code k}
   * packets' data, contiguous in the block file and so sent by one {@code sendfile}. The
   * client hands the bytes on in packet order: head 1, data 1, head 2, data 2, ...
   */
  static final byte PACKETS = 5;
  /** Most packets in a {@link #PACKETS} answer. */
  static final int MAX_PACKETS = 1024;
  /** The flags byte of a HELLO: the client takes {@link #PACKETS} answers. */
  static final byte TAKES_PACKETS = 1;
  /** The flags byte of a PULL: it rides with a DATA message. */
  static final byte RIDES = 1;

  static final int REQUEST_HEADER = 8;
  static final int ANSWER_HEADER = 16;
  static final int HELLO_BYTES = REQUEST_HEADER + 4 + 2 + 1 + 4;
  static final int OK_BYTES = ANSWER_HEADER + 4 + 4 + 4;

  static void requestHeader(ByteBuffer b, byte type, int seq) {
    requestHeader(b, type, (byte) 0, seq);
  }

  static void requestHeader(ByteBuffer b, byte type, byte flags, int seq) {
    b.put(type).put(flags).putShort((short) 0).putInt(seq);
  }

  /** The flags byte of the request header at {@code b}'s position. */
  static byte flags(ByteBuffer b) {
    return b.get(b.position() + 1);
  }

  static void answerHeader(ByteBuffer b, byte type, int seq, long consumed) {
    b.put(type).put((byte) 0).putShort((short) 0).putInt(seq).putLong(consumed);
  }

  /** The sequence number of the header at {@code b}'s position (DATA and FIN messages). */
  static int seq(ByteBuffer b) {
    return b.getInt(b.position() + 4);
  }

  /** The type of the header at {@code b}'s position; the position moves past the header. */
  static byte readRequestHeader(ByteBuffer b) {
    byte type = b.get();
    b.position(b.position() + REQUEST_HEADER - 1);
    return type;
  }
}
