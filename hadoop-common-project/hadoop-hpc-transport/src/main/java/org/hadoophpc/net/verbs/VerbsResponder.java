/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.verbs;

import java.nio.charset.StandardCharsets;

import org.hadoophpc.net.AnswerSlots;
import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.RemoteFailureException;
import org.hadoophpc.net.RequestHandler;

/**
 * One rule: every request the peer sends gets exactly one answer message: the handler's
 * response (eager, or a rendezvous through a window), or a FAILURE carrying its code (the
 * handler's, or the transport's own: no handler, a handler that threw, no registered memory for
 * the response). The handler answers from any thread; the answer crosses to the loop through the
 * connection's outbox ({@link VerbsOutbox}) and becomes a message there. Received-request state
 * is the transport-neutral {@link AnswerSlots}, as on tcp.
 */
final class VerbsResponder {
  private final VerbsConnection conn;
  private final VerbsTransport transport;
  private final VerbsAdmission admission;
  private final AnswerSlots<VerbsAnswer> answers;
  /** Fails a delivered request whose handler threw; made once (no garbage per request). */
  private final AnswerSlots.Refusal refusal = this::failIfUnanswered;

  VerbsResponder(VerbsConnection conn, int slots, VerbsAdmission admission) {
    this.conn = conn;
    this.transport = conn.transport();
    this.admission = admission;
    this.answers = new AnswerSlots<>(slots, VerbsAnswer::new);
  }

  /** Any thread: the handler's response to {@code requestId} (ownership passes here). */
  void respond(long requestId, Buffer response) {
    VerbsAnswer a = answers.claimOrThrow(requestId, conn);
    a.response = response;
    a.failure = null;
    conn.outbox.enqueueAnswer(a);
  }

  /** Any thread: the handler fails {@code requestId} with {@code code} and {@code message}. */
  void fail(long requestId, int code, String message) {
    RemoteFailureException.checkCode(code);
    VerbsAnswer a = answers.claimOrThrow(requestId, conn);
    a.response = null;
    a.failure = String.valueOf(message);
    a.failureCode = code;
    conn.outbox.enqueueAnswer(a);
  }

  /** Loop: a request of the peer arrived in full; the handler gets it. */
  void deliver(int reqId, Buffer request) {
    VerbsListener listener = conn.listener();
    RequestHandler handler = listener == null ? null : listener.handler();
    if (handler == null) {
      request.release();
      sendFailure(reqId, RemoteFailureException.NO_CODE,
          "no request handler on this side of the connection");
      return;
    }
    VerbsAnswer slot = answers.next();
    slot.reqId = reqId;
    answers.dispatch(slot, handler, conn, request, refusal);
  }

  private void failIfUnanswered(long requestId, String message) {
    VerbsAnswer a = answers.claim(requestId);
    if (a != null) {
      a.response = null;
      a.failure = message;
      a.failureCode = RemoteFailureException.NO_CODE;
      onAnswer(a);
    }
  }

  /** Loop: a claimed answer becomes a message; its slot may serve another request. */
  void onAnswer(VerbsAnswer a) {
    int reqId = a.reqId;
    Buffer response = a.response;
    String failure = a.failure;
    int code = a.failureCode;
    a.response = null;
    a.failure = null;
    a.failureCode = RemoteFailureException.NO_CODE;
    answers.recycle(a);
    admission.answered();
    if (response != null) {
      sendResponse(reqId, response);
    } else {
      sendFailure(reqId, code, failure);
    }
  }

  private void sendResponse(int reqId, Buffer response) {
    if (conn.state != VerbsConnection.OPEN) {
      response.release();
      return;
    }
    Buffer payload = response;
    if (response.pool() != transport.bufferPool()) {
      payload = transport.copyIntoPool(response);
      response.release();
      if (payload == null) {
        sendFailure(reqId, RemoteFailureException.NO_CODE, "responder out of registered memory"
            + " for a " + response.capacity() + "-byte response");
        return;
      }
    }
    VerbsOp op = conn.ops.spare(VerbsOp.MESSAGE);
    op.reqId = reqId;
    VerbsRendezvous rendezvous = conn.rendezvous;
    if (payload.readableBytes() > VerbsTransport.EAGER_SIZE
        && rendezvous.exposed() >= rendezvous.limit()) {
      payload.release();
      conn.protocolError("it left " + rendezvous.exposed() + " rendezvous payloads"
          + " unacknowledged (RNDV_DONE), the most one connection may hold");
      return;
    }
    conn.prepare(op, VerbsHeader.RESPONSE, VerbsHeader.RESPONSE_RNDV, payload, true);
    conn.queueMessage(op);
    conn.pump();
  }

  /** A FAILURE message: the code travels in the header's rkey field, the text as payload. */
  private void sendFailure(int reqId, int code, String message) {
    if (conn.state != VerbsConnection.OPEN) {
      return;
    }
    byte[] text = String.valueOf(message).getBytes(StandardCharsets.UTF_8);
    int len = Math.min(text.length, VerbsTransport.EAGER_SIZE);
    Buffer payload = transport.bufferPool().allocate(len);
    if (payload != null) {
      payload.nio().put(text, 0, len).flip();
    }
    VerbsOp op = conn.ops.message(VerbsHeader.FAILURE, 0, reqId, payload);
    op.rkey = code;
    conn.queueMessage(op);
    conn.pump();
  }
}
