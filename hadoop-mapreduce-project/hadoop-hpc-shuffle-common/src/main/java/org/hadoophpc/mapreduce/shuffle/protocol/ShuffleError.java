/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.shuffle.protocol;

/**
 * Why the service refused a request. It travels as the code of the transport's failure
 * ({@code Responder.fail(code, text)}, a number in the failure frame; the client gets a
 * {@code RemoteFailureException} with it), so neither side parses text. The numbers are the
 * wire format: never reuse or renumber one.
 */
public enum ShuffleError {
  /** The service holds no job token for the job (finished, or started before the service). */
  UNKNOWN_JOB(1),
  /** The request's HMAC does not match the job token. */
  AUTH(2),
  /** A malformed request. */
  BAD_REQUEST(3),
  /** The fetch session is gone (closed, or its job finished). */
  NO_SESSION(4),
  /** The service's read queue is full; retry later. */
  BUSY(5),
  /** Reading the map output failed on the service's side. */
  IO(6),
  /**
   * The service belongs to another NodeManager than the one the reducer asked for (several share
   * a host), or was reached on another port than the reducer connected to (a relay): the
   * reducer goes on to the next port; nothing else of the answer is used.
   */
  WRONG_SERVICE(7),
  /**
   * The request is of another protocol version (another hadoop-hpc release): nothing of it is
   * used. A service older than this code answers such a request with {@link #BAD_REQUEST}.
   */
  VERSION(8);

  private final int code;

  ShuffleError(int code) {
    this.code = code;
  }

  /** The number on the wire. */
  public int code() {
    return code;
  }

  /** The error with wire number {@code code}, or null for none of ours (0: the transport's). */
  public static ShuffleError of(int code) {
    for (ShuffleError e : values()) {
      if (e.code == code) {
        return e;
      }
    }
    return null;
  }
}
