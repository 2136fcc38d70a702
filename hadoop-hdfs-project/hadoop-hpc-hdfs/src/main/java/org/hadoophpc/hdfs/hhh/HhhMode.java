/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.hhh;

import java.util.Locale;

import org.apache.hadoop.conf.Configuration;

/** The HHH storage modes (see {@link HhhConfigKeys#MODE_KEY}). */
public enum HhhMode {
  OFF("off", null, null),
  /** RAM disk + SSD + HDD. */
  HHH("hhh", "Default", "ONE_SSD"),
  /** Everything written to memory first, persisted lazily. */
  HHH_M("hhh-m", "In-Memory", "LAZY_PERSIST"),
  /** In memory, persisted lazily to the Lustre mount. */
  HHH_L("hhh-l", "Lustre", "LAZY_PERSIST");

  private final String value;
  private final String hibd;
  private final String rootPolicy;

  HhhMode(String value, String hibd, String rootPolicy) {
    this.value = value;
    this.hibd = hibd;
    this.rootPolicy = rootPolicy;
  }

  /** The value of {@link HhhConfigKeys#MODE_KEY}. */
  public String value() {
    return value;
  }

  /** The storage policy the mode gives {@code /} (null: left alone). */
  public String rootPolicy() {
    return rootPolicy;
  }

  /** Whether new blocks are written to RAM_DISK first (and the RAM tier is required). */
  public boolean inMemory() {
    return this == HHH_M || this == HHH_L;
  }

  /**
   * The configured mode: {@link HhhConfigKeys#MODE_KEY} (ours, case-insensitive), else HiBD's
   * {@link HhhConfigKeys#HIBD_MODE_KEY}, else {@link #OFF}.
   *
   * @throws IllegalArgumentException naming the key and the accepted values
   */
  public static HhhMode from(Configuration conf) {
    String ours = conf.getTrimmed(HhhConfigKeys.MODE_KEY, HhhConfigKeys.MODE_DEFAULT);
    if (!ours.isEmpty()) {
      for (HhhMode m : values()) {
        if (m.value.equalsIgnoreCase(ours)) {
          return m;
        }
      }
      throw new IllegalArgumentException(HhhConfigKeys.MODE_KEY + "=" + ours
          + " is not a mode: use off, hhh, hhh-m or hhh-l");
    }
    String hibd = conf.getTrimmed(HhhConfigKeys.HIBD_MODE_KEY); // no default: unset
    if (hibd != null && !hibd.isEmpty()) {
      for (HhhMode m : values()) {
        if (m.hibd != null && m.hibd.toLowerCase(Locale.ROOT).equals(
            hibd.toLowerCase(Locale.ROOT))) {
          return m;
        }
      }
      throw new IllegalArgumentException(HhhConfigKeys.HIBD_MODE_KEY + "=" + hibd
          + " is not a mode: use Default, In-Memory or Lustre (or " + HhhConfigKeys.MODE_KEY
          + " = hhh, hhh-m, hhh-l)");
    }
    return OFF;
  }

  @Override
  public String toString() {
    return value;
  }
}
