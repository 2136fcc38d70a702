/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.verbs;

import java.util.concurrent.TimeUnit;

import org.hadoophpc.net.Connection;

/**
 * One rule: what a peer may do before it authenticated (see {@link Connection#trust()}). On an
 * accepted connection whose handler authenticates, until the handler calls {@code trust()} the
 * peer may send requests (eager, or rendezvous of at most
 * {@link Connection#UNTRUSTED_MAX_MESSAGE_BYTES}), acknowledge a rendezvous answer and return
 * credits, with one request unanswered at a time, and must authenticate within
 * {@code hadoop.hpc.transport.io.timeout}; anything else closes the connection as a protocol
 * violation. So a peer that never authenticates holds its receive ring, one request and at most
 * 256 KiB of rendezvous memory, for one i/o timeout. Other connections are trusted from the
 * start.
 *
 * <p>{@link #trust()} and {@link #trusted()} from any thread; the rest on the event loop.
 */
final class VerbsAdmission {
  private volatile boolean trusted;
  private final long createdNanos = System.nanoTime();
  private final long ioTimeoutNanos;
  /** Requests admitted and not answered yet (counted only while untrusted). */
  private int unanswered;

  VerbsAdmission(boolean trusted, long ioTimeoutNanos) {
    this.trusted = trusted;
    this.ioTimeoutNanos = ioTimeoutNanos;
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
    if (trusted) {
      return null;
    }
    switch (type) {
      case VerbsHeader.REQUEST:
      case VerbsHeader.REQUEST_RNDV:
        if (unanswered > 0) {
          return "a second request while one is unanswered, before it authenticated";
        }
        if (type == VerbsHeader.REQUEST_RNDV && length > Connection.UNTRUSTED_MAX_MESSAGE_BYTES) {
          return "a request of " + length + " bytes before it authenticated (at most "
              + Connection.UNTRUSTED_MAX_MESSAGE_BYTES + " before it does)";
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
