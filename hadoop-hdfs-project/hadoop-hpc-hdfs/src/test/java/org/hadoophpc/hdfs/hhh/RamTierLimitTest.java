/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.hhh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;

/** The RAM tier's usage threshold and full action: stock by default, bad values named. */
class RamTierLimitTest {

  private static RamTierLimit limit(String threshold, String action) {
    Configuration c = new Configuration(false);
    if (threshold != null) {
      c.set(HhhConfigKeys.RAM_USAGE_THRESHOLD_KEY, threshold);
    }
    if (action != null) {
      c.set(HhhConfigKeys.RAM_FULL_ACTION_KEY, action);
    }
    return RamTierLimit.from(c);
  }

  @Test
  void unsetIsStockHdfs() {
    RamTierLimit l = limit(null, null);
    assertTrue(l.isStock());
    assertTrue(l.evicts());
    assertEquals(1L << 30, l.limit(1L << 30));
  }

  @Test
  void aThresholdIsAShareOfTheLockedMemory() {
    RamTierLimit l = limit("0.75", null);
    assertFalse(l.isStock());
    assertTrue(l.evicts());
    assertEquals(3L << 20, l.limit(4L << 20));
    assertEquals(0, limit("0.5", null).limit(1));
    assertEquals(4L << 20, limit("1", "evict").limit(4L << 20));
    assertTrue(limit("1", "evict").isStock());
  }

  @Test
  void fallbackNeverEvicts() {
    RamTierLimit l = limit(null, " FallBack ");
    assertFalse(l.evicts());
    assertFalse(l.isStock(), "even at threshold 1, fallback is not stock's eviction");
    assertTrue(l.toString().contains("100%") && l.toString().contains("SSD/DISK"), l.toString());
  }

  @Test
  void badValuesNameTheKey() {
    for (String bad : new String[] {"0", "-0.5", "1.5", "80%", "NaN", "lots"}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> limit(bad, null), bad);
      assertTrue(e.getMessage().startsWith(HhhConfigKeys.RAM_USAGE_THRESHOLD_KEY + "=" + bad),
          e.getMessage());
    }
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> limit(null, "spill"));
    assertTrue(e.getMessage().startsWith(HhhConfigKeys.RAM_FULL_ACTION_KEY + "=spill"),
        e.getMessage());
    assertTrue(e.getMessage().contains("evict") && e.getMessage().contains("fallback"));
  }
}
