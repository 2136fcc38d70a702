/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.hhh;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.apache.hadoop.conf.Configuration;
import org.hadoophpc.conf.ConfigKeysTestBase;
import org.junit.jupiter.api.Test;

/** {@link HhhConfigKeys} and hpc-hhh-default.xml agree; HiBD's spellings have no default. */
class HhhConfigKeysTest extends ConfigKeysTestBase {
  HhhConfigKeysTest() {
    super("hpc-hhh-default.xml", HhhConfigKeys.class,
        HhhConfigKeys.HIBD_MODE_KEY, HhhConfigKeys.HIBD_LUSTRE_PATH_KEY);
  }

  @Test
  void emptyOursDefersToHibdsSpelling() {
    Configuration c = new Configuration(false);
    assertEquals(HhhMode.OFF, HhhMode.from(c));
    c.set(HhhConfigKeys.HIBD_MODE_KEY, "In-Memory");
    c.set(HhhConfigKeys.MODE_KEY, HhhConfigKeys.MODE_DEFAULT);
    assertEquals(HhhMode.HHH_M, HhhMode.from(c));
  }
}
