/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.function.Supplier;

import org.apache.hadoop.conf.Configuration;
import org.hadoophpc.nativeio.RdmaDevices;
import org.hadoophpc.net.TransportConfigKeys;
import org.junit.jupiter.api.Test;

/**
 * The rule that decides whether HDFS DataTransfer uses the transport on a node: with or
 * without an RDMA device, for each value of dfs.hpc.datatransfer.enabled and of
 * hadoop.hpc.transport.
 */
class TransferUseTest {
  private static final Supplier<RdmaDevices> RDMA = () -> RdmaDevices.fromRecords(new String[] {
      "mlx5_0\t1\tInfiniBand\tACTIVE\t4096\t7\t1\t0002c90300a0b1c2\t16.35.2000\t0\t\t"});
  private static final Supplier<RdmaDevices> NONE = () -> RdmaDevices.fromRecords(new String[0]);
  private static final Supplier<RdmaDevices> NOT_ASKED = () -> {
    fail("the rule probed devices it does not need");
    return null;
  };

  private static Configuration conf(String enabled, String transport) {
    Configuration c = new Configuration(false);
    if (enabled != null) {
      c.set(TransferConfigKeys.ENABLED_KEY, enabled);
    }
    if (transport != null) {
      c.set("hadoop.hpc.transport", transport);
    }
    return c;
  }

  private static TransferUse.Decision decide(Configuration c, Supplier<RdmaDevices> probe) {
    return TransferUse.decide(TransferConf.from(c), c, probe);
  }

  @Test
  void autoWithoutRdmaStaysOnStockTcpAndSaysHowToChangeIt() {
    for (String transport : new String[] {null, "auto", "verbs"}) {
      TransferUse.Decision d = decide(conf(null, transport), NONE);
      assertTrue(d.stockTcp(), "transport " + transport);
      assertEquals("none", d.transport());
      assertTrue(d.whyStockTcp().startsWith("no usable RDMA ("), d.whyStockTcp());
      assertTrue(d.whyStockTcp().contains("dfs.hpc.datatransfer.enabled=true"), d.whyStockTcp());
    }
  }

  @Test
  void autoWithRdmaUsesVerbs() {
    TransferUse.Decision d = decide(conf("auto", null), RDMA);
    assertFalse(d.stockTcp());
    assertEquals("verbs", d.transport());
  }

  @Test
  void theTcpTransportAskedForIsUsedWithoutProbing() {
    TransferUse.Decision d = decide(conf(null, "tcp"), NOT_ASKED);
    assertNull(d.whyStockTcp());
    assertEquals("tcp", d.transport());
  }

  @Test
  void trueUsesWhateverTheTransportResolvesTo() {
    assertEquals("tcp", decide(conf("true", null), NONE).transport());
    assertFalse(decide(conf("true", null), NONE).stockTcp());
    assertEquals("verbs", decide(conf("TRUE", null), RDMA).transport());
  }

  @Test
  void falseIsStockTcpWithoutProbing() {
    TransferUse.Decision d = decide(conf("false", "verbs"), NOT_ASKED);
    assertEquals("dfs.hpc.datatransfer.enabled=false", d.whyStockTcp());
  }

  @Test
  void verbsRequiredIsLeftToTheFactoryToRefuse() {
    Configuration c = conf(null, "verbs");
    c.setBoolean(TransportConfigKeys.OPEN_FAILS_WITHOUT_VERBS_KEY, true);
    TransferUse.Decision d = decide(c, NONE);
    assertFalse(d.stockTcp(), "strict verbs must fail loudly in the factory, not go quiet");
  }

  @Test
  void aTcpTransportNotAskedForIsStockTcpOnceOpenUnderAutoOnly() {
    Configuration auto = conf(null, null);
    assertTrue(TransferUse.whyStockTcpOnceOpen(TransferConf.from(auto), auto, "tcp")
        .startsWith("no usable RDMA"));
    assertNull(TransferUse.whyStockTcpOnceOpen(TransferConf.from(auto), auto, "verbs"));
    Configuration asked = conf(null, "tcp");
    assertNull(TransferUse.whyStockTcpOnceOpen(TransferConf.from(asked), asked, "tcp"));
    Configuration forced = conf("true", null);
    assertNull(TransferUse.whyStockTcpOnceOpen(TransferConf.from(forced), forced, "tcp"));
  }
}
