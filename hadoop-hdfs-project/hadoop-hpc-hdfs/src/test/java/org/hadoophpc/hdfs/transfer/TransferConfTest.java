/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;

/** The PULLs a DataNode offers per stream: by transport unless set. */
class TransferConfTest {
  @Test
  void pullsFollowTheTransportUnlessSet() {
    Configuration c = new Configuration(false);
    TransferConf byTransport = TransferConf.from(c);
    assertEquals(16, byTransport.pulls(true), "tcp (answers from files itself)");
    assertEquals(8, byTransport.pulls(false), "verbs");
    c.setInt(TransferConf.PULLS_KEY, 5);
    TransferConf set = TransferConf.from(c);
    assertEquals(5, set.pulls(true));
    assertEquals(5, set.pulls(false));
  }

  @Test
  void aNegativePullCountIsRefusedNamingTheKey() {
    Configuration c = new Configuration(false);
    c.setInt(TransferConf.PULLS_KEY, -1);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> TransferConf.from(c));
    assertTrue(e.getMessage().contains(TransferConf.PULLS_KEY), e.getMessage());
  }
}
