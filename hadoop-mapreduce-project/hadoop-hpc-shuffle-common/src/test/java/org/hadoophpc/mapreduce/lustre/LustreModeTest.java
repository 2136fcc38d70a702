/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.lustre;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.hadoop.conf.Configuration;
import org.hadoophpc.mapreduce.shuffle.ShuffleConfigKeys;
import org.junit.jupiter.api.Test;

/** Mode selection: our key, HiBD's key, and bad values named. */
class LustreModeTest {

  private static LustreMode mode(String ours, String hibd) {
    Configuration c = new Configuration(false);
    if (ours != null) {
      c.set(ShuffleConfigKeys.LUSTRE_MODE_KEY, ours);
    }
    if (hibd != null) {
      c.set(ShuffleConfigKeys.HIBD_LUSTRE_MODE_KEY, hibd);
    }
    return LustreMode.from(c);
  }

  @Test
  void oursAndHibdsSpellings() {
    assertEquals(LustreMode.OFF, mode(null, null));
    assertEquals(LustreMode.LOCAL_DISKS, mode("local-disks", null));
    assertEquals(LustreMode.NO_LOCAL_DISKS, mode(" No-Local-Disks ", null));
    assertEquals(LustreMode.LOCAL_DISKS, mode(null, "1"));
    assertEquals(LustreMode.NO_LOCAL_DISKS, mode(null, "2"));
    assertEquals(LustreMode.OFF, mode("off", "2"), "our key wins over HiBD's");
  }

  @Test
  void hibdsKeyWorksWithOurDefaultsLoaded() {
    // a task's configuration carries hpc-shuffle-default.xml once ShuffleConf is loaded
    Configuration c = new Configuration(false);
    c.addResource("hpc-shuffle-default.xml");
    c.set(ShuffleConfigKeys.HIBD_LUSTRE_MODE_KEY, "2");
    assertEquals(LustreMode.NO_LOCAL_DISKS, LustreMode.from(c));
  }

  @Test
  void badValuesNameTheirKey() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> mode("lustre", null));
    assertTrue(e.getMessage().contains(ShuffleConfigKeys.LUSTRE_MODE_KEY + "=lustre"),
        e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> mode(null, "3"));
    assertTrue(e.getMessage().contains(ShuffleConfigKeys.HIBD_LUSTRE_MODE_KEY + "=3"),
        e.getMessage());
  }
}
