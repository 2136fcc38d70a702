/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import org.apache.hadoop.conf.Configuration;
import org.hadoophpc.nativeio.HpcNative;
import org.hadoophpc.nativeio.RdmaDevice;
import org.hadoophpc.nativeio.RdmaDevices;
import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.BufferPool;
import org.hadoophpc.net.Connection;
import org.hadoophpc.net.TransportConf;
import org.hadoophpc.net.TransportConfigKeys;

/**
 * What the verbs tests share: the device ({@code -Dhadoop.hpc.test.verbs.device}, default the
 * first with an active port, and the IPv4 address of its netdev), a skip with the reason
 * without one unless {@code -Dhadoop.hpc.test.require.verbs=true} (the Soft-RoCE lane) makes
 * that a failure, transports closed after the test with a leak check, and bounded waits.
 */
final class VerbsRig implements AutoCloseable {
  static final String NO_DEVICE = "no RDMA device: run dev-support/bin/test-rdma";
  static final long WAIT_SECONDS = 60;

  final RdmaDevice device;
  final InetAddress address;
  private final List<VerbsTransport> transports = new ArrayList<>();

  private VerbsRig(RdmaDevice device, InetAddress address) {
    this.device = device;
    this.address = address;
  }

  /** The rig on this host's device; skips (or fails, in the lane) without one. */
  static VerbsRig find() throws IOException {
    String why = null;
    RdmaDevice device = null;
    InetAddress address = null;
    if (!HpcNative.isAvailable()) {
      why = "libhpcnative unavailable: " + HpcNative.unavailabilityCause().getMessage();
    } else {
      RdmaDevices devices = RdmaDevices.probe();
      String wanted = System.getProperty("hadoop.hpc.test.verbs.device", "");
      for (RdmaDevice d : devices.devices()) {
        if ((wanted.isEmpty() || d.name().equals(wanted)) && d.hasActivePort()) {
          device = d;
          break;
        }
      }
      if (device == null) {
        why = (wanted.isEmpty() ? "no active device" : "no active device " + wanted) + " ("
            + devices.reason().orElse(devices.devices().toString()) + ")";
      } else {
        address = device.ipv4Address(1).orElse(null);
        if (address == null) {
          why = "device " + device.name() + " has no netdev with an IPv4 address";
        }
      }
    }
    if (why != null) {
      if (Boolean.getBoolean("hadoop.hpc.test.require.verbs")) {
        fail(NO_DEVICE + " (hadoop.hpc.test.require.verbs=true): " + why);
      }
      assumeTrue(false, NO_DEVICE + " (" + why + ")");
    }
    return new VerbsRig(device, address);
  }

  VerbsTransport open(Configuration conf) throws IOException {
    VerbsTransport t = VerbsTransport.open(TransportConf.from(conf), device, 1);
    transports.add(t);
    return t;
  }

  InetSocketAddress bindAddress() {
    return new InetSocketAddress(address, 0);
  }

  VerbsConnection connect(VerbsTransport from, InetSocketAddress to) throws Exception {
    return (VerbsConnection) await(from.connect(to));
  }

  /**
   * The configuration of the hostile-peer tests: a 64 MiB pool of 4 MiB slabs, 1 MiB messages,
   * 8 in flight, the given i/o timeout.
   */
  static Configuration smallConf(String ioTimeout) {
    Configuration c = new Configuration(false);
    c.set(TransportConfigKeys.IO_TIMEOUT_KEY, ioTimeout);
    c.set(TransportConfigKeys.CONNECT_TIMEOUT_KEY, "10s");
    c.set(TransportConfigKeys.BUFFER_POOL_MAX_KEY, "64m");
    c.set(TransportConfigKeys.BUFFER_SLAB_SIZE_KEY, "4m");
    c.set(TransportConfigKeys.MAX_MESSAGE_SIZE_KEY, "1m");
    c.set(TransportConfigKeys.MAX_INFLIGHT_KEY, "8");
    return c;
  }

  static <T> T await(CompletableFuture<T> f) throws Exception {
    return f.get(WAIT_SECONDS, TimeUnit.SECONDS);
  }

  /** The failure of {@code f}, which must fail. */
  static Throwable failure(CompletableFuture<?> f) throws Exception {
    try {
      f.get(WAIT_SECONDS, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      return e.getCause();
    }
    throw new AssertionError("expected a failure, got success");
  }

  /** Waits (bounded) for a condition another thread brings about. */
  static void waitFor(BooleanSupplier condition, String what) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
    while (!condition.getAsBoolean()) {
      assertTrue(System.nanoTime() < deadline, "timed out waiting until " + what);
      Thread.sleep(5);
    }
  }

  static Buffer filled(BufferPool pool, int size, int seed) {
    Buffer b = pool.allocate(size);
    assertNotNull(b, "pool exhausted: " + pool);
    ByteBuffer n = b.nio();
    for (int i = 0; i < size; i++) {
      n.put(i, (byte) (seed * 131 + i * 31 + (i >>> 11)));
    }
    n.limit(size);
    return b;
  }

  /** True when the first {@code n} bytes of {@code b} are all zero. */
  static boolean zeros(ByteBuffer b, int n) {
    for (int i = 0; i < n; i++) {
      if (b.get(i) != 0) {
        return false;
      }
    }
    return true;
  }

  @Override
  public void close() throws IOException {
    IOException failure = null;
    for (VerbsTransport t : transports) {
      try {
        t.close();
      } catch (IOException e) {
        if (failure == null) {
          failure = e;
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
    for (VerbsTransport t : transports) {
      assertEquals(0, t.bufferPool().outstandingBuffers(), "leaked buffers: " + t.bufferPool());
    }
  }
}
