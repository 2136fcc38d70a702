/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.nativeio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RdmaDevicesTest {
  /** The first record and the open-failure record below are the ones test_format.c expects. */
  private static final String[] TWO_DEVICES = {
    "mlx5_0\t1\tInfiniBand\tACTIVE\t4096\t7\t1\t0002c90300a0b1c2\t16.35.2000\t0\t\t",
    "mlx5_0\t2\tInfiniBand\tDOWN\t0\t0\t1\t0002c90300a0b1c2\t16.35.2000\t0\t\t",
    "rxe0\t1\tRoCE\tACTIVE\t1024\t0\t2\t505400fffe123456\t\t0\t\t",
  };

  @Test
  void probeListsDevicesOrExplainsWhyNot() {
    RdmaDevices devices = RdmaDevices.probe();

    if (devices.isEmpty()) {
      String reason = devices.reason().orElseThrow();
      String expected = HpcNative.isAvailable() ? "no RDMA devices found: " : "libhpcnative";
      assertTrue(reason.startsWith(expected), reason);
    } else {
      assertFalse(devices.reason().isPresent());
      for (RdmaDevice device : devices.devices()) {
        assertFalse(device.name().isEmpty());
      }
    }
  }

  @Test
  void findOfAnUnknownNameExplains() {
    NativeIoException e = assertThrows(NativeIoException.class,
        () -> RdmaDevices.find("hpcn-no-such-device"));

    assertTrue(e.getMessage().startsWith(
        "find RDMA device hpcn-no-such-device failed: no such device; "), e.getMessage());
  }

  @Test
  void recordsAreGroupedIntoDevicesAndPorts() {
    RdmaDevices devices = RdmaDevices.fromRecords(TWO_DEVICES);

    assertEquals(2, devices.devices().size());
    RdmaDevice mlx = devices.devices().get(0);
    assertEquals("mlx5_0", mlx.name());
    assertEquals("0002:c903:00a0:b1c2", mlx.nodeGuidText());
    assertEquals("16.35.2000", mlx.firmwareVersion());
    assertEquals(2, mlx.physicalPortCount());
    assertTrue(mlx.hasActivePort());

    RdmaPort port1 = mlx.ports().get(0);
    assertEquals(1, port1.number());
    assertEquals(RdmaPort.LinkLayer.INFINIBAND, port1.linkLayer());
    assertEquals(RdmaPort.State.ACTIVE, port1.state());
    assertEquals(4096, port1.activeMtu());
    assertEquals(7, port1.lid());
    assertEquals(1, port1.gidCount());
    assertFalse(mlx.ports().get(1).isActive());

    RdmaPort roce = devices.devices().get(1).ports().get(0);
    assertEquals(RdmaPort.LinkLayer.ROCE, roce.linkLayer());
    assertEquals("port 1 RoCE ACTIVE mtu 1024 lid 0 gids 2", roce.toString());
    assertEquals(devices.devices(), RdmaDevices.fromRecords(TWO_DEVICES).devices());
  }

  @Test
  void deviceThatCouldNotBeOpenedCarriesTheFailure() {
    RdmaDevices devices = RdmaDevices.fromRecords(new String[] {
      "mlx5_1\t0\tunknown\tUNKNOWN\t0\t0\t0\t0000000000000000\t\t13\tibv_open_device"
          + "\tPermission denied",
    });

    RdmaDevice device = devices.devices().get(0);
    assertTrue(device.ports().isEmpty());
    NativeIoException problem = device.problem().orElseThrow();
    assertEquals("ibv_open_device(mlx5_1) failed: errno 13 (Permission denied)",
        problem.getMessage());
    assertEquals(13, problem.errno());
  }

  @Test
  void wrongNameListsTheDevicesThatExist() {
    RdmaDevices devices = RdmaDevices.fromRecords(TWO_DEVICES);

    NativeIoException e = assertThrows(NativeIoException.class, () -> devices.device("mlx5_9"));

    assertEquals("find RDMA device mlx5_9 failed: no such device; devices present: "
        + "mlx5_0 (InfiniBand), rxe0 (RoCE)", e.getMessage());
  }

  @Test
  void rightNameIsFound() throws NativeIoException {
    assertEquals("rxe0", RdmaDevices.fromRecords(TWO_DEVICES).device("rxe0").name());
  }

  @Test
  void noRecordsMeansNoDevicesWithAReason() {
    RdmaDevices devices = RdmaDevices.fromRecords(new String[0]);

    assertTrue(devices.isEmpty());
    assertTrue(devices.reason().orElseThrow().startsWith("no RDMA devices found: "));
  }

  @Test
  void reasonDistinguishesMissingDriverFromMissingProvider(@TempDir Path sysfs)
      throws IOException {
    assertEquals(RdmaDevices.NO_DEVICES_REASON,
        RdmaDevices.noDevicesReason(sysfs.resolve("absent").toFile()));
    assertEquals(RdmaDevices.NO_DEVICES_REASON, RdmaDevices.noDevicesReason(sysfs.toFile()));
    Files.createDirectory(sysfs.resolve("mlx5_0"));
    assertEquals(RdmaDevices.NO_PROVIDER_REASON, RdmaDevices.noDevicesReason(sysfs.toFile()));
    assertTrue(RdmaDevices.NO_DEVICES_REASON.contains("modprobe rdma_rxe"));
  }

  @Test
  void malformedRecordIsAProgrammingError() {
    assertThrows(IllegalStateException.class,
        () -> RdmaDevices.fromRecords(new String[] {"mlx5_0\t1"}));
  }

  @Test
  void devicesAreImmutable() {
    List<RdmaDevice> devices = RdmaDevices.fromRecords(TWO_DEVICES).devices();
    assertThrows(UnsupportedOperationException.class, () -> devices.remove(0));
  }
}
