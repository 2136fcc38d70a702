/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.yarn.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.MRConfig;
import org.hadoophpc.mapreduce.shuffle.ShuffleConf;
import org.hadoophpc.mapreduce.shuffle.ShuffleConfigKeys;
import org.hadoophpc.net.TransportConfigKeys;
import org.junit.jupiter.api.Test;

/**
 * Where and whether {@link HpcShuffleHandler} opens its hpc listener, decided from the
 * configuration alone (no transport, no files: these run once, not in every transport's
 * subclass of {@link HpcShuffleHandlerTest}).
 */
class HpcShuffleListenerConfTest {
  /** The settings a tcp NodeManager's service starts from. */
  private static Configuration conf() {
    Configuration c = new Configuration(false);
    c.set(TransportConfigKeys.TRANSPORT_KEY, "tcp");
    return c;
  }

  @Test
  void tlsShuffleKeepsTheHpcListenerOffUnlessVerbsIsDeclaredTrusted() {
    Configuration c = conf();
    assertNull(HpcShuffleHandler.tlsRefusal(c, "tcp", ShuffleConf.from(c)));
    c.setBoolean(MRConfig.SHUFFLE_SSL_ENABLED_KEY, true);
    for (String t : List.of("tcp", "verbs")) {
      String why = HpcShuffleHandler.tlsRefusal(c, t, ShuffleConf.from(c));
      assertTrue(why != null && why.contains(MRConfig.SHUFFLE_SSL_ENABLED_KEY), t + ": " + why);
    }
    c.setBoolean(ShuffleConfigKeys.SSL_VERBS_PLAINTEXT_KEY, true);
    assertNull(HpcShuffleHandler.tlsRefusal(c, "verbs", ShuffleConf.from(c)));
    assertTrue(HpcShuffleHandler.tlsRefusal(c, "tcp", ShuffleConf.from(c)) != null);
  }

  @Test
  void theListenerFollowsTheNodeManagersAddress() {
    ShuffleConf dflt = ShuffleConf.from(new Configuration(false));
    Configuration c = new Configuration(false);
    assertEquals("0.0.0.0", HpcShuffleHandler.bindHost(c, dflt));
    c.set("yarn.nodemanager.address", "0.0.0.0:0");
    assertEquals("0.0.0.0", HpcShuffleHandler.bindHost(c, dflt));
    c.set("yarn.nodemanager.address", "127.0.0.1:45454");
    assertEquals("127.0.0.1", HpcShuffleHandler.bindHost(c, dflt));
    c.set("yarn.nodemanager.bind-host", "10.1.2.3");
    assertEquals("10.1.2.3", HpcShuffleHandler.bindHost(c, dflt));
    c.set(ShuffleConfigKeys.BIND_HOST_KEY, "192.168.0.9");
    assertEquals("192.168.0.9", HpcShuffleHandler.bindHost(c, ShuffleConf.from(c)));
  }
}
