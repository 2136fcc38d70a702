/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import static org.hadoophpc.hdfs.transfer.TransferConfigKeys.STREAM_FAILS_WITHOUT_TRANSPORT_DEPRECATED_KEY;
import static org.hadoophpc.hdfs.transfer.TransferConfigKeys.STREAM_FAILS_WITHOUT_TRANSPORT_KEY;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;

import org.apache.hadoop.conf.Configuration;
import org.hadoophpc.conf.ConfigKeysTestBase;
import org.junit.jupiter.api.Test;

/** {@link TransferConfigKeys} and hpc-hdfs-default.xml agree; {@link TransferConf} reads them. */
class TransferConfigKeysTest extends ConfigKeysTestBase {
  TransferConfigKeysTest() {
    super("hpc-hdfs-default.xml", TransferConfigKeys.class);
  }

  @Test
  void defaultsParse() {
    TransferConf c = TransferConf.from(new Configuration(false));
    assertEquals(TransferConf.Enabled.AUTO, c.enabledValue);
    assertFalse(c.streamFailsWithoutTransport);
    assertEquals(0, c.portOffset);
    assertEquals(3000, c.connectTimeoutMs);
    assertEquals(60_000, c.negativeCacheMs);
    assertEquals(128 << 10, c.chunk);
    assertEquals(32, c.window(true));
    assertEquals(4, c.window(false));
    assertEquals(16, c.pulls(true));
    assertEquals(8, c.pulls(false));
    assertEquals(128, c.acceptQueue);
    assertTrue(c.callerReads);
  }

  @Test
  void theDeprecatedStrictNameStillCountsAndTheNewNameWins() {
    Configuration old = new Configuration(false);
    old.setBoolean(STREAM_FAILS_WITHOUT_TRANSPORT_DEPRECATED_KEY, true);
    assertTrue(TransferConf.from(old).streamFailsWithoutTransport, "set under the old name");
    old.setBoolean(STREAM_FAILS_WITHOUT_TRANSPORT_KEY, false);
    assertFalse(TransferConf.from(old).streamFailsWithoutTransport, "the new name set after it");

    // as from the site files: the old name in hdfs-site.xml, the new one in a later resource
    Configuration site = new Configuration(false);
    site.addResource(xml(STREAM_FAILS_WITHOUT_TRANSPORT_DEPRECATED_KEY, "true"));
    assertTrue(TransferConf.from(site).streamFailsWithoutTransport, "old name in a site file");
    site.addResource(xml(STREAM_FAILS_WITHOUT_TRANSPORT_KEY, "false"));
    assertFalse(TransferConf.from(site).streamFailsWithoutTransport, "new name in a later file");
  }

  private static ByteArrayInputStream xml(String key, String value) {
    return new ByteArrayInputStream(("<configuration><property><name>" + key + "</name><value>"
        + value + "</value></property></configuration>").getBytes(StandardCharsets.UTF_8));
  }
}
