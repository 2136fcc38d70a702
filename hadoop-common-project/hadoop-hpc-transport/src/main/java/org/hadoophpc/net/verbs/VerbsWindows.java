/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.verbs;

import java.util.Arrays;

import org.hadoophpc.nativeio.NativeIoException;
import org.hadoophpc.net.Buffer;

/**
 * The memory windows through which one connection's peer reads this side's rendezvous payloads:
 * the only remote access to pool memory there is. Pool slabs are registered for local access
 * and window binding only, so a slab's rkey opens nothing; each large message gets a type 2
 * window bound to exactly its payload's bytes, with remote read only, on this connection's
 * queue pair (a type 2 window cannot be used through any other QP), and a new key byte per bind
 * (an earlier transfer's key never opens it again).
 *
 * <p>A window is closed when the transfer is over (the peer's RNDV_DONE, an abandoned exchange,
 * or the io timeout): the connection posts a local invalidate and releases the payload when it
 * completes, so the key is dead before the memory is reused. A connection holds at most
 * {@link #limit} exposed payloads; the peer that leaves more unacknowledged is closed by the
 * connection.
 *
 * <p>Windows are allocated lazily and reused; all of them are deallocated in {@link #destroy}
 * before the queue pair is destroyed (a bound window holds its QP). Event-loop thread only.
 */
final class VerbsWindows {
  /** One window and the payload it currently opens (null when free). */
  static final class Window {
    final long handle;
    /** Key of the current binding; valid from the bind until it is invalidated. */
    int rkey;
    Buffer payload;
    boolean forResponse;
    int reqId;
    /** Local invalidate posted; the payload returns when it completes. */
    boolean invalidating;
    long deadlineNanos;

    Window(long handle) {
      this.handle = handle;
    }
  }

  private final long ctx;
  private final int limit;
  /** Every window ever allocated here (the ownership record for {@link #destroy}). */
  private Window[] all = new Window[8];
  private int allCount;
  private Window[] free = new Window[8];
  private int freeCount;
  /** Windows opening a payload (bound or about to be), not yet invalidated. */
  private final IntMap<Window> requests = new IntMap<>();
  private final IntMap<Window> responses = new IntMap<>();
  /** Written by the loop; read by tests waiting for transfers to end. */
  private volatile int exposed;

  VerbsWindows(long ctx, int limit) {
    this.ctx = ctx;
    this.limit = limit;
  }

  /** Most payloads exposed at once before the peer counts as not acknowledging. */
  int limit() {
    return limit;
  }

  /** Payloads exposed now (bound, or being invalidated). */
  int exposed() {
    return exposed;
  }

  /**
   * A window for {@code payload} of request or response {@code reqId}; the caller binds it
   * before announcing it. If an earlier exposure had the same id (a stale, abandoned exchange)
   * it is returned through {@code displaced[0]} for the caller to invalidate.
   */
  Window open(boolean forResponse, int reqId, Buffer payload, long deadlineNanos,
      Window[] displaced) throws NativeIoException {
    Window w = freeCount > 0 ? free[--freeCount] : allocate();
    w.payload = payload;
    w.forResponse = forResponse;
    w.reqId = reqId;
    w.invalidating = false;
    w.deadlineNanos = deadlineNanos;
    w.rkey = 0;
    exposed++;
    displaced[0] = (forResponse ? responses : requests).put(reqId, w);
    return w;
  }

  private Window allocate() throws NativeIoException {
    Window w = new Window(VerbsNatives.mwAlloc(ctx));
    if (allCount == all.length) {
      all = Arrays.copyOf(all, all.length * 2);
      free = Arrays.copyOf(free, all.length);
    }
    all[allCount++] = w;
    return w;
  }

  /** The exposure of {@code reqId} the peer says it is done with, now out of the table. */
  Window done(boolean forResponse, int reqId) {
    return (forResponse ? responses : requests).remove(reqId);
  }

  /**
   * The window's key is dead (invalidated remotely or locally): its payload returns to the pool
   * and the window to the free list.
   */
  void closed(Window w) {
    Buffer p = w.payload;
    w.payload = null;
    w.invalidating = false;
    w.rkey = 0;
    if (p != null) {
      p.release();
      exposed--;
    }
    free[freeCount++] = w;
  }

  /** An exposure past its deadline and not yet being invalidated, or null. */
  Window expired(long now) {
    for (int i = 0; i < allCount; i++) {
      Window w = all[i];
      // rkey 0: not bound yet (its announcement still waits for credits)
      if (w.payload != null && !w.invalidating && w.rkey != 0 && now - w.deadlineNanos > 0) {
        (w.forResponse ? responses : requests).remove(w.reqId);
        return w;
      }
    }
    return null;
  }

  /**
   * At teardown, before the queue pair is destroyed: deallocates every window (which
   * invalidates it) and releases every payload still exposed. A failure is returned for the
   * caller to log; the remaining windows are still deallocated.
   */
  NativeIoException destroy() {
    NativeIoException failure = null;
    for (int i = 0; i < allCount; i++) {
      Window w = all[i];
      try {
        VerbsNatives.mwDealloc(ctx, w.handle);
      } catch (NativeIoException e) {
        failure = failure == null ? e : failure;
      }
      if (w.payload != null) {
        w.payload.release();
        w.payload = null;
      }
      all[i] = null;
    }
    allCount = 0;
    freeCount = 0;
    exposed = 0;
    requests.clear(w -> { });
    responses.clear(w -> { });
    return failure;
  }
}
