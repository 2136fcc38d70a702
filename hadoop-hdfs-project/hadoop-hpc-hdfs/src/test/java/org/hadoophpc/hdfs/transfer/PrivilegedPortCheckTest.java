/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.hadoop.conf.Configuration;
import org.hadoophpc.hdfs.hhh.HpcDataNode;
import org.junit.jupiter.api.Test;

/**
 * Which DataNode set-ups the transfer plugin refuses: exactly those where Hadoop 3.5.0 skips
 * SASL because the transfer port is privileged.
 */
class PrivilegedPortCheckTest {

  /** A secure DataNode on port 1004 with the plugin, as a jsvc-started DataNode has it. */
  private static Configuration secureOnPrivilegedPort() {
    Configuration c = new Configuration(false);
    c.set("hadoop.security.authentication", "kerberos");
    c.set("dfs.datanode.address", "0.0.0.0:1004");
    c.set("dfs.datanode.plugins", "org.example.Other, " + PrivilegedPortCheck.PLUGIN);
    return c;
  }

  @Test
  void secureDataNodeOnAPrivilegedPortIsRefusedNamingTheKeys() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> PrivilegedPortCheck.checkDataNode(secureOnPrivilegedPort()));
    for (String key : new String[] {"dfs.datanode.address", "dfs.encrypt.data.transfer",
        "dfs.data.transfer.protection", "dfs.hpc.datatransfer.enabled", "dfs.datanode.plugins"}) {
      assertTrue(e.getMessage().contains(key), key + " in: " + e.getMessage());
    }
    assertTrue(e.getMessage().contains("1004"), e.getMessage());
  }

  @Test
  void protectionDoesNotHelpOnAPrivilegedPort() {
    // SaslDataTransferServer skips the handshake for a privileged port before it looks at the
    // protection: the port is still what HDFS trusts.
    Configuration c = secureOnPrivilegedPort();
    c.set("dfs.data.transfer.protection", "privacy");
    assertThrows(IllegalArgumentException.class, () -> PrivilegedPortCheck.checkDataNode(c));
  }

  @Test
  void setUpsWhereThePortIsNotTrustedPass() {
    Configuration encrypted = secureOnPrivilegedPort();
    encrypted.setBoolean("dfs.encrypt.data.transfer", true);
    Configuration simple = secureOnPrivilegedPort();
    simple.set("hadoop.security.authentication", "simple");
    Configuration sasl = secureOnPrivilegedPort();
    sasl.set("dfs.datanode.address", "0.0.0.0:9866");
    sasl.set("dfs.data.transfer.protection", "authentication");
    Configuration ephemeral = secureOnPrivilegedPort();
    ephemeral.set("dfs.datanode.address", "127.0.0.1:0");
    Configuration testing = secureOnPrivilegedPort(); // unprivileged, no SASL: TCP trusts no port
    testing.set("dfs.datanode.address", "0.0.0.0:9866");
    testing.setBoolean("ignore.secure.ports.for.testing", true);
    Configuration off = secureOnPrivilegedPort();
    off.set(TransferConfigKeys.ENABLED_KEY, "false");
    Configuration noPlugin = secureOnPrivilegedPort();
    noPlugin.set("dfs.datanode.plugins", "org.example.Other");
    for (Configuration c : new Configuration[] {encrypted, simple, sasl, ephemeral, testing, off,
        noPlugin}) {
      assertDoesNotThrow(() -> PrivilegedPortCheck.checkDataNode(c));
    }
  }

  @Test
  void thePluginAsksAboutItsBoundPort() {
    Configuration c = secureOnPrivilegedPort();
    assertNotNull(PrivilegedPortCheck.problem(c, 1004));
    assertNull(PrivilegedPortCheck.problem(c, 41004), "an ephemeral port is not privileged");
  }

  @Test
  void hpcDataNodeRefusesToStart() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> HpcDataNode.prepare(secureOnPrivilegedPort()));
    assertTrue(e.getMessage().contains("dfs.encrypt.data.transfer=true"), e.getMessage());
  }

  @Test
  void aBadEnabledValueIsRefused() {
    Configuration c = secureOnPrivilegedPort();
    c.set(TransferConfigKeys.ENABLED_KEY, "yes");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> PrivilegedPortCheck.checkDataNode(c));
    assertTrue(e.getMessage().contains(TransferConfigKeys.ENABLED_KEY), e.getMessage());
  }
}
