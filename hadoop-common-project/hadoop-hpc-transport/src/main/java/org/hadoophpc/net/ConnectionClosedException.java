/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net;

/**
 * The connection closed (locally, by the peer, or because the peer died) before the operation
 * completed. Every operation pending on a connection fails with this when it closes.
 */
public class ConnectionClosedException extends TransportException {
  private static final long serialVersionUID = 1L;

  public ConnectionClosedException(String message) {
    super(message);
  }

  public ConnectionClosedException(String message, Throwable cause) {
    super(message, cause);
  }
}
