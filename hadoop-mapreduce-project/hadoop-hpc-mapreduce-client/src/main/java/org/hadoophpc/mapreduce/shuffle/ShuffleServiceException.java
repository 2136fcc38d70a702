/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.shuffle;

import java.io.IOException;

import org.hadoophpc.mapreduce.shuffle.protocol.ShuffleError;

/** The hpc shuffle service refused a request; {@link #code()} says why. */
public class ShuffleServiceException extends IOException {
  private static final long serialVersionUID = 1L;
  private final ShuffleError code;

  /**
   * @param code   why (from the failure's wire code)
   * @param detail the service's text (or the client's, for a refusal it found itself)
   */
  public ShuffleServiceException(ShuffleError code, String detail, Throwable cause) {
    super(code + ": " + detail, cause);
    this.code = code;
  }

  public ShuffleError code() {
    return code;
  }
}
