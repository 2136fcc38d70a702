/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.tcp;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.hadoophpc.net.AnswerSlots;
import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.Completion;
import org.hadoophpc.net.FileSpan;
import org.hadoophpc.net.RemoteFailureException;
import org.hadoophpc.net.RequestHandler;

/**
 * One rule: each request one connection received is answered once, within
 * {@code max.message.size}, through a reusable {@link TcpResponder} slot (ids with a generation,
 * see {@link AnswerSlots}), and a request whose handler threw is failed. The answers' frames go
 * out through the connection ({@link TcpConnection#send(TcpResponder)}). Any thread.
 */
final class TcpAnswers {
  private final TcpConnection conn;
  private final int maxMessageSize;
  /** Received requests waiting for (or sending) their answers. */
  private final AnswerSlots<TcpResponder> slots;
  /** Fails a delivered request whose handler threw; made once (no garbage per request). */
  private final AnswerSlots.Refusal refusal = this::failIfUnanswered;

  TcpAnswers(TcpConnection conn, int slots, int maxMessageSize) {
    this.conn = conn;
    this.maxMessageSize = maxMessageSize;
    this.slots = new AnswerSlots<>(slots, i -> new TcpResponder(conn, i));
  }

  /** Hands request {@code opId} to {@code handler} in the next slot; the loop's thread. */
  void dispatch(long opId, Buffer request, RequestHandler handler) {
    TcpResponder slot = slots.next();
    slot.opId = opId;
    slots.dispatch(slot, handler, conn, request, refusal);
  }

  /** An answer's frame went out or was dropped: its slot may serve another request. */
  void recycle(TcpResponder r) {
    slots.recycle(r);
  }

  void respond(long requestId, Buffer response) {
    int n = response.readableBytes();
    if (n > maxMessageSize) {
      throw new IllegalArgumentException("response of " + n + " bytes exceeds "
          + "hadoop.hpc.transport.max.message.size=" + maxMessageSize);
    }
    TcpResponder r = slots.claimOrThrow(requestId, conn);
    r.answer(response, RemoteFailureException.NO_CODE, null);
    conn.send(r);
  }

  /** Several answers, in one write where the connection allows (Connection's rule). */
  void respond(long[] requestIds, Buffer[] responses, int count) {
    for (int i = 0; i < count; i++) {
      int n = responses[i].readableBytes();
      if (n > maxMessageSize) {
        throw new IllegalArgumentException("response of " + n + " bytes exceeds "
            + "hadoop.hpc.transport.max.message.size=" + maxMessageSize);
      }
    }
    TcpResponder[] claimed = new TcpResponder[count];
    int k = 0;
    for (int i = 0; i < count; i++) {
      TcpResponder r;
      try {
        r = slots.claimOrThrow(requestIds[i], conn);
      } catch (IllegalStateException e) {
        responses[i].release();
        continue;
      }
      r.answer(responses[i], RemoteFailureException.NO_CODE, null);
      claimed[k++] = r;
    }
    conn.send(claimed, k);
  }

  void respondFile(long requestId, Buffer head, FileChannel file, long position, int length,
      Completion<Void> done) {
    long total = (long) length + (head == null ? 0 : head.readableBytes());
    if (total > maxMessageSize || length < 0 || position < 0) {
      throw new IllegalArgumentException("file answer of " + total + " bytes at " + position
          + " (hadoop.hpc.transport.max.message.size=" + maxMessageSize + ")");
    }
    TcpResponder r = slots.claimOrThrow(requestId, conn);
    r.answerFile(head, file, position, length, done);
    conn.send(r);
  }

  void respondFiles(long requestId, List<FileSpan> spans) {
    long total = 0;
    for (FileSpan s : spans) {
      total += s.length();
    }
    if (total > maxMessageSize || spans.isEmpty()) {
      throw new IllegalArgumentException("file answer of " + total + " bytes in " + spans.size()
          + " spans (hadoop.hpc.transport.max.message.size=" + maxMessageSize + ")");
    }
    TcpResponder r = slots.claimOrThrow(requestId, conn);
    r.answerFiles(spans.toArray(new FileSpan[0]), (int) total);
    conn.send(r);
  }

  void fail(long requestId, int code, String message) {
    RemoteFailureException.checkCode(code);
    TcpResponder r = slots.claimOrThrow(requestId, conn);
    r.answer(null, code, errorText(message));
    conn.send(r);
  }

  /** Fails the request unless already answered (a handler that threw). */
  private void failIfUnanswered(long requestId, String message) {
    TcpResponder r = slots.claim(requestId);
    if (r != null) {
      r.answer(null, RemoteFailureException.NO_CODE, errorText(message));
      conn.send(r);
    }
  }

  private static ByteBuffer errorText(String message) {
    return ByteBuffer.wrap(String.valueOf(message).getBytes(StandardCharsets.UTF_8));
  }
}
