/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.shuffle;

import java.io.IOException;

/** No hpc shuffle service answered on any of a host's ports. */
public class ServiceUnreachableException extends IOException {
  private static final long serialVersionUID = 1L;

  public ServiceUnreachableException(String message, Throwable cause) {
    super(message, cause);
  }
}
