/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.hadoop.conf.Configuration;
import org.hadoophpc.net.TransportConfigKeys;
import org.junit.jupiter.api.Test;

/**
 * The PULLs and the DATA window a DataNode offers per stream (by transport unless set) and the
 * PULLs a client parks.
 */
class TransferConfTest {
  @Test
  void pullsFollowTheTransportUnlessSet() {
    Configuration c = new Configuration(false);
    TransferConf byTransport = TransferConf.from(c);
    assertEquals(16, byTransport.pulls(true), "tcp (answers from files itself)");
    assertEquals(8, byTransport.pulls(false), "verbs");
    c.setInt(TransferConfigKeys.PULLS_KEY, 5);
    TransferConf set = TransferConf.from(c);
    assertEquals(5, set.pulls(true));
    assertEquals(5, set.pulls(false));
  }

  @Test
  void theWindowFollowsTheTransportUnlessSet() {
    Configuration c = new Configuration(false);
    TransferConf byTransport = TransferConf.from(c);
    assertEquals(32, byTransport.window(true), "tcp (answers from files itself)");
    assertEquals(4, byTransport.window(false), "verbs");
    c.setInt(TransferConfigKeys.WINDOW_KEY, 6);
    TransferConf set = TransferConf.from(c);
    assertEquals(6, set.window(true));
    assertEquals(6, set.window(false));
    c.setInt(TransferConfigKeys.WINDOW_KEY, -1);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> TransferConf.from(c));
    assertTrue(e.getMessage().contains(TransferConfigKeys.WINDOW_KEY), e.getMessage());
  }

  @Test
  void aNegativePullCountIsRefusedNamingTheKey() {
    Configuration c = new Configuration(false);
    c.setInt(TransferConfigKeys.PULLS_KEY, -1);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> TransferConf.from(c));
    assertTrue(e.getMessage().contains(TransferConfigKeys.PULLS_KEY), e.getMessage());
  }

  @Test
  void pullsThatLeaveNoRoomForTheWindowAreRefusedAtStartNamingBothKeys() {
    Configuration c = new Configuration(false);
    // with the smallest default window (4), max.inflight 64
    c.setInt(TransferConfigKeys.PULLS_KEY, 64);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> TransferConf.from(c));
    assertTrue(e.getMessage().contains(TransferConfigKeys.PULLS_KEY + "=64"), e.getMessage());
    assertTrue(e.getMessage().contains(TransportConfigKeys.MAX_INFLIGHT_KEY + "=64"),
        e.getMessage());
    c.setInt(TransportConfigKeys.MAX_INFLIGHT_KEY, 128);
    assertEquals(64, TransferConf.from(c).pulls(true), "room made by raising max.inflight");
  }

  @Test
  void aClientParksWhatLeavesItsWindowRoomWithinMaxInflight() {
    Configuration c = new Configuration(false);
    c.setInt(TransportConfigKeys.MAX_INFLIGHT_KEY, 16);
    TransferConf client = TransferConf.from(c);
    assertEquals(8, client.pullsToPark(8, 4), "all offered fit");
    assertEquals(11, client.pullsToPark(64, 4), "a DataNode configured otherwise: 16 - 4 - 1");
    assertEquals(0, client.pullsToPark(8, 15), "a window that leaves no room");
  }
}
