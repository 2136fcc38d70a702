/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

class BufferPoolTest {

  /** Counts registrations, like a verbs registrar would. */
  static final class CountingRegistrar implements BufferPool.MemoryRegistrar {
    final AtomicInteger registered = new AtomicInteger();
    final AtomicInteger live = new AtomicInteger();

    @Override
    public long register(ByteBuffer slab) {
      live.incrementAndGet();
      return registered.incrementAndGet();
    }

    @Override
    public void deregister(long handle) {
      live.decrementAndGet();
    }
  }

  @Test
  void sizesRoundUpToPowerOfTwoClasses() {
    try (BufferPool pool = new BufferPool(1 << 20, 64 << 10, 64 << 10,
        BufferPool.MemoryRegistrar.NONE)) {
      int[][] cases = {{0, 4096}, {1, 4096}, {4096, 4096}, {4097, 8192}, {65536, 65536}};
      for (int[] c : cases) {
        Buffer b = pool.allocate(c[0]);
        assertEquals(c[1], b.capacity(), "size " + c[0]);
        assertEquals(c[0], b.nio().remaining(), "limit is the size asked for");
        assertTrue(b.release());
      }
      assertThrows(IllegalArgumentException.class, () -> pool.allocate((64 << 10) + 1));
      assertEquals(0, pool.outstandingBuffers());
    }
  }

  /**
   * A size class starts with a small slab and doubles from slab to slab up to the configured
   * size: one small message does not cost (zero and, for verbs, register) megabytes.
   */
  @Test
  void slabsGrowFromSmallToTheConfiguredSize() {
    CountingRegistrar reg = new CountingRegistrar();
    try (BufferPool pool = new BufferPool(64 << 20, 4 << 20, 1 << 20, reg)) {
      Buffer first = pool.allocate(100);
      assertEquals(BufferPool.FIRST_SLAB, pool.reservedBytes(), "one small slab for one message");
      assertEquals(1, reg.registered.get());
      List<Buffer> held = new ArrayList<>(List.of(first));
      // 64k, 128k, 256k, ..., 4m, 4m: 16 + 32 + 64 + ... buffers of 4 KiB
      for (int i = 1; i <= (64 + 128 + 256 + 512 + 1024 + 2048 + 4096) / 4; i++) {
        held.add(pool.allocate(4096));
      }
      assertEquals((64L + 128 + 256 + 512 + 1024 + 2048 + 4096 + 4096) << 10,
          pool.reservedBytes(), pool.toString());
      assertEquals(8, reg.registered.get());
      Buffer big = pool.allocate(1 << 20);
      assertEquals(1 << 20, big.capacity(), "a slab holds at least one chunk");
      held.add(big);
      for (Buffer b : held) {
        assertTrue(b.release());
      }
      assertEquals(0, pool.outstandingBuffers());
      assertEquals(4 << 20, pool.slabBytes(4096, 30), "grown classes keep full slabs");
    }
  }

  @Test
  void exhaustionIsANullNotAnException() {
    CountingRegistrar reg = new CountingRegistrar();
    try (BufferPool pool = new BufferPool(64 << 10, 16 << 10, 16 << 10, reg)) {
      List<Buffer> held = new ArrayList<>();
      Buffer b;
      while ((b = pool.allocate(16 << 10)) != null) {
        held.add(b);
      }
      assertEquals(4, held.size());
      assertEquals(1, pool.exhaustedCount());
      assertTrue(pool.reservedBytes() <= pool.maxBytes());
      assertEquals(4, reg.registered.get(), "one registration per slab, none per buffer");
      held.remove(0).release();
      Buffer reused = pool.allocate(16 << 10);
      assertNotNull(reused);
      reused.release();
      assertEquals(4, reg.registered.get(), "reuse does not register again");
      held.forEach(Buffer::release);
      assertEquals(0, pool.outstandingBuffers());
      assertEquals(0, pool.usedBytes());
    }
    assertEquals(0, reg.live.get(), "close deregisters every slab");
  }

  @Test
  void freeSlabsOfOtherClassesAreGivenBack() {
    CountingRegistrar reg = new CountingRegistrar();
    try (BufferPool pool = new BufferPool(32 << 10, 16 << 10, 16 << 10, reg)) {
      Buffer a = pool.allocate(4096);
      Buffer b = pool.allocate(8192);
      a.release();
      b.release();
      // both slabs are free: a 16 KiB buffer needs one of them back
      Buffer big = pool.allocate(16 << 10);
      assertNotNull(big);
      assertTrue(pool.reservedBytes() <= pool.maxBytes());
      big.release();
    }
  }

  @Test
  void referenceCounting() {
    try (BufferPool pool = new BufferPool(1 << 20, 64 << 10, 64 << 10,
        BufferPool.MemoryRegistrar.NONE)) {
      Buffer b = pool.allocate(100);
      assertSame(b, b.retain());
      assertEquals(2, b.refCnt());
      assertTrue(!b.release());
      assertTrue(b.release());
      assertThrows(IllegalStateException.class, b::release);
      assertThrows(IllegalStateException.class, b::nio);
      assertThrows(IllegalStateException.class, b::retain);
      assertEquals(0, pool.outstandingBuffers());
    }
  }

  @Test
  void timedAllocationWaitsForARelease() throws Exception {
    try (BufferPool pool = new BufferPool(16 << 10, 16 << 10, 16 << 10,
        BufferPool.MemoryRegistrar.NONE)) {
      Buffer only = pool.allocate(16 << 10);
      assertNull(pool.allocate(16 << 10));
      CompletableFuture<Buffer> waiter = CompletableFuture.supplyAsync(() -> {
        try {
          return pool.allocate(16 << 10, 30_000);
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      only.release();
      Buffer got = waiter.get(30, TimeUnit.SECONDS);
      assertNotNull(got);
      got.release();
      Buffer again = pool.allocate(16 << 10);
      TransportTimeoutException e = assertThrows(TransportTimeoutException.class,
          () -> pool.allocate(16 << 10, 50));
      assertTrue(e.getMessage().contains("hadoop.hpc.transport.buffer.pool.max"), e.getMessage());
      again.release();
    }
  }

  @Test
  void chunksDoNotOverlap() {
    try (BufferPool pool = new BufferPool(1 << 20, 64 << 10, 64 << 10,
        BufferPool.MemoryRegistrar.NONE)) {
      Buffer a = pool.allocate(4096);
      Buffer b = pool.allocate(4096);
      a.nio().put(0, (byte) 1);
      b.nio().put(0, (byte) 2);
      assertEquals(1, a.nio().get(0));
      assertEquals(2, b.nio().get(0));
      a.release();
      b.release();
    }
  }
}
