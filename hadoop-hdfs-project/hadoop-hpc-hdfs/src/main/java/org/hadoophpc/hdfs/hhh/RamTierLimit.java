/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.hhh;

import java.util.Locale;

import org.apache.hadoop.conf.Configuration;

/**
 * How much of the DataNode's locked memory RAM_DISK replicas may fill
 * ({@link HhhConfigKeys#RAM_USAGE_THRESHOLD_KEY}) and what happens to a new block beyond it
 * ({@link HhhConfigKeys#RAM_FULL_ACTION_KEY}). Read once when the DataNode starts; a bad value
 * is an {@link IllegalArgumentException} naming the key.
 */
public final class RamTierLimit {
  private final float threshold;
  private final boolean evicts;

  private RamTierLimit(float threshold, boolean evicts) {
    this.threshold = threshold;
    this.evicts = evicts;
  }

  public static RamTierLimit from(Configuration conf) {
    String key = HhhConfigKeys.RAM_USAGE_THRESHOLD_KEY;
    String text = conf.getTrimmed(key, String.valueOf(HhhConfigKeys.RAM_USAGE_THRESHOLD_DEFAULT));
    float threshold;
    try {
      threshold = Float.parseFloat(text);
    } catch (NumberFormatException e) {
      threshold = Float.NaN;
    }
    if (!(threshold > 0 && threshold <= 1)) {
      throw new IllegalArgumentException(key + "=" + text + " is not a share of the locked"
          + " memory: use a number above 0 and at most 1 (e.g. 0.8; 1 lets RAM_DISK replicas"
          + " fill all of dfs.datanode.max.locked.memory)");
    }
    String actionKey = HhhConfigKeys.RAM_FULL_ACTION_KEY;
    String action = conf.getTrimmed(actionKey, HhhConfigKeys.RAM_FULL_ACTION_DEFAULT)
        .toLowerCase(Locale.ROOT);
    boolean evicts;
    switch (action) {
      case "evict" -> evicts = true;
      case "fallback" -> evicts = false;
      default -> throw new IllegalArgumentException(actionKey + "=" + conf.get(actionKey)
          + " is not an action: use evict (make room by dropping the in-memory copies of"
          + " persisted replicas) or fallback (write new blocks to SSD/DISK)");
    }
    return new RamTierLimit(threshold, evicts);
  }

  /** Whether this is stock HDFS's behaviour: all of the locked memory, evicting. */
  public boolean isStock() {
    return threshold == 1.0f && evicts;
  }

  /** The bytes of a {@code capacity}-byte locked-memory budget RAM_DISK replicas may use. */
  public long limit(long capacity) {
    return threshold == 1.0f ? capacity : (long) Math.floor(capacity * (double) threshold);
  }

  /** Whether persisted replicas are evicted from memory to make room (else: fall back). */
  public boolean evicts() {
    return evicts;
  }

  @Override
  public String toString() {
    return "RAM_DISK replicas use up to " + Math.round(threshold * 100) + "% of the locked"
        + " memory, then " + (evicts ? "evict persisted replicas" : "go to SSD/DISK");
  }
}
