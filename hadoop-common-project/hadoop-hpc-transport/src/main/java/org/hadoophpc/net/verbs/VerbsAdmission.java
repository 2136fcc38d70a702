/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.verbs;

import java.util.concurrent.TimeUnit;

import org.hadoophpc.net.Connection;
import org.hadoophpc.net.RequestHandler;

/**
 * One rule: what a peer may do before it authenticated (see {@link Connection#trust()}). On an
 * accepted connection whose handler authenticates, until the handler calls {@code trust()} the
 * peer may send requests (eager, or rendezvous of at most the handler's
 * {@link RequestHandler#untrustedRequestBytes()}), acknowledge a rendezvous answer and return
 * credits, with one request unanswered at a time, and must authenticate within the handler's
 * {@link RequestHandler#authenticationTimeoutMs()} (else {@code hadoop.hpc.transport.io.timeout});
 * anything else closes the connection as a protocol violation. So a peer that never
 * authenticates holds its receive ring, one request and at most 256 KiB of rendezvous memory,
 * for one such timeout. Other connections are trusted from the start. Trusted or not, a
 * rendezvous request larger than the handler's {@link RequestHandler#maxRequestBytes()} is
 * refused the same way.
 *
 * <p>{@link #trust()} and {@link #trusted()} from any thread; the rest on the event loop.
 */
final class VerbsAdmission {
  private volatile boolean trusted;
  private final long createdNanos = System.nanoTime();
  private final long ioTimeoutNanos;
  /** Requests admitted and not answered yet (counted only while untrusted). */
  private int unanswered;

  /** Most bytes of a rendezvous request before the peer authenticated. */
  private final int untrustedMax;
  /** Most bytes of a rendezvous request; 0: no limit of the handler's. */
  private final int requestMax;

  /** {@code handler}: the listener's, null on a connection this side opened (trusted). */
  VerbsAdmission(RequestHandler handler, long ioTimeoutNanos) {
    this.trusted = handler == null || !handler.authenticates();
    int untrusted = handler == null ? 0 : handler.untrustedRequestBytes();
    this.untrustedMax = untrusted > 0
        ? Math.min(untrusted, Connection.UNTRUSTED_MAX_MESSAGE_BYTES)
        : Connection.UNTRUSTED_MAX_MESSAGE_BYTES;
    this.requestMax = handler == null ? 0 : Math.max(0, handler.maxRequestBytes());
    long auth = handler == null ? 0 : handler.authenticationTimeoutMs();
    this.ioTimeoutNanos = auth > 0 ? TimeUnit.MILLISECONDS.toNanos(auth) : ioTimeoutNanos;
  }

  void trust() {
    trusted = true;
  }

  boolean trusted() {
    return trusted;
  }

  /**
   * Loop: why a message of {@code type} announcing {@code length} bytes is refused from this
   * peer, or null when it is admitted (a request is counted unanswered from here, so one whose
   * rendezvous read is still running counts too).
   */
  String admit(byte type, int length) {
    if (type == VerbsHeader.REQUEST_RNDV && requestMax > 0 && length > requestMax) {
      return "a request of " + length + " bytes (its handler takes at most " + requestMax + ")";
    }
    if (trusted) {
      return null;
    }
    switch (type) {
      case VerbsHeader.REQUEST:
      case VerbsHeader.REQUEST_RNDV:
        if (unanswered > 0) {
          return "a second request while one is unanswered, before it authenticated";
        }
        if (type == VerbsHeader.REQUEST_RNDV && length > untrustedMax) {
          return "a request of " + length + " bytes before it authenticated (at most "
              + untrustedMax + " before it does)";
        }
        unanswered++;
        return null;
      case VerbsHeader.RNDV_DONE:
      case VerbsHeader.CREDIT:
        return null;
      default:
        return "message type " + type + " before it authenticated";
    }
  }

  /** Loop: a request was answered. */
  void answered() {
    if (unanswered > 0) {
      unanswered--;
    }
  }

  /** Loop: true when the peer has had the i/o timeout to authenticate and has not. */
  boolean overdue(long now) {
    return !trusted && now - createdNanos >= ioTimeoutNanos;
  }

  long timeoutMs() {
    return TimeUnit.NANOSECONDS.toMillis(ioTimeoutNanos);
  }
}
