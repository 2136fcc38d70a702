/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.shuffle.protocol;

/**
 * Why the service refused a request. It travels as the failure message of the transport's
 * responder, {@code "[CODE] text"}, so both sides read it without a message type of its own.
 */
public enum ShuffleError {
  /** The service holds no job token for the job (finished, or started before the service). */
  UNKNOWN_JOB,
  /** The request's HMAC does not match the job token. */
  AUTH,
  /** A malformed request. */
  BAD_REQUEST,
  /** The fetch session is gone (closed, or its job finished). */
  NO_SESSION,
  /** The service's read queue is full; retry later. */
  BUSY,
  /** Reading the map output failed on the service's side. */
  IO,
  /**
   * The service belongs to another NodeManager than the one the reducer asked for (several share
   * a host): the reducer goes on to the next port; nothing else of the answer is used.
   */
  WRONG_SERVICE;

  /** The failure message for {@code text}. */
  public String format(String text) {
    return "[" + name() + "] " + text;
  }

  private static final java.util.regex.Pattern CODE =
      java.util.regex.Pattern.compile("\\[([A-Z_]+)\\]");

  /** The code in a failure message (the transport may prefix it), or null when none. */
  public static ShuffleError of(String message) {
    if (message == null) {
      return null;
    }
    java.util.regex.Matcher m = CODE.matcher(message);
    while (m.find()) {
      for (ShuffleError e : values()) {
        if (e.name().equals(m.group(1))) {
          return e;
        }
      }
    }
    return null;
  }
}
