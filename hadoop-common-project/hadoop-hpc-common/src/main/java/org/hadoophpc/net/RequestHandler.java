/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net;

/**
 * Serves requests arriving at a {@link Listener}. Runs on a transport event thread: it must not
 * block, and it may answer later, from any thread, through the {@link Responder}.
 */
public interface RequestHandler {

  /**
   * A request arrived. The handler owns {@code request} and must release it; it must call
   * exactly one of {@link Responder#respond} or {@link Responder#fail}.
   */
  void onRequest(Connection connection, Buffer request, Responder responder);

  /** The connection closed (either side, or the peer died). */
  default void onClose(Connection connection) {
  }

  /** Answers one request. */
  interface Responder {
    /** Sends {@code response} (ownership passes to the transport). */
    void respond(Buffer response);

    /** Fails the request on the peer with {@code message}. */
    void fail(String message);
  }
}
