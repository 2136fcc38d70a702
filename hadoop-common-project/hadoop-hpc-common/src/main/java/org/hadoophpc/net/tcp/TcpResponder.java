/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.tcp;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.RequestHandler;

/**
 * Answers one request and is the frame carrying the answer. Not pooled: a second call must
 * throw even after the answer went out, so each request gets its own object. Thread-safe:
 * {@link #respond} and {@link #fail} may be called from any thread; the frame methods run on the
 * connection's event-loop thread.
 */
final class TcpResponder implements RequestHandler.Responder, OutboundFrame {
  private static final VarHandle ANSWERED;

  static {
    try {
      ANSWERED = MethodHandles.lookup().findVarHandle(TcpResponder.class, "answered", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final TcpConnection connection;
  private final long opId;
  @SuppressWarnings("unused") // through ANSWERED
  private volatile int answered;
  private Buffer response;
  private ByteBuffer errorText;

  TcpResponder(TcpConnection connection, long opId) {
    this.connection = connection;
    this.opId = opId;
  }

  @Override
  public void respond(Buffer buffer) {
    int n = buffer.readableBytes();
    if (n > connection.maxMessageSize()) {
      throw new IllegalArgumentException("response of " + n + " bytes exceeds "
          + "hadoop.hpc.transport.max.message.size=" + connection.maxMessageSize());
    }
    claim();
    response = buffer;
    connection.answer(this);
  }

  @Override
  public void fail(String message) {
    claim();
    errorText = ByteBuffer.wrap(String.valueOf(message).getBytes(StandardCharsets.UTF_8));
    connection.answer(this);
  }

  /** Fails the request unless already answered (a handler that threw). */
  void failIfUnanswered(String message) {
    if (ANSWERED.compareAndSet(this, 0, 1)) {
      errorText = ByteBuffer.wrap(message.getBytes(StandardCharsets.UTF_8));
      connection.answer(this);
    }
  }

  private void claim() {
    if (!ANSWERED.compareAndSet(this, 0, 1)) {
      throw new IllegalStateException("request " + opId + " from " + connection.peer()
          + " was already answered");
    }
  }

  @Override
  public ByteBuffer start(ByteBuffer header) {
    ByteBuffer payload = response != null ? response.nio() : errorText;
    TcpFrame.encode(header, response != null ? TcpFrame.RESPONSE : TcpFrame.ERROR,
        payload.remaining(), opId, 0, 0, 0);
    return payload;
  }

  @Override
  public void sent() {
    dropped();
  }

  @Override
  public void dropped() {
    Buffer b = response;
    response = null;
    errorText = null;
    if (b != null) {
      b.release();
    }
  }

  @Override
  public boolean obsolete() {
    return false;
  }
}
