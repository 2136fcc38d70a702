/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A reference-counted chunk of (possibly RDMA-registered) direct memory from a
 * {@link BufferPool}.
 *
 * <p>Contents follow {@link ByteBuffer} conventions: the bytes of a message are those between
 * {@code nio().position()} and {@code nio().limit()}. A freshly allocated buffer has position 0
 * and limit = the requested size; a received buffer has position 0 and limit = message length.
 *
 * <p>Ownership: whoever holds a reference releases it exactly once. Handing a buffer to a
 * transport operation ({@code request}, {@code respond}) hands over that reference. The chunk and
 * this object return to the pool when the count reaches zero and are reused (no per-message
 * garbage), so a buffer must not be touched after its last release.
 *
 * <p>Thread-safety: reference counting is atomic; the contents are not synchronised.
 */
public final class Buffer {
  private final BufferPool pool;
  private final BufferPool.Slab slab;
  private final int offset;
  private final ByteBuffer nio;
  private final AtomicInteger refCnt = new AtomicInteger();

  Buffer(BufferPool pool, BufferPool.Slab slab, int offset, int capacity) {
    this.pool = pool;
    this.slab = slab;
    this.offset = offset;
    this.nio = slab.memory.duplicate().position(offset).limit(offset + capacity).slice();
  }

  /** Prepares a pooled chunk for a new owner. */
  void reset(int size) {
    nio.clear().limit(size);
    refCnt.set(1);
  }

  /** The chunk's memory; see the class comment for position and limit. */
  public ByteBuffer nio() {
    ensureLive();
    return nio;
  }

  /** Bytes the chunk can hold (a power of two, at least the size asked for). */
  public int capacity() {
    return nio.capacity();
  }

  /** Readable bytes: {@code nio().remaining()}. */
  public int readableBytes() {
    return nio.remaining();
  }

  /** Offset of this chunk in its slab, for transports addressing registered memory. */
  public int slabOffset() {
    return offset;
  }

  /** The registration handle of the slab (0 for unregistered memory). */
  public long slabRegistration() {
    return slab.registration;
  }

  /** What the pool's registrar attached to the slab (e.g. RDMA keys); null for tcp. */
  public Object slabDetails() {
    return slab.details;
  }

  /** The slab's memory, for transports computing addresses of registered memory. */
  public ByteBuffer slabMemory() {
    return slab.memory;
  }

  public BufferPool pool() {
    return pool;
  }

  public int refCnt() {
    return refCnt.get();
  }

  /** Adds a reference. */
  public Buffer retain() {
    int n;
    do {
      n = refCnt.get();
      if (n <= 0) {
        throw new IllegalStateException("retain of a released buffer");
      }
    } while (!refCnt.compareAndSet(n, n + 1));
    return this;
  }

  /** Drops a reference; returns true when this was the last one and the chunk went back. */
  public boolean release() {
    int n = refCnt.decrementAndGet();
    if (n > 0) {
      return false;
    }
    if (n < 0) {
      refCnt.set(0);
      throw new IllegalStateException("buffer released more often than retained");
    }
    pool.recycle(this, slab);
    return true;
  }

  private void ensureLive() {
    if (refCnt.get() <= 0) {
      throw new IllegalStateException("use of a released buffer");
    }
  }

  @Override
  public String toString() {
    return "Buffer[capacity=" + capacity() + ", offset=" + offset + ", refCnt=" + refCnt.get()
        + "]";
  }
}
