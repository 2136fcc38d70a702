/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import java.util.ArrayDeque;

import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.BufferPool;
import org.hadoophpc.net.Connection;

/**
 * One rule: a DataNode answers upstream DATA requests (an {@link TransferWire#ACK} with the
 * consumed count) not one by one but together, right after the next answer it sends (so a
 * request/response exchange wakes the client once, for the response), when a PULL posted alone
 * arrives, when {@code window} of them are held, or at the latest {@link #DELAY_NANOS} after
 * the oldest on the handler's timer. The stream calls {@link #hold}, {@link #take},
 * {@link #overdue} and {@link #clear} under its lock and {@link #send} outside it.
 */
final class HeldAcks {
  /** Held DATA answers older than this go out on the handler's timer (its next tick). */
  static final long DELAY_NANOS = 10_000_000L;

  private final Connection connection;
  private final BufferPool pool;
  /** The DATA requests not answered yet, oldest first. */
  private final ArrayDeque<Long> ids = new ArrayDeque<>();
  private long since;

  HeldAcks(Connection connection, BufferPool pool) {
    this.connection = connection;
    this.pool = pool;
  }

  /** Holds DATA request {@code id}; true when {@code window} are held (answer them now). */
  boolean hold(long id, int window) {
    ids.add(id);
    if (ids.size() == 1) {
      since = System.nanoTime();
    }
    return ids.size() >= window;
  }

  /** The held requests, taken out, oldest first; null when none are held. */
  long[] take() {
    if (ids.isEmpty()) {
      return null;
    }
    long[] held = new long[ids.size()];
    for (int i = 0; i < held.length; i++) {
      held[i] = ids.poll();
    }
    return held;
  }

  /** Requests are held since {@link #DELAY_NANOS} before {@code now} or longer. */
  boolean overdue(long now) {
    return !ids.isEmpty() && now - since >= DELAY_NANOS;
  }

  /** Forgets the held requests (the transport failed them with the connection). */
  void clear() {
    ids.clear();
  }

  /**
   * Answers {@code id} with {@code b} (when not null), then each of {@code held} (may be null)
   * with an ACK carrying {@code consumed}, all together (one write on tcp).
   */
  void send(long id, Buffer b, long[] held, long consumed) {
    if (held == null) {
      if (b != null) {
        respond(id, b); // nothing held: the usual case of a streaming read, no arrays
      }
      return;
    }
    int n = (b == null ? 0 : 1) + held.length;
    long[] answerIds = new long[n];
    Buffer[] answers = new Buffer[n];
    int k = 0;
    if (b != null) {
      answerIds[k] = id;
      answers[k++] = b;
    }
    for (long h : held) {
      Buffer a = pool.allocate(TransferWire.ANSWER_HEADER);
      if (a == null) {
        connection.fail(h, TransferError.BUSY.code, "no registered memory for an answer");
        continue;
      }
      TransferWire.answerHeader(a.nio(), TransferWire.ACK, -1, consumed);
      a.nio().flip();
      answerIds[k] = h;
      answers[k++] = a;
    }
    connection.respond(answerIds, answers, k);
  }

  /** Answers {@code id} with {@code b} alone. */
  void respond(long id, Buffer b) {
    try {
      connection.respond(id, b);
    } catch (IllegalStateException e) {
      b.release(); // the connection closed meanwhile: nobody waits for it
    }
  }
}
