/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net;

import java.nio.channels.FileChannel;
import java.util.List;

/**
 * Serves requests arriving at a {@link Listener}. Runs on a transport event thread: it must not
 * block, and it may answer later, from any thread.
 *
 * <p>Transports deliver each request through {@link #onRequest(Connection, Buffer, long)}: the
 * request's id, answered with {@link Connection#respond(long, Buffer)} or
 * {@link Connection#fail(long, String)}. By default that form hands the request on to
 * {@link #onRequest(Connection, Buffer, Responder)} with a {@link Responder} bound to the id, so
 * a handler can be a lambda. Ids carry a generation: the transport reuses its per-request state
 * (no garbage per request) and still refuses a second answer, or an answer through the id or
 * responder of an older request, with an {@link IllegalStateException}; such a call never
 * answers another request.
 */
public interface RequestHandler {

  /**
   * A request arrived. The handler owns {@code request} and must release it; it must call
   * exactly one of {@link Responder#respond} or {@link Responder#fail}.
   */
  void onRequest(Connection connection, Buffer request, Responder responder);

  /**
   * A request arrived as {@code requestId} of {@code connection}. The handler owns
   * {@code request} and must release it; it must answer exactly once through
   * {@code connection.respond(requestId, ..)} or {@code connection.fail(requestId, ..)}.
   *
   * <p>The default wraps the id in a {@link Responder} (one small object per request) and calls
   * {@link #onRequest(Connection, Buffer, Responder)}. A handler that keeps no object per request
   * overrides this method; transports then never call the other form.
   */
  default void onRequest(Connection connection, Buffer request, long requestId) {
    onRequest(connection, request, new BoundResponder(connection, requestId));
  }

  /**
   * True when this handler authenticates its peers and calls {@link Connection#trust()} once one
   * has: its connections then start untrusted (small frames, one request at a time, a deadline
   * to authenticate). The default, false, trusts every peer.
   */
  default boolean authenticates() {
    return false;
  }

  /** The connection closed (either side, or the peer died). */
  default void onClose(Connection connection) {
  }

  /** Answers one request; any thread. */
  interface Responder {
    /**
     * Sends {@code response} (ownership passes to the transport).
     *
     * @throws IllegalStateException when the request was already answered
     */
    void respond(Buffer response);

    /**
     * Fails the request on the peer with {@code code} and {@code message} (see
     * {@link Connection#fail(long, int, String)}).
     *
     * @throws IllegalStateException when the request was already answered
     */
    void fail(int code, String message);

    /** {@link #fail(int, String)} without a code. */
    default void fail(String message) {
      fail(RemoteFailureException.NO_CODE, message);
    }

    /**
     * Answers with {@code length} bytes of {@code file} from {@code position}, straight from the
     * file where the transport can; false, having done nothing, where it cannot (see
     * {@link Connection#respondFile}). The default returns false.
     */
    default boolean respondFile(FileChannel file, long position, int length) {
      return false;
    }

    /**
     * Answers with the bytes of {@code spans}, one after the other, straight from the files
     * where the transport can; false, having done nothing, where it cannot (see
     * {@link Connection#respondFiles}). The default returns false.
     */
    default boolean respondFiles(List<FileSpan> spans) {
      return false;
    }
  }
}
