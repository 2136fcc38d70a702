/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.function.IntFunction;

/**
 * For transport implementations: the per-connection state of requests received and not yet
 * answered, reused from request to request so that serving allocates nothing per request.
 *
 * <p>Each received request takes a {@link Slot} and gets an id, {@code sequence << SLOT_BITS |
 * slot index}, with a per-connection sequence that only grows (the slot's generation). The slot
 * stays armed with that id until one answer claims it ({@link #claim}, a compare-and-set from
 * any thread). A second answer, or an answer carrying the id of an older request whose slot has
 * since been reused, finds the slot armed with another id (or none) and is refused: it can never
 * answer the newer request. The transport recycles a slot once its answer has left.
 *
 * <p>Threading: {@link #next}, {@link #arm} and {@link #recycle} belong to the connection's
 * event thread; {@link #claim} may be called from any thread. Growing (when more answers are in
 * flight than slots, e.g. answers queued behind a slow socket) replaces the array; a claimer
 * reading the old one still finds its slot there, since slots never move.
 *
 * @param <S> the transport's slot type, carrying what it needs to send the answer
 */
public final class AnswerSlots<S extends AnswerSlots.Slot> {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(AnswerSlots.class);
  /** Bits of an id that hold the slot index. */
  static final int SLOT_BITS = 20;
  private static final long SLOT_MASK = (1L << SLOT_BITS) - 1;

  /** One reusable request state; subclasses add the transport's answer fields. */
  public abstract static class Slot {
    private static final VarHandle ARMED;

    static {
      try {
        ARMED = MethodHandles.lookup().findVarHandle(Slot.class, "armed", long.class);
      } catch (ReflectiveOperationException e) {
        throw new ExceptionInInitializerError(e);
      }
    }

    private final int index;
    /** The id of the request waiting for an answer here; 0 when none. */
    @SuppressWarnings("unused") // through ARMED
    private volatile long armed;

    protected Slot(int index) {
      this.index = index;
    }

    public final int index() {
      return index;
    }

    private boolean claim(long id) {
      return ARMED.compareAndSet(this, id, 0L);
    }
  }

  private final IntFunction<S> factory;
  private volatile S[] slots;
  // Event-thread state.
  private int[] free;
  private int freeCount;
  private long sequence;

  /**
   * @param initial slots made at once (e.g. {@code max.inflight})
   * @param factory makes the slot of an index
   */
  public AnswerSlots(int initial, IntFunction<S> factory) {
    this.factory = factory;
    @SuppressWarnings("unchecked")
    S[] s = (S[]) new Slot[Math.max(1, initial)];
    this.free = new int[s.length];
    for (int i = s.length - 1; i >= 0; i--) {
      s[i] = factory.apply(i);
      free[freeCount++] = i;
    }
    this.slots = s;
  }

  /** Event thread: a free slot for a new request; fill in its fields, then {@link #arm} it. */
  public S next() {
    if (freeCount == 0) {
      grow();
    }
    return slots[free[--freeCount]];
  }

  /**
   * Event thread: gives {@code slot} (from {@link #next}) a new id and arms it. The fields the
   * caller set before are visible to whoever claims the id.
   */
  public long arm(S slot) {
    long id = (++sequence << SLOT_BITS) | slot.index();
    Slot.ARMED.setVolatile(slot, id);
    return id;
  }

  /** How a transport fails a request it delivered that is still unanswered (event thread). */
  public interface Refusal {
    void failIfUnanswered(long requestId, String message);
  }

  /**
   * Event thread: the one request dispatch of both transports. Arms {@code slot} (from
   * {@link #next}, filled with what the transport needs to answer) and hands {@code request}
   * to {@code handler} under its id; a handler that throws breaks its contract, so the request
   * fails with the reason (the requester learns why instead of timing out) unless the handler
   * answered before it threw, and the connection goes on serving.
   */
  public void dispatch(S slot, RequestHandler handler, Connection connection, Buffer request,
      Refusal refusal) {
    long requestId = arm(slot);
    try {
      handler.onRequest(connection, request, requestId);
    } catch (RuntimeException e) {
      LOG.warn("request handler failed on request {} of {}", requestId, connection, e);
      refusal.failIfUnanswered(requestId, "request handler threw " + e);
    }
  }

  /**
   * Any thread: the slot of request {@code id}, now claimed by the caller, or null when that
   * request is not waiting for an answer (answered already, an older request, not an id of
   * this connection).
   */
  public S claim(long id) {
    if (id <= 0) {
      return null;
    }
    S[] s = slots;
    long index = id & SLOT_MASK;
    if (index >= s.length) {
      return null;
    }
    S slot = s[(int) index];
    return ((Slot) slot).claim(id) ? slot : null;
  }

  /**
   * {@link #claim}, throwing when the request is not waiting for an answer.
   *
   * @param connection names the connection in the message
   * @throws IllegalStateException when the request was answered already, or {@code id} is not
   *         a request of this connection waiting for an answer
   */
  public S claimOrThrow(long id, Object connection) {
    S slot = claim(id);
    if (slot == null) {
      throw new IllegalStateException("request " + id + " on " + connection + " was already"
          + " answered (or is no request of this connection waiting for an answer)");
    }
    return slot;
  }

  /** Event thread: {@code slot}'s answer has left (or was dropped); it may serve again. */
  public void recycle(S slot) {
    free[freeCount++] = slot.index();
  }

  private void grow() {
    S[] old = slots;
    if (old.length > SLOT_MASK / 2) {
      throw new IllegalStateException("more than " + old.length + " unanswered requests");
    }
    S[] bigger = Arrays.copyOf(old, old.length * 2);
    for (int i = old.length; i < bigger.length; i++) {
      bigger[i] = factory.apply(i);
    }
    free = Arrays.copyOf(free, bigger.length);
    for (int i = bigger.length - 1; i >= old.length; i--) {
      free[freeCount++] = i;
    }
    slots = bigger;
  }
}
