/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net;

import static org.hadoophpc.net.TransportConfigKeys.OPEN_FAILS_WITHOUT_VERBS_DEPRECATED_KEY;
import static org.hadoophpc.net.TransportConfigKeys.OPEN_FAILS_WITHOUT_VERBS_KEY;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;

import org.apache.hadoop.conf.Configuration;
import org.hadoophpc.conf.ConfigKeysTestBase;
import org.junit.jupiter.api.Test;

/** {@link TransportConfigKeys} and hpc-default.xml agree; {@link TransportConf} reads them. */
class TransportConfigKeysTest extends ConfigKeysTestBase {
  TransportConfigKeysTest() {
    super("hpc-default.xml", TransportConfigKeys.class);
  }

  @Test
  void defaultsParse() {
    TransportConf c = TransportConf.from(new Configuration(false));
    assertEquals(TransportConf.Kind.AUTO, c.kind());
    assertFalse(c.openFailsWithoutVerbs());
    assertEquals(16 << 20, c.maxMessageSize());
    assertEquals(256L << 20, c.bufferPoolMax());
  }

  @Test
  void theDeprecatedStrictNameStillCountsAndTheNewNameWins() {
    Configuration old = new Configuration(false);
    old.setBoolean(OPEN_FAILS_WITHOUT_VERBS_DEPRECATED_KEY, true);
    assertTrue(TransportConf.from(old).openFailsWithoutVerbs(), "set under the old name");
    old.setBoolean(OPEN_FAILS_WITHOUT_VERBS_KEY, false);
    assertFalse(TransportConf.from(old).openFailsWithoutVerbs(), "the new name set after it");

    // as from the site files: the old name in core-site.xml, the new one in a later resource
    Configuration site = new Configuration(false);
    site.addResource(xml(OPEN_FAILS_WITHOUT_VERBS_DEPRECATED_KEY, "true"));
    assertTrue(TransportConf.from(site).openFailsWithoutVerbs(), "old name in a site file");
    site.addResource(xml(OPEN_FAILS_WITHOUT_VERBS_KEY, "false"));
    assertFalse(TransportConf.from(site).openFailsWithoutVerbs(), "new name in a later file");
  }

  /** A site file setting {@code key}. */
  static ByteArrayInputStream xml(String key, String value) {
    return new ByteArrayInputStream(("<configuration><property><name>" + key + "</name><value>"
        + value + "</value></property></configuration>").getBytes(StandardCharsets.UTF_8));
  }
}
