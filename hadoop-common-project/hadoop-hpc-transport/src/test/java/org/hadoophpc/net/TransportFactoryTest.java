/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.function.Supplier;

import org.hadoophpc.nativeio.RdmaDevices;
import org.junit.jupiter.api.Test;

class TransportFactoryTest {
  private static final String OPEN_FAILS = TransportConfigKeys.OPEN_FAILS_WITHOUT_VERBS_KEY;

  private static final Supplier<RdmaDevices> NONE = () -> RdmaDevices.fromRecords(new String[0]);
  /** A device this machine does not have: opening it must fail and fall back. */
  private static final Supplier<RdmaDevices> PHANTOM = () -> RdmaDevices.fromRecords(new String[] {
    "mlx5_phantom\t1\tInfiniBand\tACTIVE\t4096\t7\t1\t0002c90300a0b1c2\t16.35.2000\t0\t\t"});

  private static TransportConf conf(String... kv) {
    return TransportSelectorTest.conf(kv);
  }

  @Test
  void tcpWhenAsked() throws Exception {
    try (Transport t = TransportFactory.create(conf("hadoop.hpc.transport", "tcp"), NONE)) {
      assertEquals("tcp", t.name());
    }
  }

  @Test
  void autoWithoutDevicesIsTcp() throws Exception {
    try (Transport t = TransportFactory.create(conf(), NONE)) {
      assertEquals("tcp", t.name());
    }
  }

  @Test
  void verbsThatCannotOpenFallsBackToTcp() throws Exception {
    try (Transport t = TransportFactory.create(conf("hadoop.ib.enabled", "true"), PHANTOM)) {
      assertEquals("tcp", t.name());
    }
  }

  @Test
  void strictVerbsThatCannotOpenFailsWithTheReason() {
    TransportException e = assertThrows(TransportException.class, () -> TransportFactory.create(
        conf("hadoop.hpc.transport", "verbs", OPEN_FAILS, "true"), PHANTOM));
    assertTrue(e.getMessage().contains("mlx5_phantom"), e.getMessage());
    assertTrue(e.getMessage().contains("failed to open"), e.getMessage());
  }

  @Test
  void strictVerbsWithoutDevicesFails() {
    TransportException e = assertThrows(TransportException.class, () -> TransportFactory.create(
        conf("hadoop.hpc.transport", "verbs", OPEN_FAILS, "true"), NONE));
    assertTrue(e.getMessage().contains("no RDMA devices"), e.getMessage());
  }
}
