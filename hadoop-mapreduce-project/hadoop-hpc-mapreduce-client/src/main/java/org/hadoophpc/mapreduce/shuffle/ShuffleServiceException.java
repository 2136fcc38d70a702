/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.shuffle;

import java.io.IOException;

import org.hadoophpc.mapreduce.shuffle.protocol.ShuffleError;

/** The hpc shuffle service refused a request; {@link #code()} says why (null: no code given). */
public class ShuffleServiceException extends IOException {
  private static final long serialVersionUID = 1L;
  private final ShuffleError code;

  public ShuffleServiceException(String message, Throwable cause) {
    super(message, cause);
    this.code = ShuffleError.of(message);
  }

  public ShuffleError code() {
    return code;
  }
}
