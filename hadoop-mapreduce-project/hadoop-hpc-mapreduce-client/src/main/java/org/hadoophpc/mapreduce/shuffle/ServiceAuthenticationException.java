/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.shuffle;

import java.io.IOException;

/**
 * What answered an open did not prove it is the hpc shuffle service holding the job token on the
 * port the reducer connected to: a wrong or replayed reply MAC, or an answer for another port (a
 * relay). Nothing of the answer is used.
 */
public class ServiceAuthenticationException extends IOException {
  private static final long serialVersionUID = 1L;

  public ServiceAuthenticationException(String message) {
    super(message);
  }
}
