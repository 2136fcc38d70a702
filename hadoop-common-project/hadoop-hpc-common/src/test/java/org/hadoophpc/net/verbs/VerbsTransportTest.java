/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.verbs;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;

import org.apache.hadoop.conf.Configuration;
import org.hadoophpc.nativeio.HpcNative;
import org.hadoophpc.nativeio.RdmaDevice;
import org.hadoophpc.nativeio.RdmaDevices;
import org.hadoophpc.net.Transport;
import org.hadoophpc.net.TransportConf;
import org.hadoophpc.net.TransportConformanceTest;
import org.junit.jupiter.api.BeforeEach;

/**
 * The conformance suite on a real RDMA device: {@code -Dhadoop.hpc.test.verbs.device} (default:
 * the first with an active port), servers bound to the IPv4 address of its netdev. Skips without
 * a device, unless {@code -Dhadoop.hpc.test.require.verbs=true} (the Soft-RoCE lane,
 * dev-support/bin/test-rdma) makes that a failure.
 */
class VerbsTransportTest extends TransportConformanceTest {
  private static final String NO_DEVICE = "no RDMA device: run dev-support/bin/test-rdma";

  private RdmaDevice device;
  private InetAddress address;

  @BeforeEach
  void findDevice() throws IOException {
    String why = null;
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
  }

  @Override
  protected Transport newTransport(Configuration conf) throws Exception {
    assertNotNull(device, "findDevice ran first");
    return VerbsTransport.open(TransportConf.from(conf), device, 1);
  }

  @Override
  protected InetSocketAddress bindAddress() {
    return new InetSocketAddress(address, 0);
  }
}
