/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.yarn.shuffle;

import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.net.InetAddress;

import org.apache.hadoop.conf.Configuration;
import org.hadoophpc.nativeio.HpcNative;
import org.hadoophpc.nativeio.RdmaDevice;
import org.hadoophpc.nativeio.RdmaDevices;
import org.hadoophpc.net.TransportConfigKeys;

/**
 * The RDMA device the shuffle's verbs tests run on ({@code -Dhadoop.hpc.test.verbs.device},
 * default the first device with an active port) and its netdev's IPv4 address. Without one the
 * test skips, unless {@code -Dhadoop.hpc.test.require.verbs=true} (the Soft-RoCE lane,
 * dev-support/bin/test-rdma) makes that a failure.
 */
record RdmaTestDevice(RdmaDevice device, InetAddress address) {

  /** The device, or the test is skipped (failed in the lane). */
  static RdmaTestDevice require() {
    String why = null;
    RdmaDevice device = null;
    InetAddress address = null;
    if (!HpcNative.isAvailable()) {
      why = "libhpcnative unavailable: " + HpcNative.unavailabilityCause().getMessage();
    } else {
      RdmaDevices devices = RdmaDevices.probe();
      String wanted = System.getProperty("hadoop.hpc.test.verbs.device", "");
      device = devices.devices().stream()
          .filter(d -> (wanted.isEmpty() || d.name().equals(wanted)) && d.hasActivePort())
          .findFirst().orElse(null);
      if (device == null) {
        why = "no active RDMA device" + (wanted.isEmpty() ? "" : " " + wanted) + " ("
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
        fail("no RDMA device (hadoop.hpc.test.require.verbs=true): " + why);
      }
      assumeTrue(false, "no RDMA device: run dev-support/bin/test-rdma (" + why + ")");
    }
    return new RdmaTestDevice(device, address);
  }

  /** Strict verbs on this device: a silent fall back to tcp would fail the test. */
  void configure(Configuration conf) {
    conf.set(TransportConfigKeys.TRANSPORT_KEY, "verbs");
    conf.setBoolean(TransportConfigKeys.OPEN_FAILS_WITHOUT_VERBS_KEY, true);
    conf.set(TransportConfigKeys.VERBS_DEVICE_KEY, device.name());
  }

  String host() {
    return address.getHostAddress();
  }
}
