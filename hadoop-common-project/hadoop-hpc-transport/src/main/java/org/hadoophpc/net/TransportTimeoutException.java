/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net;

/** An operation did not complete within its timeout ({@code hadoop.hpc.transport.io.timeout}). */
public class TransportTimeoutException extends TransportException {
  private static final long serialVersionUID = 1L;

  public TransportTimeoutException(String message) {
    super(message);
  }
}
