/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

/** Why a DataNode refused a transfer connection: codes on the wire, never parsed from text. */
enum TransferError {
  /** The accept queue or registered memory is full: the client uses TCP for this connection. */
  BUSY(1),
  /** The client speaks another version of {@link TransferWire}. */
  VERSION(2),
  /** The first request was not a HELLO of this protocol. */
  NOT_HDFS(3),
  /** A request broke the stream's rules (window, order, unknown type). */
  PROTOCOL(4),
  /** The DataNode's transfer endpoint is stopping. */
  STOPPING(5);

  final int code;

  TransferError(int code) {
    this.code = code;
  }

  /** The error of {@code code}, or null for a code this version does not know. */
  static TransferError of(int code) {
    for (TransferError e : values()) {
      if (e.code == code) {
        return e;
      }
    }
    return null;
  }
}
