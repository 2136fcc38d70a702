/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.verbs;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.hadoophpc.nativeio.NativeIoException;
import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.RemoteRegion;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One rule: a region the application exposes is reachable by peers from {@link #expose} until
 * {@link #unexpose}, through a registration of exactly its bytes, and no longer: unexposing
 * first tells every connected peer (connections still being set up too), which then fails
 * later one-sided operations on the region before posting them (an RC queue pair does not
 * survive a remote access error), waits for their confirmations (at most the io timeout; a
 * connection that ends first counts as confirmed), then deregisters the region. A peer that
 * ignores the revocation gets a remote access error and loses its connection, never the memory.
 * The region key's low half is the registration's rkey, its high half an exposure id, so a
 * re-exposed buffer is not hit by an old revocation.
 *
 * <p>Thread-safe; revocations are sent and confirmed on the transport's event loop.
 */
final class VerbsExposures {
  private static final Logger LOG = LoggerFactory.getLogger(VerbsTransport.class);

  /** A region registered for remote access by {@link #expose}, until {@link #unexpose}. */
  private record Exposure(long handle) {
  }

  /** Peers still to confirm one revocation, and the latch the unexposing thread waits on. */
  private record Revocation(AtomicInteger pending, CountDownLatch confirmed) {
  }

  private final long ctx;
  private final VerbsEventLoop loop;
  private final long ioTimeoutMs;
  private final String deviceName;
  private final Map<Long, Exposure> byKey = new ConcurrentHashMap<>();
  private final Map<Long, Revocation> revocations = new ConcurrentHashMap<>();
  private final AtomicLong exposureIds = new AtomicLong();

  VerbsExposures(long ctx, VerbsEventLoop loop, long ioTimeoutMs, String deviceName) {
    this.ctx = ctx;
    this.loop = loop;
    this.ioTimeoutMs = ioTimeoutMs;
    this.deviceName = deviceName;
  }

  /** Registers exactly {@code buffer}'s bytes (memory of the transport's pool) for peers. */
  RemoteRegion expose(Buffer buffer) throws NativeIoException {
    long[] info = new long[3];
    long handle = VerbsNatives.regMr(ctx, buffer.slabMemory(), buffer.slabOffset(),
        buffer.capacity(), VerbsNatives.ACCESS_REMOTE_READ | VerbsNatives.ACCESS_REMOTE_WRITE,
        info);
    long key = (exposureIds.incrementAndGet() << 32) | (info[2] & 0xffff_ffffL);
    byKey.put(key, new Exposure(handle));
    return new RemoteRegion(info[0], buffer.capacity(), key);
  }

  /** Revokes the region at every connected peer, then deregisters it; once per region. */
  void unexpose(RemoteRegion region) {
    long key = region.key();
    Exposure exposure = byKey.remove(key);
    if (exposure == null) {
      return; // not exposed here, or unexposed already
    }
    try {
      revokeAtPeers(key, region);
    } finally {
      deregister(exposure);
    }
  }

  private void revokeAtPeers(long key, RemoteRegion region) {
    if (loop.isClosed()) {
      return;
    }
    AtomicInteger pending = new AtomicInteger(1);
    CountDownLatch confirmed = new CountDownLatch(1);
    revocations.put(key, new Revocation(pending, confirmed));
    boolean submitted = loop.submit(() -> {
      loop.forEachConnection(c -> {
        if (c.revoke(key)) {
          pending.incrementAndGet();
        }
      });
      if (pending.decrementAndGet() == 0) {
        confirmed.countDown();
      }
    });
    try {
      if (submitted && !loop.inLoop()) {
        if (!confirmed.await(ioTimeoutMs, TimeUnit.MILLISECONDS)) {
          LOG.warn("verbs: not every peer confirmed unexposing {} within {} ms", region,
              ioTimeoutMs);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      revocations.remove(key);
    }
  }

  /** One peer confirmed revoking {@code key} (or its connection ended first). */
  void confirmed(long key) {
    Revocation r = revocations.get(key);
    if (r != null && r.pending().decrementAndGet() == 0) {
      r.confirmed().countDown();
    }
  }

  /** The transport closes (its loop stopped): what is still exposed is deregistered. */
  void closeAll() {
    for (Exposure e : byKey.values()) {
      deregister(e);
    }
    byKey.clear();
  }

  private void deregister(Exposure exposure) {
    try {
      VerbsNatives.deregMr(ctx, exposure.handle());
    } catch (NativeIoException e) {
      LOG.warn("verbs: deregistering an exposed region on {} failed: {}", deviceName,
          e.getMessage());
    }
  }
}
