/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A bounded pool of direct memory in power-of-two size classes, carved from large slabs that are
 * registered once with a {@link MemoryRegistrar} (RDMA memory registration for verbs, nothing for
 * TCP): memory is never registered per I/O.
 *
 * <p>Back-pressure is a return value: {@link #allocate(int)} returns {@code null} when the pool
 * is at {@code maxBytes}; {@link #allocate(int, long)} waits for a release up to a timeout. Slabs
 * whose chunks are all free are given back when another size class needs the room, so pool memory
 * follows the operations in flight, not the number of connections.
 *
 * <p>Thread-safe: one lock guards the free lists (allocation is per message, not per byte).
 */
public final class BufferPool implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(BufferPool.class);

  /** Registers slabs for the transport: returns an opaque handle, 0 if nothing is needed. */
  public interface MemoryRegistrar {
    MemoryRegistrar NONE = new MemoryRegistrar() {
      @Override
      public long register(ByteBuffer slab) {
        return 0;
      }

      @Override
      public void deregister(long handle) {
      }
    };

    long register(ByteBuffer slab) throws IOException;

    /**
     * What the transport wants at hand for every buffer of the slab {@code handle} registered
     * (e.g. its RDMA address and keys), so that the data path needs no lookup: see
     * {@link Buffer#slabDetails()}. Called once per slab, right after {@link #register}.
     */
    default Object details(long handle) {
      return null;
    }

    void deregister(long handle) throws IOException;
  }

  /** A registered block of direct memory split into equal chunks of one size class. */
  static final class Slab {
    final ByteBuffer memory;
    final long registration;
    final Object details;
    final int sizeClass;
    final ArrayDeque<Buffer> free = new ArrayDeque<>();
    int inUse;

    Slab(ByteBuffer memory, long registration, Object details, int sizeClass) {
      this.memory = memory;
      this.registration = registration;
      this.details = details;
      this.sizeClass = sizeClass;
    }
  }

  public static final int MIN_CHUNK = 4096;
  /** The first slab of a size class (see {@link #slabBytes}). */
  static final int FIRST_SLAB = 64 * 1024;

  private final long maxBytes;
  private final int slabSize;
  private final int maxChunk;
  private final MemoryRegistrar registrar;
  /** Per size class (index = log2(chunk / MIN_CHUNK)): its slabs. */
  private final List<List<Slab>> slabs = new ArrayList<>();
  private long reservedBytes;
  private long usedBytes;
  private int outstanding;
  private long exhaustedCount;
  /** Slabs that could not be added (registration refused, no direct memory). */
  private long slabFailures;
  private boolean closed;

  /**
   * @param maxBytes upper bound of all slabs together (registered memory)
   * @param slabSize bytes per slab once a size class has grown (its first slabs are smaller:
   *                 {@link #slabBytes}; a slab holds at least one chunk)
   * @param maxChunk largest buffer handed out, a power of two
   */
  public BufferPool(long maxBytes, int slabSize, int maxChunk, MemoryRegistrar registrar) {
    if (Integer.bitCount(maxChunk) != 1 || maxChunk < MIN_CHUNK) {
      throw new IllegalArgumentException("maxChunk " + maxChunk + " is not a power of two >= "
          + MIN_CHUNK);
    }
    if (maxBytes < maxChunk) {
      throw new IllegalArgumentException("buffer pool of " + maxBytes
          + " bytes cannot hold one chunk of " + maxChunk + " bytes");
    }
    this.maxBytes = maxBytes;
    this.slabSize = Math.max(slabSize, MIN_CHUNK);
    this.maxChunk = maxChunk;
    this.registrar = registrar;
    for (int c = MIN_CHUNK; c <= maxChunk; c <<= 1) {
      slabs.add(new ArrayList<>());
    }
  }

  /** The largest size {@link #allocate(int)} accepts. */
  public int maxChunk() {
    return maxChunk;
  }

  /** A buffer of at least {@code size} bytes, or {@code null} when the pool is exhausted. */
  public Buffer allocate(int size) {
    if (size < 0 || size > maxChunk) {
      throw new IllegalArgumentException("buffer of " + size + " bytes: the pool's chunks are "
          + "at most " + maxChunk + " bytes (hadoop.hpc.transport.max.message.size)");
    }
    synchronized (this) {
      if (closed) {
        throw new IllegalStateException("buffer pool is closed");
      }
      Buffer b = take(classIndex(size));
      if (b == null) {
        exhaustedCount++;
        return null;
      }
      b.reset(size);
      return b;
    }
  }

  /** Like {@link #allocate(int)} but waits up to {@code timeoutMs} for memory to be released. */
  public Buffer allocate(int size, long timeoutMs) throws TransportTimeoutException,
      InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    synchronized (this) {
      while (true) {
        Buffer b = allocate(size);
        if (b != null) {
          return b;
        }
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new TransportTimeoutException("no " + size + "-byte buffer within " + timeoutMs
              + " ms: registered memory is exhausted (" + usedBytes + " of " + maxBytes
              + " bytes in use; raise hadoop.hpc.transport.buffer.pool.max)");
        }
        TimeUnit.NANOSECONDS.timedWait(this, left);
      }
    }
  }

  private int classIndex(int size) {
    int chunk = size <= MIN_CHUNK ? MIN_CHUNK : Integer.highestOneBit(size - 1) << 1;
    return Integer.numberOfTrailingZeros(chunk) - Integer.numberOfTrailingZeros(MIN_CHUNK);
  }

  private Buffer take(int ci) {
    int chunk = MIN_CHUNK << ci;
    List<Slab> list = slabs.get(ci);
    for (int i = 0, n = list.size(); i < n; i++) { // no iterator: no garbage per allocation
      Slab s = list.get(i);
      Buffer b = s.free.poll();
      if (b != null) {
        s.inUse++;
        usedBytes += chunk;
        outstanding++;
        return b;
      }
    }
    int bytes = slabBytes(chunk, list.size());
    if (reservedBytes + bytes > maxBytes && !trimFor(reservedBytes + bytes - maxBytes)) {
      return null;
    }
    Slab s;
    try {
      s = newSlab(ci, bytes);
    } catch (IOException | OutOfMemoryError e) {
      // Registration refused (locked-memory limit) or no direct memory: treat as exhaustion,
      // and say so once, since back-pressure alone would not tell anyone why.
      if (slabFailures++ == 0) {
        LOG.warn("buffer pool: cannot add a slab of {} bytes ({} of {} reserved): {}; check the"
            + " locked-memory limit (ulimit -l; systemd LimitMEMLOCK; Slurm"
            + " PropagateResourceLimits) and free memory against"
            + " hadoop.hpc.transport.buffer.pool.max", bytes, reservedBytes, maxBytes,
            e.toString());
      }
      return null;
    }
    slabs.get(ci).add(s);
    Buffer b = s.free.poll();
    s.inUse++;
    usedBytes += chunk;
    outstanding++;
    return b;
  }

  /**
   * Bytes of the next slab of a size class of {@code chunk}-byte buffers that has {@code held}
   * slabs: {@link #FIRST_SLAB} for the first, twice as much for each one after, up to
   * {@code slabSize}, and never less than one chunk. A process that sends a few messages (a
   * reducer, a task's HDFS client) allocates and zeroes kilobytes per size class it uses, not
   * megabytes; a busy class still grows to full slabs after a few.
   */
  int slabBytes(int chunk, int held) {
    long grown = (long) FIRST_SLAB << Math.min(held, 20);
    return (int) Math.max(chunk, Math.min(slabSize, grown));
  }

  private Slab newSlab(int ci, int bytes) throws IOException {
    int chunk = MIN_CHUNK << ci;
    ByteBuffer mem = ByteBuffer.allocateDirect(bytes);
    long reg = registrar.register(mem);
    Slab s = new Slab(mem, reg, registrar.details(reg), ci);
    for (int off = 0; off + chunk <= bytes; off += chunk) {
      s.free.add(new Buffer(this, s, off, chunk));
    }
    reservedBytes += bytes;
    return s;
  }

  /** Gives back wholly free slabs until {@code needed} bytes are freed; true on success. */
  private boolean trimFor(long needed) {
    long freed = 0;
    for (List<Slab> list : slabs) {
      for (int i = list.size() - 1; i >= 0 && freed < needed; i--) {
        Slab s = list.get(i);
        if (s.inUse == 0) {
          list.remove(i);
          freed += s.memory.capacity();
          reservedBytes -= s.memory.capacity();
          deregisterQuietly(s);
        }
      }
    }
    return freed >= needed;
  }

  private void deregisterQuietly(Slab s) {
    try {
      registrar.deregister(s.registration);
    } catch (IOException e) {
      // Deregistration of memory we no longer use cannot be retried; the transport logs it.
      throw new IllegalStateException("cannot deregister a buffer slab", e);
    }
  }

  void recycle(Buffer b, Slab s) {
    synchronized (this) {
      s.free.push(b);
      s.inUse--;
      usedBytes -= MIN_CHUNK << s.sizeClass;
      outstanding--;
      notifyAll();
    }
  }

  /** Bytes of slabs (registered memory) held now; never above {@link #maxBytes()}. */
  public synchronized long reservedBytes() {
    return reservedBytes;
  }

  /** Bytes of chunks handed out and not yet released. */
  public synchronized long usedBytes() {
    return usedBytes;
  }

  /** Buffers handed out and not yet released: 0 when nothing leaks. */
  public synchronized int outstandingBuffers() {
    return outstanding;
  }

  /** How often an allocation found the pool exhausted (back-pressure events). */
  public synchronized long exhaustedCount() {
    return exhaustedCount;
  }

  /** How often a new slab could not be registered or allocated (locked-memory limit, ...). */
  public synchronized long slabFailures() {
    return slabFailures;
  }

  public long maxBytes() {
    return maxBytes;
  }

  /**
   * Deregisters and drops every slab. Buffers still outstanding (see
   * {@link #outstandingBuffers()}) keep valid memory until garbage-collected but are no longer
   * registered.
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    for (List<Slab> list : slabs) {
      for (Slab s : list) {
        deregisterQuietly(s);
      }
      list.clear();
    }
    reservedBytes = 0;
    notifyAll();
  }

  @Override
  public synchronized String toString() {
    return "BufferPool[reserved=" + reservedBytes + ", used=" + usedBytes + ", max=" + maxBytes
        + ", outstanding=" + outstanding + "]";
  }
}
