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

  /**
   * One without a stack trace, for the operations a connection's own close fails together
   * (the closing thread's stack says nothing about them, and building one per parked operation
   * was a measurable share of closing a short HDFS stream).
   */
  public static ConnectionClosedException withoutStackTrace(String message) {
    return new Traceless(message);
  }

  private static final class Traceless extends ConnectionClosedException {
    private static final long serialVersionUID = 1L;

    Traceless(String message) {
      super(message);
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
      return this;
    }
  }
}
