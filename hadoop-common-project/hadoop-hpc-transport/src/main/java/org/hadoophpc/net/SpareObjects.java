/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net;

import java.util.function.Supplier;

/**
 * For transport implementations: a small bounded stack of reusable objects (a connection's
 * operation objects), taken by callers on any thread and given back by the event loop, so that
 * an operation allocates nothing in steady state. Beyond the bound, objects are made anew and
 * dropped to the garbage collector. Thread-safe: one short lock (uncontended locking allocates
 * nothing, unlike a linked lock-free queue's nodes).
 *
 * @param <T> the objects; they must be cleared by the caller before {@link #give}
 */
public final class SpareObjects<T> {
  private final Object[] spares;
  private final Supplier<T> factory;
  private int count;

  public SpareObjects(int bound, Supplier<T> factory) {
    this.spares = new Object[bound];
    this.factory = factory;
  }

  /** A spare object, or a new one when none is left. */
  public T take() {
    synchronized (this) {
      if (count > 0) {
        @SuppressWarnings("unchecked")
        T t = (T) spares[--count];
        spares[count] = null;
        return t;
      }
    }
    return factory.get();
  }

  /** Keeps {@code t} for a later {@link #take} if there is room. */
  public synchronized void give(T t) {
    if (count < spares.length) {
      spares[count++] = t;
    }
  }
}
