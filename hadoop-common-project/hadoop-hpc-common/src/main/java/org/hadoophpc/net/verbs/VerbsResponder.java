/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.verbs;

import java.util.concurrent.atomic.AtomicBoolean;

import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.RequestHandler;

/**
 * Answers one request received on a {@link VerbsConnection}. May be used from any thread; the
 * answer is handed to the event loop. The first answer wins; later ones are programming errors.
 */
final class VerbsResponder implements RequestHandler.Responder {
  private final VerbsTransport transport;
  private final VerbsConnection connection;
  private final int reqId;
  private final AtomicBoolean answered = new AtomicBoolean();

  VerbsResponder(VerbsTransport transport, VerbsConnection connection, int reqId) {
    this.transport = transport;
    this.connection = connection;
    this.reqId = reqId;
  }

  private void once() {
    if (!answered.compareAndSet(false, true)) {
      throw new IllegalStateException("request " + reqId + " on " + connection
          + " was already answered");
    }
  }

  @Override
  public void respond(Buffer response) {
    once();
    if (!transport.submit(() -> connection.respond(reqId, response))) {
      response.release(); // transport closed: the requester fails with ConnectionClosed
    }
  }

  @Override
  public void fail(String message) {
    once();
    transport.submit(() -> connection.fail(reqId, message));
  }
}
