/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net;

/**
 * An operation failed on the peer: its request handler failed the request with a {@link #code()}
 * and a text ({@link Connection#fail(long, int, String)}), or the peer's transport refused the
 * operation itself (no handler, a bad region, bounds: code {@link #NO_CODE}). The code travels
 * as a number in the failure frame of either transport; its meaning belongs to the protocol on
 * top (the shuffle's {@code ShuffleError}), so callers switch on it instead of parsing text.
 */
public class RemoteFailureException extends TransportException {
  private static final long serialVersionUID = 1L;

  /** The peer's transport failed the operation, or its handler gave no code. */
  public static final int NO_CODE = 0;

  private final int code;
  private final String detail;

  /**
   * @param what   the operation, as the requester names it (e.g. "request to host:port")
   * @param code   the peer's code, {@code >= 0}
   * @param detail the peer's text
   */
  public RemoteFailureException(String what, int code, String detail) {
    super(what + " failed on the peer: " + (code == NO_CODE ? "" : "(code " + code + ") ")
        + detail);
    this.code = code;
    this.detail = detail;
  }

  /** The code the peer's handler gave, or {@link #NO_CODE}. */
  public int code() {
    return code;
  }

  /** The peer's text, without the operation and code this exception's message adds. */
  public String detail() {
    return detail;
  }

  /**
   * The failure as read from the wire: a negative code (from a broken or hostile peer) reads as
   * {@link #NO_CODE}. Both transports build received failures here.
   */
  public static RemoteFailureException fromWire(String what, int code, String detail) {
    return new RemoteFailureException(what, Math.max(code, NO_CODE), detail);
  }

  /** Checks a code given to {@code fail}: codes are non-negative. */
  public static int checkCode(int code) {
    if (code < 0) {
      throw new IllegalArgumentException("failure code " + code + " is negative");
    }
    return code;
  }
}
