/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.function.Supplier;

import org.apache.hadoop.conf.Configuration;
import org.hadoophpc.nativeio.RdmaDevices;
import org.junit.jupiter.api.Test;

class TransportSelectorTest {
  private static final String OPEN_FAILS = TransportConfigKeys.OPEN_FAILS_WITHOUT_VERBS_KEY;

  private static final String[] IB_AND_ROCE = {
    "mlx5_0\t1\tInfiniBand\tACTIVE\t4096\t7\t1\t0002c90300a0b1c2\t16.35.2000\t0\t\t",
    "mlx5_0\t2\tInfiniBand\tDOWN\t0\t0\t1\t0002c90300a0b1c2\t16.35.2000\t0\t\t",
    "rxe0\t1\tRoCE\tACTIVE\t1024\t0\t2\t505400fffe123456\t\t0\t\t",
  };
  private static final Supplier<RdmaDevices> DEVICES = () -> RdmaDevices.fromRecords(IB_AND_ROCE);
  private static final Supplier<RdmaDevices> NONE = () -> RdmaDevices.fromRecords(new String[0]);

  /** A transport configuration from key/value pairs, no defaults files (shared by tests). */
  static TransportConf conf(String... kv) {
    Configuration c = new Configuration(false);
    for (int i = 0; i < kv.length; i += 2) {
      c.set(kv[i], kv[i + 1]);
    }
    return TransportConf.from(c);
  }

  @Test
  void tcpAskedIsTcpWithoutReason() throws Exception {
    TransportSelector.Selection s =
        TransportSelector.select(conf("hadoop.hpc.transport", "tcp"), DEVICES);
    assertFalse(s.verbs());
    assertEquals("", s.reason());
  }

  @Test
  void autoPicksFirstActivePort() throws Exception {
    TransportSelector.Selection s = TransportSelector.select(conf(), DEVICES);
    assertTrue(s.verbs());
    assertEquals("mlx5_0", s.device().name());
    assertEquals(1, s.port());
  }

  @Test
  void autoWithoutDevicesFallsBackWithReason() throws Exception {
    TransportSelector.Selection s = TransportSelector.select(conf(), NONE);
    assertFalse(s.verbs());
    assertTrue(s.reason().contains("no RDMA devices"), s.reason());
  }

  @Test
  void hibdRoceKeySelectsRoceDevice() throws Exception {
    TransportSelector.Selection s =
        TransportSelector.select(conf("hadoop.roce.enabled", "true"), DEVICES);
    assertTrue(s.verbs());
    assertEquals("rxe0", s.device().name());
  }

  @Test
  void hibdDeviceNameIsHonoured() throws Exception {
    TransportSelector.Selection s =
        TransportSelector.select(conf("hadoop.rdma.dev.name", "rxe0"), DEVICES);
    assertEquals("rxe0", s.device().name());
  }

  @Test
  void wrongDeviceNameListsTheDevicesThatExist() throws Exception {
    TransportSelector.Selection s = TransportSelector.select(
        conf("hadoop.hpc.transport", "verbs", "hadoop.hpc.transport.verbs.device", "mlx4_9"),
        DEVICES);
    assertFalse(s.verbs());
    assertTrue(s.reason().contains("mlx4_9"), s.reason());
    assertTrue(s.reason().contains("mlx5_0 (InfiniBand)"), s.reason());
    assertTrue(s.reason().contains("rxe0 (RoCE)"), s.reason());
  }

  @Test
  void downPortIsNotUsed() throws Exception {
    TransportSelector.Selection s = TransportSelector.select(
        conf("hadoop.hpc.transport.verbs.device", "mlx5_0", "hadoop.hpc.transport.verbs.port", "2"),
        DEVICES);
    assertFalse(s.verbs());
    assertTrue(s.reason().contains("port 2"), s.reason());
  }

  @Test
  void strictVerbsFailsWithTheReason() {
    TransportException e = assertThrows(TransportException.class, () -> TransportSelector.select(
        conf("hadoop.hpc.transport", "verbs", OPEN_FAILS, "true"), NONE));
    assertTrue(e.getMessage().contains("no RDMA devices"), e.getMessage());
    assertTrue(e.getMessage().contains(OPEN_FAILS), e.getMessage());
  }

  @Test
  void ibAndRoceTogetherIsAConfigurationError() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> conf("hadoop.ib.enabled", "true", "hadoop.roce.enabled", "true"));
    assertTrue(e.getMessage().contains("hadoop.roce.enabled"), e.getMessage());
  }

  @Test
  void badTransportNameIsNamed() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> conf("hadoop.hpc.transport", "infiniband"));
    assertTrue(e.getMessage().contains("auto, verbs, tcp"), e.getMessage());
  }
}
