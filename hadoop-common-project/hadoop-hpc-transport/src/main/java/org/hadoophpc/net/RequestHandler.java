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

  /**
   * Most bytes the one request a peer may send before it authenticated may carry (handlers that
   * {@link #authenticates() authenticate}): {@link Connection#UNTRUSTED_MAX_MESSAGE_BYTES} (the
   * default) or less, for a handler whose authenticating request is small. On tcp such a request
   * of at most 8 KiB takes no pooled memory until it has arrived in full, so peers that trickle
   * one in hold none.
   */
  default int untrustedRequestBytes() {
    return Connection.UNTRUSTED_MAX_MESSAGE_BYTES;
  }

  /**
   * Milliseconds a peer of a handler that {@link #authenticates() authenticates} has to do so
   * before it is disconnected; 0 (the default): {@code hadoop.hpc.transport.io.timeout}.
   */
  default long authenticationTimeoutMs() {
    return 0;
  }

  /**
   * Most bytes one request may carry on this handler's connections, trusted or not; 0 (the
   * default): {@code hadoop.hpc.transport.max.message.size}. A larger request is a protocol error
   * that closes the connection before any memory is taken for it (on verbs: for a rendezvous
   * request; eager ones are small).
   */
  default int maxRequestBytes() {
    return 0;
  }

  /**
   * Most connections a listener of this handler keeps open from one remote IP address; one more
   * is closed as soon as it is accepted. 0 (the default): no limit of its own. Peers reaching a
   * tcp listener by its local socket (same host, same user) are not counted; verbs does not
   * apply it yet.
   */
  default int maxConnectionsPerAddress() {
    return 0;
  }

  /**
   * A listener of this handler accepted {@code connection} (on verbs: the peer's connect request
   * was accepted); runs on its event thread before any request of it. A handler that
   * {@link #authenticates() authenticates} may keep the count of peers that have not yet and
   * {@link Connection#close() close} older ones to bound it; it must not close
   * {@code connection} itself here. The default does nothing.
   */
  default void onConnect(Connection connection) {
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
