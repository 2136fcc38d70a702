/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.nativeio;

import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;

/**
 * The device probe against a real verbs device: on a host with none it skips, unless {@value
 * #REQUIRE_PROPERTY} is true (as in the Soft-RoCE VM lane, dev-support/bin/test-rdma), where a
 * missing device is a failure. {@value #DEVICE_PROPERTY} names the device to check; without it
 * the first device with an ACTIVE port is used.
 */
class RdmaDeviceProbeVerbsTest {
  static final String REQUIRE_PROPERTY = "hadoop.hpc.test.require.verbs";
  static final String DEVICE_PROPERTY = "hadoop.hpc.test.verbs.device";

  /** Probes and returns the device under test, or skips (fails when a device is required). */
  private static RdmaDevice deviceUnderTest() {
    boolean required = Boolean.getBoolean(REQUIRE_PROPERTY);
    RdmaDevices devices = RdmaDevices.probe();
    if (devices.isEmpty()) {
      String reason = devices.reason().orElse("no reason given");
      if (required) {
        fail(REQUIRE_PROPERTY + "=true but there is no RDMA device: " + reason);
      }
      assumeTrue(false, "no RDMA device: run dev-support/bin/test-rdma (" + reason + ")");
    }
    String name = System.getProperty(DEVICE_PROPERTY, "");
    if (!name.isEmpty()) {
      try {
        return devices.device(name);
      } catch (NativeIoException e) {
        // Naming a device that is not there is a mistake, not an absent capability.
        return fail(DEVICE_PROPERTY + "=" + name + ": " + e.getMessage(), e);
      }
    }
    return devices.devices().stream().filter(RdmaDevice::hasActivePort).findFirst()
        .orElse(devices.devices().get(0));
  }

  private static RdmaPort activePort(RdmaDevice device) {
    return device.ports().stream().filter(RdmaPort::isActive).findFirst()
        .orElseGet(() -> fail(device.name() + " has no ACTIVE port: " + device));
  }

  @Test
  void deviceOpensAndHasAnActiveRocePort() {
    RdmaDevice device = deviceUnderTest();

    assertTrue(device.problem().isEmpty(), () -> "device could not be queried: " + device);
    assertTrue(device.physicalPortCount() >= 1, device::toString);
    RdmaPort port = activePort(device);
    assertTrue(port.linkLayer() == RdmaPort.LinkLayer.ROCE,
        () -> "expected a RoCE port (Soft-RoCE or a RoCE HCA): " + device);
    assertTrue(port.activeMtu() >= 256, () -> "active MTU: " + port);
    assertTrue(port.gidCount() >= 1, () -> "an ACTIVE RoCE port has a GID table: " + port);
    if (device.name().startsWith("rxe")) {
      // Soft-RoCE always holds the MAC-derived default GID at index 0; the netdev's IPv4
      // address adds its IPv4-mapped GID (index 1, the one rdma-core's tools use with -g 1).
      assertTrue(port.gidCount() >= 2,
          () -> "Soft-RoCE over an IPv4 netdev has the default and the IPv4 GID: " + port);
    }
  }

  @Test
  void deviceHasANodeGuid() {
    RdmaDevice device = deviceUnderTest();

    assertNotEquals(0L, device.nodeGuid(), device::toString);
    assertTrue(device.nodeGuidText().matches("[0-9a-f]{4}(:[0-9a-f]{4}){3}"),
        device.nodeGuidText());
  }

  @Test
  void unknownNameListsTheDevicePresent() {
    RdmaDevice device = deviceUnderTest();

    NativeIoException e = assertThrows(NativeIoException.class,
        () -> RdmaDevices.find("no_such_dev"));

    String message = e.getMessage();
    assertTrue(message.contains("no_such_dev") && message.contains("devices present: ")
        && message.contains(device.name() + " ("), message);
  }

  @Test
  void checkNativeReportsTheDevice() {
    RdmaDevice device = deviceUnderTest();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();

    int rc = CheckNative.run(new String[0], new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));

    String text = out.toString(StandardCharsets.UTF_8);
    System.out.print(text);
    List<String> lines = Arrays.asList(text.split("\n"));
    assertTrue(rc == 0, () -> "exit " + rc + ": " + err);
    assertTrue(lines.stream().anyMatch(l -> l.matches("hpcnative:\\s+true\\s.*")), text);
    assertTrue(lines.stream().anyMatch(l -> l.matches("rdma:\\s+true\\s.*")), text);
    List<String> deviceLines = lines.stream()
        .filter(l -> l.trim().startsWith(device.name() + " port ")).collect(Collectors.toList());
    assertTrue(deviceLines.stream().anyMatch(l -> l.contains(" ACTIVE ")), text);
  }
}
