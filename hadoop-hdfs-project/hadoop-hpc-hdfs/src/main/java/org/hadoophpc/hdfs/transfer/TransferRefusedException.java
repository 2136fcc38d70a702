/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import java.io.IOException;

/** A DataNode's transfer endpoint refused a stream with a {@link TransferError}. */
final class TransferRefusedException extends IOException {
  private static final long serialVersionUID = 1L;
  private final TransferError error;

  TransferRefusedException(TransferError error, String message) {
    super(message);
    this.error = error;
  }

  TransferError error() {
    return error;
  }
}
